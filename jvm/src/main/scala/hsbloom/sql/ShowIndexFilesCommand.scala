package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types.{LongType, StringType, StructType}

import hsbloom.Hyperspace

/**
 * `SHOW FILES IN BLOOMFILTER INDEX name`: `indexFiles(name)`, one row per source file the index's current
 * version holds. The rows are collected on the driver (a command returns rows), which is what SHOW means; for
 * an index of millions of files, `Hyperspace.indexFiles` is the DataFrame to query instead.
 */
final case class ShowIndexFilesCommand(name: String) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = DataTypeUtils.toAttributes(ShowIndexFilesCommand.schema)

  override def run(sparkSession: SparkSession): Seq[Row] = {
    val files = new Hyperspace(sparkSession).indexFiles(name)
    files.select(ShowIndexFilesCommand.schema.fieldNames.toSeq.map(col): _*).collect().toSeq
  }
}

object ShowIndexFilesCommand {
  /** The columns of `indexFiles`, in order: `filter_source` is "hashed" or "adopted". */
  val schema: StructType = new StructType()
    .add("file_id", LongType)
    .add("file_path", StringType)
    .add("file_size", LongType)
    .add("file_mtime", LongType)
    .add("filter_source", StringType)
}
