package hsbloom

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

/**
 * One index as its latest log entry describes it (`Hyperspace.index(name)`, `DESCRIBE BLOOMFILTER INDEX`).
 * Everything comes from that entry, so describing an index reads a few small files and never its tables;
 * `damage` is what this JVM found damaged in its data (queries' checksums, verify).
 */
final case class IndexInfo(
    name: String,
    state: String,
    config: BFIndexConfig,
    source: IndexInfo.SourceInfo,
    /** The newest data directory `v__=N` of the version. */
    dataVersion: Long,
    dataPath: String,
    /** Every data directory the version reads, oldest first (more than one after incremental refreshes). */
    dataPaths: Seq[String],
    numFiles: Long,
    /** The false-positive probability of each file's filter (the largest any was built with). */
    fileFpp: Double,
    /** The false-positive probability of the global filter and of the zones. */
    sharedFpp: Double,
    /** None until a build has completed. */
    numRows: Option[Long],
    indexBytes: Option[Long],
    columns: Seq[IndexInfo.ColumnStatistics],
    logId: Long,
    lastOperation: String,
    /** When the latest entry was written, ms since the epoch. */
    updatedMs: Long,
    staleness: IndexInfo.Staleness,
    /** "<file>: <problem>": an unreadable log entry, or index files whose checksums failed in this JVM. */
    damage: Seq[String],
    /** Source files whose filters were adopted from their own Parquet Bloom filters; None when unknown. */
    adoptedFiles: Option[Long],
    /** Per reason, how many files the latest build hashed instead of adopting. */
    hashedFiles: Map[String, Long],
    /** The version is in an older data layout: queries do not use it until a full refresh. */
    needsFullRefresh: Boolean)

object IndexInfo {
  /** What the index was built from and how it is read (the files are listed by the index data, not here). */
  final case class SourceInfo(
      format: String,
      rootPaths: Seq[String],
      /** The read options that decide values, verbatim (keys in lower case). */
      options: Map[String, String],
      /** Other read options, as salted HMACs: compared, never written in clear (docs/security.md). */
      hashedOptions: Map[String, String],
      optionsSalt: Option[String],
      table: Option[String],
      deltaVersion: Option[Long],
      /** Column name and Spark type, in the DataFrame's order. */
      schema: Seq[(String, String)],
      partitionColumns: Seq[String],
      readFacts: Map[String, String],
      /** The schema given to the reader, as JSON, or None. */
      userSchema: Option[String]) {
    /** A one-line description for listings, e.g. "delta default.events @ version 3". */
    def describe: String = {
      val where = table.getOrElse(rootPaths.mkString(", "))
      s"$format $where${deltaVersion.map(v => s" @ version $v").getOrElse("")}"
    }
  }

  /** What the build measured for one indexed column over all source files. */
  final case class ColumnStatistics(column: String, dataType: String, numRows: Long, numNulls: Long, ndv: Long,
      fileFilterBytes: Long, globalFilterBytes: Long)

  /** How far the index data is behind its source, as far as the log knows (a quick refresh records changes). */
  final case class Staleness(
      appendedFilesNotIndexed: Long,
      deletedFilesStillIndexed: Long,
      globalFilterDeletedFiles: Long,
      dataDeltaVersion: Option[Long],
      checkedDeltaVersion: Option[Long],
      checkedMs: Option[Long]) {
    def isCurrent: Boolean = appendedFilesNotIndexed == 0 && deletedFilesStillIndexed == 0 && globalFilterDeletedFiles == 0
  }

  private val columnStatistics = new StructType()
    .add("column", StringType).add("type", StringType).add("num_rows", LongType).add("num_nulls", LongType)
    .add("ndv", LongType).add("file_filter_bytes", LongType).add("global_filter_bytes", LongType)

  /** The one row of `DESCRIBE BLOOMFILTER INDEX`: its columns, in order (Python's facade reads them by name). */
  val schema: StructType = new StructType()
    .add("name", StringType, nullable = false)
    .add("state", StringType, nullable = false)
    .add("indexed_columns", ArrayType(StringType, containsNull = false), nullable = false)
    .add("expected_num_items", LongType)
    .add("fpp", DoubleType) // as configured; null: sized from the number of files
    .add("global_filter", BooleanType, nullable = false)
    .add("granularity", StringType, nullable = false)
    .add("substring_columns", ArrayType(StringType, containsNull = false), nullable = false)
    .add("ngram_sizes", MapType(StringType, IntegerType, valueContainsNull = false), nullable = false)
    .add("substring_case_insensitive", BooleanType, nullable = false)
    .add("source_format", StringType, nullable = false)
    .add("source_root_paths", ArrayType(StringType, containsNull = false), nullable = false)
    .add("source_options", MapType(StringType, StringType, valueContainsNull = false), nullable = false)
    .add("source_hashed_options", MapType(StringType, StringType, valueContainsNull = false), nullable = false)
    .add("source_options_salt", StringType)
    .add("source_table", StringType)
    .add("source_delta_version", LongType)
    .add("source_schema", ArrayType(new StructType().add("name", StringType).add("type", StringType)), nullable = false)
    .add("source_partition_columns", ArrayType(StringType, containsNull = false), nullable = false)
    .add("source_read_facts", MapType(StringType, StringType, valueContainsNull = false), nullable = false)
    .add("source_user_schema", StringType)
    .add("data_version", LongType, nullable = false)
    .add("data_path", StringType, nullable = false)
    .add("data_paths", ArrayType(StringType, containsNull = false), nullable = false)
    .add("num_files", LongType, nullable = false)
    .add("file_fpp", DoubleType, nullable = false)
    .add("shared_fpp", DoubleType, nullable = false)
    .add("num_rows", LongType)
    .add("index_bytes", LongType)
    .add("columns", ArrayType(columnStatistics, containsNull = false), nullable = false)
    .add("log_id", LongType, nullable = false)
    .add("last_operation", StringType, nullable = false)
    .add("updated_ms", LongType, nullable = false)
    .add("appended_files_not_indexed", LongType, nullable = false)
    .add("deleted_files_still_indexed", LongType, nullable = false)
    .add("global_filter_deleted_files", LongType, nullable = false)
    .add("data_delta_version", LongType)
    .add("checked_delta_version", LongType)
    .add("checked_ms", LongType)
    .add("damage", ArrayType(StringType, containsNull = false), nullable = false)
    .add("adopted_files", LongType)
    .add("hashed_files", MapType(StringType, LongType, valueContainsNull = false), nullable = false)
    .add("needs_full_refresh", BooleanType, nullable = false)

  private def boxed(value: Option[Long]): Any = value.map(Long.box).orNull

  def toRow(i: IndexInfo): Row = Row(
    i.name, i.state, i.config.indexedColumns, boxed(i.config.expectedNumItems), i.config.fpp.map(Double.box).orNull,
    i.config.globalFilter, i.config.granularity, i.config.substringColumns, i.config.ngramSizes,
    i.config.substringCaseInsensitive,
    i.source.format, i.source.rootPaths, i.source.options, i.source.hashedOptions, i.source.optionsSalt.orNull,
    i.source.table.orNull, boxed(i.source.deltaVersion), i.source.schema.map { case (n, t) => Row(n, t) },
    i.source.partitionColumns, i.source.readFacts, i.source.userSchema.orNull,
    i.dataVersion, i.dataPath, i.dataPaths, i.numFiles, i.fileFpp, i.sharedFpp, boxed(i.numRows), boxed(i.indexBytes),
    i.columns.map(c => Row(c.column, c.dataType, c.numRows, c.numNulls, c.ndv, c.fileFilterBytes, c.globalFilterBytes)),
    i.logId, i.lastOperation, i.updatedMs,
    i.staleness.appendedFilesNotIndexed, i.staleness.deletedFilesStillIndexed, i.staleness.globalFilterDeletedFiles,
    boxed(i.staleness.dataDeltaVersion), boxed(i.staleness.checkedDeltaVersion), boxed(i.staleness.checkedMs),
    i.damage, boxed(i.adoptedFiles), i.hashedFiles, i.needsFullRefresh)

  /** The rows of `SHOW BLOOMFILTER INDEXES` (`Hyperspace.indexes()`): one per index. */
  val listingSchema: StructType = new StructType()
    .add("name", StringType, nullable = false)
    .add("indexed_columns", ArrayType(StringType, containsNull = false), nullable = false)
    .add("state", StringType, nullable = false)
    .add("source", StringType)
    .add("num_files", LongType)
    .add("index_size", LongType)
    .add("fpp", DoubleType)
    .add("damage", StringType)

  def listingRow(i: IndexInfo): Row = Row(i.name, i.config.indexedColumns, i.state, i.source.describe, i.numFiles,
    boxed(i.indexBytes), i.fileFpp, if (i.damage.isEmpty) null else i.damage.mkString("; "))

  /** The rows of `SHOW FILES IN BLOOMFILTER INDEX` (`Hyperspace.indexFiles`): one per source file the version holds. */
  val filesSchema: StructType = new StructType()
    .add("file_id", LongType, nullable = false)
    .add("file_path", StringType, nullable = false)
    .add("file_size", LongType, nullable = false)
    .add("file_mtime", LongType, nullable = false)
    .add("filter_source", StringType, nullable = false) // "hashed", or "adopted" from the file's own Bloom filters

  /** An index none of whose stable log entries is readable: listed as UNREADABLE with its damage. */
  def unreadableRow(name: String, problems: Seq[String]): Row =
    Row(name, Seq.empty[String], "UNREADABLE", null, null, null, null, problems.mkString("; "))
}
