package hsbloom.shim

import org.apache.spark.sql.catalyst.analysis.{NameParameterizedQuery, PosParameterizedQuery}
import org.apache.spark.sql.catalyst.parser.{NamedParameterContext, ParameterContext, ParserInterface,
  PositionalParameterContext}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * Spark 4.1 and later parse a statement with its arguments (`spark.sql(text, args)`) through
 * `parsePlanWithParameters`. A `DelegatingParser`'s own statements are claimed there too, and the query one of
 * them holds (EXPLAIN BLOOMFILTER's) gets the arguments with it, as the parameterized query Spark's analyzer binds
 * when the query is planned: a command's query is not a child the analyzer would bind them in.
 */
trait ParameterizedParsing extends ParserInterface {
  protected def delegate: ParserInterface
  protected def ownStatement(sqlText: String, parse: String => LogicalPlan): Option[LogicalPlan]

  override def parsePlanWithParameters(sqlText: String, context: ParameterContext): LogicalPlan =
    ownStatement(sqlText, text => withArguments(delegate.parsePlanWithParameters(text, context), context))
      .getOrElse(delegate.parsePlanWithParameters(sqlText, context))

  private def withArguments(query: LogicalPlan, context: ParameterContext): LogicalPlan = context match {
    case NamedParameterContext(arguments) if arguments.nonEmpty =>
      NameParameterizedQuery(query, arguments.keys.toSeq, arguments.values.toSeq)
    case PositionalParameterContext(arguments) if arguments.nonEmpty => PosParameterizedQuery(query, arguments)
    case _ => query
  }
}
