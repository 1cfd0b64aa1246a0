package hsbloom.sql

import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.trees.Origin

import hsbloom.shim.ParseErrors

/**
 * A malformed hsbloom statement as Spark reports a malformed statement: a `ParseException` of class
 * PARSE_SYNTAX_ERROR, with the line and position and the statement marked under "== SQL ==", so that SQL
 * clients (and PySpark's `ParseException`) treat it as any syntax error. Its hint says what was expected where
 * it failed and shows the statement's form:
 *
 * {{{
 *   [PARSE_SYNTAX_ERROR] Syntax error at or near 'x': expected INDEX. The form is: DROP BLOOMFILTER INDEX
 *   [IF EXISTS] name [FORCE]. SQLSTATE: 42601 (line 1, pos 17)
 * }}}
 */
private[sql] object SyntaxError {
  private val token = """`(?:[^`]|``)*`?|'(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|[A-Za-z0-9_]+|\S""".r

  /** The error of `sql` at `offset` (where the failing token starts, or before whitespace leading to it). */
  def apply(sql: String, offset: Int, expected: String, form: String): ParseException = {
    val start = Grammar.whiteSpace.findPrefixMatchOf(sql.substring(offset)).map(offset + _.end).getOrElse(offset)
    val near = token.findPrefixOf(sql.substring(start)).map(t => s"'${t.take(40)}'").getOrElse("end of input")
    val lineStart = sql.lastIndexOf('\n', start - 1) + 1
    val line = sql.substring(0, start).count(_ == '\n') + 1
    ParseErrors(sql, Origin(line = Some(line), startPosition = Some(start - lineStart)), "PARSE_SYNTAX_ERROR",
      Map("error" -> near, "hint" -> s": $expected. The form is: $form"))
  }
}
