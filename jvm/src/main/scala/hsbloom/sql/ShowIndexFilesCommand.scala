package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import hsbloom.IndexInfo
import hsbloom.api.HyperspaceApi

/**
 * `SHOW FILES IN BLOOMFILTER INDEX name`: `indexFiles(name)`, one row per source file the index's current
 * version holds. The rows are collected on the driver (a command returns rows), which is what SHOW means; for
 * an index of millions of files, `Hyperspace.indexFiles` is the DataFrame to query instead.
 */
final case class ShowIndexFilesCommand(name: String) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = DataTypeUtils.toAttributes(IndexInfo.filesSchema)

  override def run(sparkSession: SparkSession): Seq[Row] =
    new HyperspaceApi(sparkSession).indexFiles(name).collect().toSeq
}
