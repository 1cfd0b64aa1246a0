package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import hsbloom.HsbloomException
import hsbloom.api.HyperspaceApi

/**
 * `DROP BLOOMFILTER INDEX [IF EXISTS] name [FORCE]`: `deleteIndex` (a soft delete: RESTORE undoes it, VACUUM
 * frees the name). No rows, as Spark's DROP statements; IF EXISTS makes a missing index success.
 */
final case class DropIndexCommand(name: String, ifExists: Boolean, force: Boolean) extends LeafRunnableCommand {
  override def run(sparkSession: SparkSession): Seq[Row] = {
    try new HyperspaceApi(sparkSession).deleteIndex(name, force)
    catch { case e: HsbloomException if ifExists && e.condition == HsbloomException.IndexNotFound => () }
    Seq.empty
  }
}
