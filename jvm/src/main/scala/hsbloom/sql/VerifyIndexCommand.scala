package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import hsbloom.VerifyResult
import hsbloom.api.HyperspaceApi

/**
 * `VERIFY BLOOMFILTER INDEX name`: `verifyIndex`, one row (`VerifyResult.schema`). A damaged index is a row
 * with `healthy` false and its problems, not an error: finding damage is what the statement is for.
 */
final case class VerifyIndexCommand(name: String) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = DataTypeUtils.toAttributes(VerifyResult.schema)

  override def run(sparkSession: SparkSession): Seq[Row] =
    Seq(VerifyResult.toRow(new HyperspaceApi(sparkSession).verifyIndex(name)))
}
