package hsbloom.sql

import java.util.Locale

import scala.util.matching.Regex
import scala.util.parsing.combinator.RegexParsers

import org.apache.spark.sql.catalyst.util.SparkParserUtils

/**
 * The tokens of hsbloom's statements, spelled as Spark spells them: keywords in any case, identifiers,
 * backquoted identifiers (a backquote doubled inside), string literals, numbers; whitespace and comments
 * between them skipped. Each token fails with a message that names what was expected ("expected INDEX"),
 * which the parser shows with the statement's form.
 */
private[sql] trait Tokens extends RegexParsers {
  override val whiteSpace: Regex = """(?:\s|--[^\r\n]*|/\*[\s\S]*?\*/)+""".r

  /** A keyword, in any case, not followed by more identifier characters. */
  def kw(word: String): Parser[String] =
    ("(?i)" + word + "(?![A-Za-z0-9_])").r.map(_ => word).withFailureMessage(s"expected $word")

  /** A punctuation symbol; `expected` says what could stand here. */
  def sym(symbol: String, expected: String): Parser[String] =
    literal(symbol).withFailureMessage(s"expected $expected")

  /** Letters, digits and '_', not all digits (that is a number), as Spark's IDENTIFIER token. */
  private val identifier: Parser[String] = "[A-Za-z0-9_]*[A-Za-z_][A-Za-z0-9_]*".r

  /** `name`, with a backquote doubled inside: Spark's quoted identifier. */
  val backquoted: Parser[String] =
    "`(?:[^`]|``)*`".r.map(q => q.substring(1, q.length - 1).replace("``", "`"))

  /** A string literal in single or double quotes, unescaped as Spark unescapes it. */
  val stringLiteral: Parser[String] =
    """'(?:[^'\\]|\\[\s\S])*'|"(?:[^"\\]|\\[\s\S])*"""".r.map(SparkParserUtils.unescapeSQLString(_))

  /** An integer or decimal number, as written (its key decides how it is read). */
  val number: Parser[String] =
    """[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?(?![A-Za-z0-9_])""".r.withFailureMessage("expected a number")

  /**
   * Words that end a clause of some statement: an unquoted index name cannot be one, so that a name left out
   * is reported as missing rather than the next keyword being taken for it.
   */
  private val clauseKeywords = Set("ON", "IF", "FORCE", "FULL", "INCREMENTAL", "QUICK", "OPTIONS")

  /** An index name: an identifier, a backquoted name or a string; '.' and '-' only when quoted. */
  val indexName: Parser[String] = backquoted | stringLiteral | Parser { in =>
    val at = in.drop(handleWhiteSpace(in.source, in.offset) - in.offset)
    identifier(in) match {
      case Success(name, _) if clauseKeywords(name.toUpperCase(Locale.ROOT)) =>
        Failure(s"expected an index name (to name an index ${name.toUpperCase(Locale.ROOT)}, quote it: `$name`)", at)
      case Success(_, next) if !next.atEnd && (next.first == '.' || next.first == '-') =>
        Error(s"expected the end of the index name: a name with '.' or '-' must be quoted, as in " +
          s"`${wordAt(at, "[A-Za-z0-9_.\\-]+")}`", next)
      case _: NoSuccess => Failure("expected an index name (an identifier, a `backquoted` name or a 'string')", at)
      case ok => ok
    }
  }

  /** A column name: an identifier or a backquoted name; top-level only. */
  val columnName: Parser[String] = backquoted | Parser { in =>
    val at = in.drop(handleWhiteSpace(in.source, in.offset) - in.offset)
    identifier(in) match {
      case Success(_, next) if !next.atEnd && next.first == '.' =>
        Error(s"expected ',' or ')': only top-level columns can be indexed (a column whose name contains '.' is " +
          s"written in backquotes: `${wordAt(at, "[A-Za-z0-9_.]+")}`)", next)
      case failed: NoSuccess => Failure("expected a column name", failed.next)
      case ok => ok
    }
  }

  /** The text matching `pattern` at `in`, for a message. */
  private def wordAt(in: Input, pattern: String): String =
    pattern.r.findPrefixOf(in.source.subSequence(in.offset, in.source.length)).getOrElse("")

  /** One part of a table identifier: an identifier or a backquoted name (e.g. parquet.`/data/events`). */
  val tablePart: Parser[String] =
    (backquoted | identifier).withFailureMessage("expected a table name (an identifier or a `backquoted` name)")

  /** The end of the statement (trailing semicolons allowed); `expected` says what else could follow. */
  def end(expected: String): Parser[Unit] =
    """(?:;|\s|--[^\r\n]*|/\*[\s\S]*?\*/)*\z""".r.map(_ => ()).withFailureMessage(s"expected $expected")

  /** The offset the next token starts at (after whitespace and comments), consuming nothing. */
  val offset: Parser[Int] = Parser(in => success(handleWhiteSpace(in.source, in.offset))(in))

  /** Everything up to the end of the statement, at least one character. */
  val rest: Parser[String] = """[\s\S]+""".r
}
