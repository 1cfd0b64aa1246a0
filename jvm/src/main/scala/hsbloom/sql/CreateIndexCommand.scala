package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import hsbloom.{BFIndexConfig, HsbloomException, Hyperspace}

/**
 * `CREATE BLOOMFILTER INDEX [IF NOT EXISTS] name ON table (column, ...) [OPTIONS (...)]`: `createIndex` over
 * what `source` reads (see `SourceTable`). No rows, as Spark's CREATE statements. With IF NOT EXISTS an index
 * of that name, in any state, is success and is left as it is.
 */
final case class CreateIndexCommand(source: LogicalPlan, config: BFIndexConfig, ifNotExists: Boolean)
  extends LeafRunnableCommand {

  override def run(sparkSession: SparkSession): Seq[Row] = {
    try new Hyperspace(sparkSession).createIndex(SourceTable.dataFrame(sparkSession, source), config)
    catch { case e: HsbloomException if ifNotExists && e.condition == HsbloomException.IndexExists => () }
    Seq.empty
  }
}
