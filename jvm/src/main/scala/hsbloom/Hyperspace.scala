package hsbloom

import org.apache.spark.sql.{DataFrame, SparkSession}

/**
 * Create, list and manage the Bloom filter indexes of a session's system path: the one API every client goes
 * through. Scala and Java call it directly; the SQL statements (`hsbloom.sql`) and, through them, Python on a
 * classic or a Spark Connect session call it too. Each method is one operation of `hsbloom.operations` or one
 * read of `hsbloom.catalog`, and every failure is an `HsbloomException` (docs/scala.md).
 *
 * {{{
 *   val hs = new hsbloom.Hyperspace(spark)
 *   hs.createIndex(spark.read.parquet("/data/events"), BFIndexConfig("events_ids", Seq("user_id")))
 *   hs.indexes().show()
 * }}}
 */
class Hyperspace(spark: SparkSession) {

  /**
   * Index `config.indexedColumns` of the files `df` scans (a plain scan of a Parquet, ORC, CSV or JSON path, a
   * catalog table over files, a temporary view of one, or a Delta table at a version). Checks everything it can
   * before writing anything; a failed build is rolled back.
   */
  def createIndex(df: DataFrame, config: BFIndexConfig): Unit = ???

  /** Soft delete of an ACTIVE index (queries stop using it); with `force`, mark it as not existing whatever its log holds. */
  def deleteIndex(name: String, force: Boolean = false): Unit = ???

  def deleteIndex(name: String): Unit = deleteIndex(name, force = false)

  /** Make a DELETED index ACTIVE again. */
  def restoreIndex(name: String): Unit = ???

  /** Remove a DELETED index's data for good (freeing its name), or directories an ACTIVE one no longer reads. */
  def vacuumIndex(name: String): Unit = ???

  /** Return an index whose operation was interrupted to the stable state that operation started from. */
  def cancel(name: String): Unit = ???

  /** Bring an index up to date with its source: `mode` is "full", "incremental" or "quick" (docs/refresh.md). */
  def refreshIndex(name: String, mode: String = RefreshResult.Full): RefreshResult = ???

  def refreshIndex(name: String): RefreshResult = refreshIndex(name, RefreshResult.Full)

  /** Every index under the system path, one row each (`IndexInfo.listingSchema`). */
  def indexes(): DataFrame = ???

  /** One index, as its latest log entry describes it. */
  def index(name: String): IndexInfo = ???

  /**
   * The source files the current version of `name` holds, one row each: `file_id`, `file_path`, `file_size`,
   * `file_mtime`, `filter_source` ("hashed", or "adopted" from the file's own Parquet Bloom filters).
   */
  def indexFiles(name: String): DataFrame = ???

  /** The source files whose filters were adopted from their own Parquet Bloom filters, sorted. */
  def adoptedFiles(name: String): Seq[String] = ???

  /** Read everything index `name` holds and check it against its checksums. */
  def verifyIndex(name: String): VerifyResult = ???

  /** The plan of `df` with and without hsbloom, the indexes its scans use, and the files before and after pruning. */
  def explainString(df: DataFrame): String = ???

  /** Prints `explainString(df)`. */
  def explain(df: DataFrame): Unit = println(explainString(df))

  /**
   * Runs the SQL `statement` (it changes the table if it is a DELETE, UPDATE or MERGE) and says what hsbloom
   * pruned while it ran and what the join rules decided.
   */
  def runExplainedString(statement: String): String = ???

  /** Prints `runExplainedString(statement)`. */
  def runExplained(statement: String): Unit = println(runExplainedString(statement))
}
