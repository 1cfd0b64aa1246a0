package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import hsbloom.api.HyperspaceApi

/**
 * `RESTORE BLOOMFILTER INDEX name`: `restoreIndex`. Makes a DELETED index ACTIVE again. No rows, as Spark's
 * DDL statements.
 */
final case class RestoreIndexCommand(name: String) extends LeafRunnableCommand {
  override def run(sparkSession: SparkSession): Seq[Row] = {
    new HyperspaceApi(sparkSession).restoreIndex(name)
    Seq.empty
  }
}
