package hsbloom.api

import scala.util.control.NonFatal

import org.apache.spark.sql.{DataFrame, SparkSession}

import hsbloom.{BFIndexConfig, HsbloomException, IndexInfo, RefreshResult, VerifyResult}
import hsbloom.catalog.IndexCatalog
import hsbloom.conf.HsbloomConf
import hsbloom.explain.{PruningExplain, StatementExplain}
import hsbloom.operations.{CreateIndex, ForceDelete, StateChanges, SystemPath, VerifyIndex}
import hsbloom.refresh.RefreshIndex
import hsbloom.shim.ClassicDataset

/**
 * The API every client goes through, the body of `hsbloom.Hyperspace` (the public class Scala and Java callers
 * construct, in the root package above it): the SQL statements (`hsbloom.sql`) call it, and, through them, Python on
 * a classic or a Spark Connect session. Each method is one operation of `hsbloom.operations` or `hsbloom.refresh`, or
 * one read of `hsbloom.catalog` or `IndexDescriptions`, and every failure is an `HsbloomException` (docs/scala.md).
 */
class HyperspaceApi(spark: SparkSession) {

  /**
   * Index `config.indexedColumns` of the files `df` scans (a plain scan of a Parquet, ORC, CSV or JSON path, a
   * catalog table over files, a temporary view of one, or a Delta table at a version). Checks everything it can
   * before writing anything; a failed build is rolled back.
   */
  def createIndex(df: DataFrame, config: BFIndexConfig): Unit =
    operation("create", Some(config.indexName))(CreateIndex(df, config): Unit)

  /** Soft delete of an ACTIVE index (queries stop using it); with `force`, mark it as not existing whatever its log holds. */
  def deleteIndex(name: String, force: Boolean = false): Unit =
    operation("delete", Some(name))((if (force) ForceDelete(spark, name) else StateChanges.delete(spark, name)): Unit)

  def deleteIndex(name: String): Unit = deleteIndex(name, force = false)

  /** Make a DELETED index ACTIVE again. */
  def restoreIndex(name: String): Unit = operation("restore", Some(name))(StateChanges.restore(spark, name): Unit)

  /** Remove a DELETED index's data for good (freeing its name), or directories an ACTIVE one no longer reads. */
  def vacuumIndex(name: String): Unit = operation("vacuum", Some(name))(StateChanges.vacuum(spark, name): Unit)

  /** Return an index whose operation was interrupted to the stable state that operation started from. */
  def cancel(name: String): Unit = operation("cancel", Some(name))(StateChanges.cancel(spark, name): Unit)

  /** Bring an index up to date with its source: `mode` is "full", "incremental" or "quick" (docs/refresh.md). */
  def refreshIndex(name: String, mode: String = RefreshResult.Full): RefreshResult =
    operation("refresh", Some(name))(RefreshIndex(spark, name, mode))

  def refreshIndex(name: String): RefreshResult = refreshIndex(name, RefreshResult.Full)

  /** Every index under the system path, one row each (`IndexInfo.listingSchema`). */
  def indexes(): DataFrame = reading("listing indexes", None)(IndexDescriptions.listing(spark))

  /** One index, as its latest log entry describes it. */
  def index(name: String): IndexInfo = reading("reading", Some(name))(IndexDescriptions.index(spark, name))

  /**
   * The source files the current version of `name` holds, one row each: `file_id`, `file_path`, `file_size`,
   * `file_mtime`, `filter_source` ("hashed", or "adopted" from the file's own Parquet Bloom filters).
   */
  def indexFiles(name: String): DataFrame = reading("reading", Some(name))(IndexDescriptions.files(spark, name))

  /** The source files whose filters were adopted from their own Parquet Bloom filters, sorted. */
  def adoptedFiles(name: String): Seq[String] = reading("reading", Some(name)) {
    IndexDescriptions.files(spark, name).where(s"filter_source = 'adopted'").select("file_path").collect()
      .map(_.getString(0)).toSeq.distinct.sorted
  }

  /** Read everything index `name` holds and check it against its checksums. */
  def verifyIndex(name: String): VerifyResult = operation("verify", Some(name))(VerifyIndex(spark, name))

  /** The plan of `df` with and without hsbloom, the indexes its scans use, and the files before and after pruning. */
  def explainString(df: DataFrame): String = PruningExplain.explain(ClassicDataset.of(df))

  /** Prints `explainString(df)`. */
  def explain(df: DataFrame): Unit = println(explainString(df))

  /**
   * Runs the SQL `statement` (it changes the table if it is a DELETE, UPDATE or MERGE) and says what hsbloom
   * pruned while it ran and what the join rules decided.
   */
  def runExplainedString(statement: String): String = StatementExplain.run(spark, statement)

  /** Prints `runExplainedString(statement)`. */
  def runExplained(statement: String): Unit = println(runExplainedString(statement))

  /**
   * Runs one operation: every failure that is not an `HsbloomException` becomes `OperationFailed` (cause chained),
   * and queries of this JVM see the operation's effect at once (other processes within the catalog's refresh
   * interval: docs/pruning.md).
   */
  private def operation[T](what: String, name: Option[String])(body: => T): T =
    try reading(what, name)(body) finally IndexCatalog.invalidate()

  private def reading[T](what: String, name: Option[String])(body: => T): T =
    try body catch {
      case e: HsbloomException => throw e
      case NonFatal(e) =>
        val subject = name.map(n => s"$what of index '$n'").getOrElse(what)
        throw HsbloomException.operationFailed(s"$subject failed: ${SystemPath.firstLine(e, 500)}. Check " +
          s"${HsbloomConf.SystemPath.key} and the source; verifying the index reports damaged index files, and " +
          "docs/troubleshooting.md lists the ways to recover (drop it with FORCE, vacuum it, then create it again)", e)
    }
}
