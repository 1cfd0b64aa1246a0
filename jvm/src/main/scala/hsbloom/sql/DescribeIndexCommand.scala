package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import hsbloom.IndexInfo
import hsbloom.api.HyperspaceApi

/**
 * `DESCRIBE BLOOMFILTER INDEX name`: `index(name)` as one row of `IndexInfo.schema` (a wide row rather than
 * Spark's DESCRIBE key/value rows, so that a client reads each field by name and with its type).
 */
final case class DescribeIndexCommand(name: String) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = DataTypeUtils.toAttributes(IndexInfo.schema)

  override def run(sparkSession: SparkSession): Seq[Row] =
    Seq(IndexInfo.toRow(new HyperspaceApi(sparkSession).index(name)))
}
