package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.hsbloom.Datasets
import org.apache.spark.sql.types.{StringType, StructType}

import hsbloom.api.HyperspaceApi

/**
 * `EXPLAIN BLOOMFILTER query`: `explainString` of the query (the plans with and without hsbloom, the indexes
 * its scans use, files before and after pruning), one row with one column `plan`. The query is held as Spark's
 * parser parsed it and becomes a DataFrame only when the statement runs; it is planned, not run.
 */
final case class ExplainQueryCommand(query: LogicalPlan) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = DataTypeUtils.toAttributes(ExplainQueryCommand.schema)

  override def run(sparkSession: SparkSession): Seq[Row] =
    Seq(Row(new HyperspaceApi(sparkSession).explainString(Datasets.ofRows(sparkSession, query))))
}

object ExplainQueryCommand {
  /** The result of both EXPLAIN BLOOMFILTER forms: the report as one string. */
  val schema: StructType = new StructType().add("plan", StringType, nullable = false)
}
