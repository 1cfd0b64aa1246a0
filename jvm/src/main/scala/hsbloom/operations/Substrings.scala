package hsbloom.operations

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.types.StringType

import hsbloom.{BFIndexConfig, HsbloomException}
import hsbloom.format.{LogEntry, SourceFile}
import hsbloom.indexing.{BuildInput, EncryptedColumns, GramDensity}
import hsbloom.shim.Collations
import hsbloom.substring.Grams

/** What a substring filter (`BFIndexConfig.substringColumns`, docs/substring.md) needs of its source. */
object Substrings {
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)

  /** The n `chooseNgramSizes` tries, smallest first: 2-grams are left to those who ask (few strings lack them all). */
  val CandidateSizes: Seq[Int] = 3 to Grams.MaxN
  /** The files whose grams are counted to choose n: the sharing measured needs a few, the scan costs each one. */
  val SampledFiles = 8
  /**
   * The most sharing (`GramDensity.Counts.shared`) at which a filter still discriminates: about the share of a
   * column's grams that every file holds beyond its own, so that most needles have a gram outside it
   * (docs/design/substring.md#choosing-n).
   */
  val SharingGoal = 0.15

  /**
   * Warns of each substring filter `built` (an ACTIVE entry) holds whose grams nearly fill every file's filter
   * (`ColumnSummary.FilledSharing`): it rules files out only for the column's rarest grams, so it may cost its build
   * and its bytes for little. Returns the warnings.
   */
  def warnFilled(built: LogEntry): Seq[String] = {
    val warnings = for {
      s <- built.summary.toSeq
      config <- built.config.toSeq
      g <- config.storedColumns.filter(_.ngram.isDefined)
      advice <- s.columns.collectFirst { case (g.key, c) => c }.flatMap(_.filledAdvice(g.key, s.numFiles)).toSeq
    } yield s"hsbloom: index '${config.indexName}': $advice; unless its " +
      "needles are rare values (a rare domain among common ones), create the index with " +
      s"ngram_size='auto' (an n the column's gram density asks for) or a larger n than ${g.ngram.get}, or drop " +
      s"'${g.source}' from substring_columns"
    warnings.foreach(w => log.warn(w))
    warnings
  }

  /**
   * `config` with an n for each substring column that has none: the smallest `CandidateSizes` whose grams the
   * files share at most `SharingGoal`, measured by one scan of up to `SampledFiles` of `files` spread over them
   * (`GramDensity`); `DefaultNgramSize` where it cannot be measured (fewer than two files with values) or where
   * no n reaches the goal (then the filter keeps nearly every file whatever n, and a warning says so).
   */
  def chooseNgramSizes(df: DataFrame, config: BFIndexConfig, files: Seq[SourceFile]): BFIndexConfig = {
    val columns = config.ngramSizesToChoose
    if (columns.isEmpty) return config
    val withData = files.filter(_.size > 0).sortBy(_.path)
    val k = math.min(SampledFiles, withData.size)
    val sample = (0 until k).map(i => withData(i * withData.size / k))
    val counts = if (sample.size < 2) Map.empty[(String, Int), GramDensity.Counts]
      else GramDensity.measure(BuildInput.of(df, Some(sample.map(_.path))), columns, CandidateSizes)
    val chosen = columns.map { c =>
      val shared = CandidateSizes.flatMap(n => counts.get((c, n)).flatMap(_.shared).map(n -> _))
      val measured = shared.map { case (n, s) => f"$n: $s%.2f" }.mkString(", ")
      val n = shared.collectFirst { case (n, s) if s <= SharingGoal => n }
      n match {
        case Some(found) => log.info(s"hsbloom: index '${config.indexName}': substring column '$c' gets $found-grams " +
          s"(how much ${sample.size} files share each n's grams, 0 to 1: $measured; goal at most $SharingGoal)")
        case None if shared.isEmpty => log.info(s"hsbloom: index '${config.indexName}': substring column '$c' gets " +
          s"${BFIndexConfig.DefaultNgramSize}-grams: fewer than two files hold its values, nothing to measure")
        case None => log.warn(s"hsbloom: index '${config.indexName}': substring column '$c': its files share most " +
          s"of their grams at every n from ${CandidateSizes.head} to ${CandidateSizes.last} ($measured), so its " +
          "substring filters will keep nearly every file; drop it from substring_columns, or sort the table by it")
      }
      c -> n.getOrElse(BFIndexConfig.DefaultNgramSize)
    }
    config.copy(ngramSizes = config.ngramSizes ++ chosen)
  }

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
