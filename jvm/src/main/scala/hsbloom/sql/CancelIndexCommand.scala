package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import hsbloom.api.HyperspaceApi

/**
 * `CANCEL BLOOMFILTER INDEX name`: `cancel`. Returns an index whose operation was interrupted to the stable
 * state that operation started from. No rows, as Spark's DDL statements.
 */
final case class CancelIndexCommand(name: String) extends LeafRunnableCommand {
  override def run(sparkSession: SparkSession): Seq[Row] = {
    new HyperspaceApi(sparkSession).cancel(name)
    Seq.empty
  }
}
