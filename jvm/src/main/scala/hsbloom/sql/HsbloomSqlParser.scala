package hsbloom.sql

import org.apache.spark.sql.catalyst.parser.{ParseException, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import hsbloom.shim.DelegatingParser

/**
 * The session's SQL parser with hsbloom's statements added (docs/sql.md): a statement that starts with one of
 * hsbloom's claims (`Statement`) is parsed by `Grammar` into its command, and must then be well formed (a
 * `ParseException` naming what was expected and the statement's form otherwise); every other statement, and
 * every other kind of text, goes to the parser it wraps, unchanged. The extension injects it, so it wraps
 * Spark's parser, or an extension's injected before it (Delta's, when Delta is listed first). What it hands on,
 * and how, is the shim's `DelegatingParser` (Spark's parser interface differs between lines).
 */
class HsbloomSqlParser(wrapped: ParserInterface) extends DelegatingParser(wrapped) {

  override protected def ownStatement(sqlText: String, parse: String => LogicalPlan): Option[LogicalPlan] =
    hsbloomStatement(sqlText, parse)

  /**
   * hsbloom's command for `sqlText`, or None when the statement is not hsbloom's. `parse` is the wrapped
   * parser's statement parsing, for the query of EXPLAIN BLOOMFILTER.
   */
  def hsbloomStatement(sqlText: String, parse: String => LogicalPlan): Option[LogicalPlan] =
    Option(sqlText).flatMap(Grammar.claim).map { kind =>
      Grammar.parseStatement(kind, sqlText, start => explainedQuery(sqlText, start, parse)) match {
        case Grammar.Success(command, _) => command
        case failed: Grammar.NoSuccess => throw SyntaxError(sqlText, failed.next.offset, failed.msg, kind.form)
      }
    }

  /**
   * The query of `EXPLAIN BLOOMFILTER query`, from `start` on, parsed by the wrapped parser. It is parsed with
   * the statement's leading text blanked out (line breaks kept), so that Spark's errors point at the line and
   * position in the statement as written. It must be a query: a command would run as soon as it became a
   * DataFrame, which explaining must not do; `EXPLAIN BLOOMFILTER ANALYZE` is the form that runs statements.
   */
  private def explainedQuery(sqlText: String, start: Int, parse: String => LogicalPlan): LogicalPlan = {
    val blanked = sqlText.substring(0, start).map(c => if (c == '\n' || c == '\r') c else ' ') +
      sqlText.substring(start)
    val plan = try parse(blanked) catch { case e: ParseException => throw e.withCommand(sqlText) }
    try delegate.parseQuery(blanked.replaceAll("[\\s;]+\\z", "")) // a query's text has no trailing ';'
    catch {
      case _: ParseException => throw SyntaxError(sqlText, start, "expected a query (SELECT, WITH, FROM, TABLE or " +
        "VALUES); EXPLAIN BLOOMFILTER ANALYZE runs a statement and says what it pruned", Statement.Explain.form)
    }
    plan
  }
}
