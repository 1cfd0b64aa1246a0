package hsbloom.shim

import org.apache.spark.sql.catalyst.parser.{ParserInterface, SqlStatementSplitResult}

/** Spark 4.3 splits a script into statements through the parser (`splitStatements`): the wrapped parser's split. */
trait StatementSplitting extends ParserInterface {
  protected def delegate: ParserInterface

  override def splitStatements(sqlText: String): SqlStatementSplitResult = delegate.splitStatements(sqlText)
}
