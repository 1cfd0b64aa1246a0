package hsbloom.operations

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.types.StringType

import hsbloom.{BFIndexConfig, HsbloomException}
import hsbloom.indexing.EncryptedColumns
import hsbloom.shim.Collations

/** What a substring filter (`BFIndexConfig.substringColumns`, docs/substring.md) needs of its source. */
object Substrings {
  /**
   * Refuses, before anything is written, substring columns a substring filter cannot serve: a column that is not a
   * string of the binary collation (a collation's matching is not its bytes'), and any substring column of a source
   * read with a Parquet crypto factory (its grams would be written in plaintext beside an encrypted column).
   */
  def refuseUnfit(df: DataFrame, config: BFIndexConfig): Unit = {
    if (config.substringColumns.isEmpty) return
    val schema = df.schema
    config.substringColumns.foreach { c =>
      schema(c).dataType match {
        case s: StringType if Collations.isBinary(s) =>
        case other => throw HsbloomException.invalidConfig(s"substring_columns: column '$c' has type " +
          s"${other.simpleString}; a substring filter serves string columns of the default (binary) collation only")
      }
    }
    val keyed = EncryptedColumns.readConf(df).exists(_.getTrimmed(EncryptedColumns.CryptoFactory, "").nonEmpty)
    if (keyed) {
      throw HsbloomException.encryptedSource("substring_columns: this source is read with a Parquet crypto factory " +
        s"(${EncryptedColumns.CryptoFactory}), and substring filters are not sealed under a column's key yet, so " +
        "their n-grams would be written in plaintext: index its columns without substring_columns. Nothing was written")
    }
  }
}
