package hsbloom.shim

import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.{DataType, StructType}

/**
 * A SQL parser that parses some statements itself (`ownStatement`) and hands everything else to the parser it
 * wraps, unchanged. Spark's `ParserInterface` gains members from line to line (`parseRoutineParam` in 4.0,
 * `parsePlanWithParameters` in 4.1, `splitStatements` in 4.3), so those come from traits of the shim's version
 * folders, and a subclass (the sql package's parser) is the same on every line.
 */
abstract class DelegatingParser(protected val delegate: ParserInterface)
  extends ParserInterface with ParameterizedParsing with RoutineParsing with StatementSplitting {

  /** The plan of one of this parser's own statements, or None; `parse` is the wrapped parser's, for sub-queries. */
  protected def ownStatement(sqlText: String, parse: String => LogicalPlan): Option[LogicalPlan]

  override def parsePlan(sqlText: String): LogicalPlan =
    ownStatement(sqlText, delegate.parsePlan).getOrElse(delegate.parsePlan(sqlText))

  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier = delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier =
    delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] = delegate.parseMultipartIdentifier(sqlText)
  override def parseQuery(sqlText: String): LogicalPlan = delegate.parseQuery(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)
}
