package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import hsbloom.{BFIndexConfig, HsbloomException}
import hsbloom.api.HyperspaceApi

/**
 * `CREATE BLOOMFILTER INDEX [IF NOT EXISTS] name ON table (column, ...) [OPTIONS (...)]`: `createIndex` over
 * what `source` reads (see `SourceTable`). No rows, as Spark's CREATE statements. With IF NOT EXISTS an index
 * of that name, in any state, is success and is left as it is.
 */
final case class CreateIndexCommand(source: LogicalPlan, name: String, columns: Seq[String],
    options: Seq[(String, OptionValue)], ifNotExists: Boolean) extends LeafRunnableCommand {

  /**
   * The statement's config, checked when the statement runs: an error thrown while parsing would reach the user
   * rewrapped by any parser in front of hsbloom's (Delta's turns it into an internal error).
   */
  def config: BFIndexConfig = IndexOptions.config(name, columns, options)

  override def run(sparkSession: SparkSession): Seq[Row] = {
    try new HyperspaceApi(sparkSession).createIndex(SourceTable.dataFrame(sparkSession, source), config)
    catch { case e: HsbloomException if ifNotExists && e.condition == HsbloomException.IndexExists => () }
    Seq.empty
  }
}
