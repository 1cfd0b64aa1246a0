package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import hsbloom.api.HyperspaceApi

/**
 * `VACUUM BLOOMFILTER INDEX name`: `vacuumIndex`. Removes a DELETED index's data for good (freeing its name),
 * or the data directories an ACTIVE one no longer reads. No rows, as Spark's DDL statements.
 */
final case class VacuumIndexCommand(name: String) extends LeafRunnableCommand {
  override def run(sparkSession: SparkSession): Seq[Row] = {
    new HyperspaceApi(sparkSession).vacuumIndex(name)
    Seq.empty
  }
}
