package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import hsbloom.api.HyperspaceApi

/**
 * `EXPLAIN BLOOMFILTER ANALYZE statement`: `runExplainedString`, which runs the statement (like PostgreSQL's
 * EXPLAIN ANALYZE: a DELETE, UPDATE or MERGE changes the table) and reports what hsbloom pruned while it ran;
 * one row, column `plan`. The statement is kept as text, as given: `spark.sql` parses it when it runs.
 */
final case class ExplainAnalyzeCommand(statement: String) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = DataTypeUtils.toAttributes(ExplainQueryCommand.schema)

  override def run(sparkSession: SparkSession): Seq[Row] =
    Seq(Row(new HyperspaceApi(sparkSession).runExplainedString(statement)))
}
