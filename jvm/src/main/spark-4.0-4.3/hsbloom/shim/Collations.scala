package hsbloom.shim

import org.apache.spark.sql.types.StringType

/** Spark 4's string collations: only the binary one (UTF8_BINARY) compares strings as their bytes. */
object Collations {
  def isBinary(t: StringType): Boolean = t.collationId == StringType.collationId
}
