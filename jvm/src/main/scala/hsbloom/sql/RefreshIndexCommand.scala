package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import hsbloom.RefreshResult
import hsbloom.api.HyperspaceApi

/**
 * `REFRESH BLOOMFILTER INDEX name [FULL | INCREMENTAL | QUICK]`: `refreshIndex`, one row saying what it did
 * (`RefreshResult.schema`): unlike Spark's REFRESH TABLE a refresh has an outcome worth reading, whether it
 * wrote a version and how many files it found changed.
 */
final case class RefreshIndexCommand(name: String, mode: String) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = DataTypeUtils.toAttributes(RefreshResult.schema)

  override def run(sparkSession: SparkSession): Seq[Row] =
    Seq(RefreshResult.toRow(new HyperspaceApi(sparkSession).refreshIndex(name, mode)))
}
