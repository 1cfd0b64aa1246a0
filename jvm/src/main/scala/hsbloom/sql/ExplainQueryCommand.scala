package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.hsbloom.Datasets
import org.apache.spark.sql.types.{StringType, StructType}

import hsbloom.HsbloomException
import hsbloom.api.HyperspaceApi
import hsbloom.shim.SqlArguments

/**
 * `EXPLAIN BLOOMFILTER query`: `explainString` of the query (the plans with and without hsbloom, the indexes
 * its scans use, files before and after pruning), one row with one column `plan`. The query is held as Spark's
 * parser parsed it and becomes a DataFrame only when the statement runs; it is planned, not run.
 */
final case class ExplainQueryCommand(query: LogicalPlan) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = DataTypeUtils.toAttributes(ExplainQueryCommand.schema)

  override def run(sparkSession: SparkSession): Seq[Row] = {
    if (SqlArguments.unbound(query)) {
      throw HsbloomException.invalidArgument(s"EXPLAIN BLOOMFILTER: spark.sql's arguments did not reach the query " +
        s"it explains (Spark ${sparkSession.version}; they do from Spark 4.1, unless a parser in front of " +
        "hsbloom's, such as Delta's, drops them): write the values into the query")
    }
    Seq(Row(new HyperspaceApi(sparkSession).explainString(Datasets.ofRows(sparkSession, query))))
  }
}

object ExplainQueryCommand {
  /** The result of both EXPLAIN BLOOMFILTER forms: the report as one string. */
  val schema: StructType = new StructType().add("plan", StringType, nullable = false)
}
