package hsbloom

import java.util.Locale

import hsbloom.substring.Grams

/**
 * What to index and how: a Bloom filter index over `indexedColumns` of one source, checked when it is
 * constructed (a bad value is `HsbloomException.InvalidConfig` naming the argument and what it must be).
 *
 *  - `indexName`: letters, digits, '_', '-', '.'; not starting with '.'; no '..'; at most 128 characters. It
 *    becomes a directory name under the system path, so nothing that could leave that directory is allowed.
 *  - `indexedColumns`: top-level column names, at least one, no duplicates.
 *  - `expectedNumItems`: distinct values to size every file's filter for; None sizes each file's filter from
 *    that file's own data.
 *  - `fpp`: the false-positive probability of every filter, strictly between 0 and 1; None sizes each file's
 *    filter from the number of files (`fileFpp`), and the global filter and zones get `DefaultFpp`.
 *  - `globalFilter`: also build one filter per column over all files, for the join rule's filter on the other
 *    side (docs/joins.md); off by default: it doubles a build's time (docs/design/decisions.md).
 *  - `granularity`: "file" (one filter per file and column) or "row_group" (also one per row group of each
 *    Parquet file: a zone).
 *  - `substringColumns`: string columns that also get a substring filter per file, of their values' n-byte grams
 *    (`ngramSizes`), for `LIKE`, `startswith`, `endswith` and `contains` (docs/substring.md); a column may be in both lists.
 *  - `ngramSizes`: the n of each substring column's n-grams, `Grams.MinN` to `Grams.MaxN` bytes; a column without
 *    one gets the n its measured gram density asks for when the index is created (`operations.Substrings.chooseNgramSizes`), and
 *    the log records it. SQL's and Python's `ngram_size` gives every substring column the same n.
 *  - `substringCaseInsensitive`: also a substring filter of each substring column's lower-cased values, for
 *    `ILIKE` and `lower(column)` conditions.
 *
 * The one owner of these rules and of the default fpp: every client's config reaches this constructor (SQL's
 * OPTIONS through `hsbloom.sql.IndexOptions`, Python's `hsbloom.BFIndexConfig` through SQL, which checks only
 * its arguments' types), and its refusal reaches each as `HSBLOOM_INVALID_CONFIG` (Python: `InvalidConfigError`).
 */
final case class BFIndexConfig(
    indexName: String,
    indexedColumns: Seq[String],
    expectedNumItems: Option[Long] = None,
    fpp: Option[Double] = None,
    globalFilter: Boolean = false,
    granularity: String = BFIndexConfig.FileGranularity,
    substringColumns: Seq[String] = Nil,
    ngramSizes: Map[String, Int] = Map.empty,
    substringCaseInsensitive: Boolean = false) {
  BFIndexConfig.validateName(indexName)
  BFIndexConfig.validateColumns(indexedColumns, "indexed_columns", atLeastOne = true)
  BFIndexConfig.validateColumns(substringColumns, "substring_columns", atLeastOne = false)
  if (ngramSizes == null) throw HsbloomException.invalidConfig("ngram_sizes must be a map of column to n, got null")
  ngramSizes.toSeq.sortBy(_._1).foreach { case (c, n) =>
    if (!substringColumns.contains(c)) {
      throw HsbloomException.invalidConfig(s"ngram_size is given for '$c', which is not in substring_columns")
    }
    if (n < Grams.MinN || n > Grams.MaxN) {
      throw HsbloomException.invalidConfig(s"ngram_size must be from ${Grams.MinN} to ${Grams.MaxN} bytes, got $n" +
        (if (ngramSizes.size > 1) s" for '$c'" else ""))
    }
  }
  if (substringCaseInsensitive && substringColumns.isEmpty) {
    throw HsbloomException.invalidConfig("substring_case_insensitive needs substring_columns: name the columns " +
      "whose lower-cased values get a substring filter")
  }
  indexedColumns.find(k => substringColumns.exists(c => BFIndexConfig.isGramKeyOf(k, c))).foreach { k =>
    throw HsbloomException.invalidConfig(s"indexed_columns lists '$k', the name this index gives the substring " +
      "filter of a column in substring_columns; index that column in another index")
  }
  expectedNumItems.foreach { n =>
    if (n <= 0) throw HsbloomException.invalidConfig(s"expected_num_items must be positive, got $n")
  }
  fpp.foreach { p =>
    if (!(p > 0 && p < 1)) throw HsbloomException.invalidConfig(s"fpp must be strictly between 0 and 1, got $p")
  }
  if (!BFIndexConfig.Granularities.contains(granularity)) {
    throw HsbloomException.invalidConfig(
      s"granularity must be one of ${BFIndexConfig.Granularities.map(g => s"'$g'").mkString(", ")}, got '$granularity'")
  }

  /**
   * What the index stores per file, in its tables' `column` field: each indexed column's value filter under the
   * column's name, then each substring column's n-gram filter under `gramKey` (value columns first: the build
   * numbers them as the scan's first columns).
   */
  def storedColumns: Seq[BFIndexConfig.StoredColumn] =
    indexedColumns.map(c => BFIndexConfig.StoredColumn(c, c, None)) ++
      substringColumns.map(c => BFIndexConfig.StoredColumn(BFIndexConfig.gramKey(c, ngramOf(c)), c, Some(ngramOf(c)))) ++
      (if (!substringCaseInsensitive) Nil else substringColumns.map(c => BFIndexConfig.StoredColumn(
        BFIndexConfig.gramKey(s"lower($c)", ngramOf(c)), c, Some(ngramOf(c)), lower = true)))

  /** The n of substring column `c`'s grams; only once given or chosen (create chooses before it builds). */
  def ngramOf(c: String): Int = ngramSizes.getOrElse(c,
    throw new IllegalStateException(s"the n-gram size of substring column '$c' is not chosen yet"))

  /** The substring columns whose n is still to be chosen from their data (`operations.Substrings`). */
  def ngramSizesToChoose: Seq[String] = substringColumns.filterNot(ngramSizes.contains)

  /** The stored columns' keys (`storedColumns`). */
  def storedKeys: Seq[String] = storedColumns.map(_.key)

  /** The source columns the index reads: the indexed ones, then the substring ones not among them. */
  def sourceColumns: Seq[String] = (indexedColumns ++ substringColumns).distinct

  /** Whether the index keeps a filter per row group too (granularity "row_group"). */
  def zones: Boolean = granularity == BFIndexConfig.RowGroupGranularity

  /** The false-positive probability of each file's filter in a version of `numFiles` files. */
  def fileFpp(numFiles: Long): Double =
    fpp.getOrElse(math.min(BFIndexConfig.DefaultFpp, BFIndexConfig.FalseFilesPerProbe / math.max(numFiles, 1L)))

  /** The false-positive probability of the global filter and of the zones (their false positives do not add up). */
  def sharedFpp: Double = fpp.getOrElse(BFIndexConfig.DefaultFpp)

  /** For Java: the same config with another false-positive probability. */
  def withFpp(value: Double): BFIndexConfig = copy(fpp = Some(value))
  def withExpectedNumItems(value: Long): BFIndexConfig = copy(expectedNumItems = Some(value))
  def withGlobalFilter(value: Boolean): BFIndexConfig = copy(globalFilter = value)
  def withGranularity(value: String): BFIndexConfig = copy(granularity = value)
  @annotation.varargs
  def withSubstringColumns(value: String*): BFIndexConfig = copy(substringColumns = value)
  /** Every substring column's n (after `withSubstringColumns`), instead of the n create would choose per column. */
  def withNgramSize(value: Int): BFIndexConfig = copy(ngramSizes = substringColumns.map(_ -> value).toMap)
  def withSubstringCaseInsensitive(value: Boolean): BFIndexConfig = copy(substringCaseInsensitive = value)
}

object BFIndexConfig {
  val MaxNameLength = 128
  /**
   * With `fpp` unset each file's filter gets min(DefaultFpp, FalseFilesPerProbe / files): a probed value then makes
   * about FalseFilesPerProbe false-positive files whatever the number of files (docs/indexes.md#false-positive-rate).
   */
  val DefaultFpp = 0.01
  val FalseFilesPerProbe = 0.05
  val FileGranularity = "file"
  val RowGroupGranularity = "row_group"
  val Granularities: Seq[String] = Seq(FileGranularity, RowGroupGranularity)
  /** The n of a substring column whose gram density cannot be measured (`operations.Substrings.chooseNgramSizes`). */
  val DefaultNgramSize = 3

  /**
   * One filter the index stores per file: under `key`, of source column `source`'s values, or with `ngram` of
   * their `ngram`-byte grams (a substring filter), with `lower` of their lower-cased values' grams.
   */
  final case class StoredColumn(key: String, source: String, ngram: Option[Int], lower: Boolean = false)

  /** The stored key of `column`'s substring filter of `n`-byte grams, e.g. "ngram3(message)", "ngram3(lower(message))". */
  def gramKey(column: String, n: Int): String = s"ngram$n($column)"

  /** Whether `key` is a name `gramKey` may give a substring filter of `column` (of any n, lowered or not). */
  def isGramKeyOf(key: String, column: String): Boolean =
    (Grams.MinN to Grams.MaxN).exists(n => key == gramKey(column, n) || key == gramKey(s"lower($column)", n))

  /** For Java: `BFIndexConfig.of("name", "col1", "col2")`, then `withFpp(...)` and the rest. */
  @annotation.varargs
  def of(indexName: String, indexedColumns: String*): BFIndexConfig = BFIndexConfig(indexName, indexedColumns)

  private val NameChars = java.util.regex.Pattern.compile("[A-Za-z0-9_.\\-]+")

  /** What every refusal of a name ends with: the names that are allowed. */
  private val NameRule = s"an index name is 1 to $MaxNameLength letters A-Z a-z, digits, '_', '-' and '.', not " +
    "starting with '.' and without '..'"

  private def isControl(c: Char): Boolean = c < 32 || (c >= 127 && c < 160)

  /** `c` as a message shows it: a control character as its escape (\u000A), so a message stays one line. */
  private def shown(c: Char): String = if (isControl(c)) f"\\u${c.toInt}%04X" else c.toString

  /** Throws `HsbloomException.InvalidConfig` saying what is wrong with `name`, if anything, and what is allowed. */
  def validateName(name: String): Unit = {
    def bad(why: String): Nothing = throw HsbloomException.invalidConfig(s"$why; $NameRule")
    if (name == null) bad("index_name must be a string, got null")
    if (name.isEmpty) bad("index_name must not be empty")
    if (name.length > MaxNameLength) {
      bad(s"index_name is ${name.length} characters long; at most $MaxNameLength are allowed")
    }
    val quoted = s"'${name.map(shown).mkString}'"
    if (name.contains("/") || name.contains("\\")) bad(s"index_name $quoted contains a path separator ('/' or '\\')")
    if (name.contains("..")) bad(s"index_name $quoted contains '..'")
    val control = name.filter(isControl).distinct
    if (control.nonEmpty) bad(s"index_name $quoted contains control characters ${control.map(shown).mkString(", ")}")
    if (name.startsWith(".")) bad(s"index_name $quoted starts with '.', which would make its directory hidden")
    if (!NameChars.matcher(name).matches()) {
      val others = name.filterNot(c => NameChars.matcher(c.toString).matches()).distinct.sorted
      bad(s"index_name $quoted contains ${others.map(c => s"'$c'").mkString(", ")}")
    }
  }

  private def validateColumns(columns: Seq[String], field: String, atLeastOne: Boolean): Unit = {
    if (columns == null) throw HsbloomException.invalidConfig(s"$field must be a list of column names, got null")
    if (atLeastOne && columns.isEmpty) throw HsbloomException.invalidConfig(s"$field must name at least one column")
    columns.foreach { c =>
      if (c == null || c.isEmpty) throw HsbloomException.invalidConfig(s"$field must hold non-empty strings, got '$c'")
    }
    val duplicates = columns.groupBy(identity).collect { case (c, n) if n.size > 1 => c }.toSeq.sorted
    if (duplicates.nonEmpty) {
      throw HsbloomException.invalidConfig(s"$field lists ${duplicates.mkString("[", ", ", "]")} more than once")
    }
  }

  /** A granularity as given in SQL options (any case). */
  def granularityOf(value: String): String = value.toLowerCase(Locale.ROOT)
}
