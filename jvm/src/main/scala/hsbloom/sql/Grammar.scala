package hsbloom.sql

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import hsbloom.RefreshResult

/**
 * The grammar of hsbloom's statements (docs/sql.md), as parser combinators over `Tokens`. `claim` decides
 * whether a statement is hsbloom's at all from its first keywords (`Statement.claim`); `statement` then parses
 * all of it into its command. After a claim the statement is committed (`~!`): a wrong word fails where it
 * stands, naming what was expected there, instead of another reading being tried.
 */
private[sql] object Grammar extends Tokens {

  /** The statement `sql` is, when it starts with one of hsbloom's claims. */
  def claim(sql: String): Option[Statement] = parse(claims, sql) match {
    case Success(statement, _) => Some(statement)
    case _ => None
  }

  /**
   * Parses `sql`, a `kind` statement, into its command; `query` parses the query of `EXPLAIN BLOOMFILTER query`,
   * given the offset in `sql` it starts at.
   */
  def parseStatement(kind: Statement, sql: String, query: Int => LogicalPlan): ParseResult[LogicalPlan] =
    parse(statement(kind, query), sql)

  private def words(spelling: String): Parser[Any] =
    spelling.split(' ').toSeq.map(_.split('|').toSeq.map(kw).reduce(_ | _)).reduce[Parser[Any]](_ ~ _)

  private lazy val claims: Parser[Statement] = Statement.all.map(s => words(s.claim).map(_ => s)).reduce(_ | _)

  private def statement(kind: Statement, query: Int => LogicalPlan): Parser[LogicalPlan] = kind match {
    case Statement.Create => create
    case Statement.Refresh => refresh
    case Statement.Drop => drop
    case Statement.Restore => onIndex(Statement.Restore, RestoreIndexCommand.apply)
    case Statement.Vacuum => onIndex(Statement.Vacuum, VacuumIndexCommand.apply)
    case Statement.Cancel => onIndex(Statement.Cancel, CancelIndexCommand.apply)
    case Statement.Show => show
    case Statement.Describe => onIndex(Statement.Describe, DescribeIndexCommand.apply)
    case Statement.Verify => onIndex(Statement.Verify, VerifyIndexCommand.apply)
    case Statement.Files => onIndex(Statement.Files, ShowIndexFilesCommand.apply)
    case Statement.Explain => explain(query)
  }

  /** The statement's words up to INDEX: the claim, then INDEX if the claim stops short of it. */
  private def upToIndex(kind: Statement): Parser[Any] =
    if (kind.claim.endsWith("INDEX")) words(kind.claim) else words(kind.claim) ~! kw("INDEX")

  private val theEnd = "the end of the statement"

  private def onIndex(kind: Statement, command: String => LogicalPlan): Parser[LogicalPlan] =
    upToIndex(kind) ~>! indexName <~! end(theEnd) ^^ command

  /** An optional clause that ends the statement: after it the end must follow, before it either may. */
  private def lastly[T](clause: Parser[T], expected: String): Parser[Option[T]] =
    opt(clause).flatMap(c => end(if (c.isDefined) theEnd else s"$expected or $theEnd").map(_ => c))

  private lazy val ifNotExists: Parser[Boolean] = opt(kw("IF") ~! kw("NOT") ~! kw("EXISTS")).map(_.isDefined)
  private lazy val ifExists: Parser[Boolean] = opt(kw("IF") ~! kw("EXISTS")).map(_.isDefined)

  private lazy val create: Parser[LogicalPlan] =
    upToIndex(Statement.Create) ~>! ifNotExists ~! indexName ~! (kw("ON") ~>! source) ~! columns ~!
      lastly(options, "OPTIONS") ^^ {
        case exists ~ name ~ table ~ cols ~ opts =>
          CreateIndexCommand(table, name, cols, opts.getOrElse(Nil), exists)
      }

  private lazy val mode: Parser[String] =
    kw("FULL").map(_ => RefreshResult.Full) | kw("INCREMENTAL").map(_ => RefreshResult.Incremental) |
      kw("QUICK").map(_ => RefreshResult.Quick)

  private lazy val refresh: Parser[LogicalPlan] =
    upToIndex(Statement.Refresh) ~>! indexName ~! lastly(mode, "FULL, INCREMENTAL, QUICK") ^^ {
      case name ~ m => RefreshIndexCommand(name, m.getOrElse(RefreshResult.Full))
    }

  private lazy val drop: Parser[LogicalPlan] =
    upToIndex(Statement.Drop) ~>! ifExists ~! indexName ~! lastly(kw("FORCE"), "FORCE") ^^ {
      case exists ~ name ~ force => DropIndexCommand(name, exists, force.isDefined)
    }

  private lazy val show: Parser[LogicalPlan] =
    words(Statement.Show.claim) ~>! kw("INDEXES") ~>! lastly(kw("ON") ~>! source, "ON") ^^
      (table => ShowIndexesCommand(table))

  /** `EXPLAIN BLOOMFILTER ANALYZE statement` (kept as text), or `EXPLAIN BLOOMFILTER query` (parsed by `query`). */
  private def explain(query: Int => LogicalPlan): Parser[LogicalPlan] = {
    val analyze = kw("ANALYZE") ~>! rest.withFailureMessage("expected the statement to run after ANALYZE") ^^
      (text => ExplainAnalyzeCommand(text.replaceAll("""[\s;]+\z""", "")))
    val explained = offset <~ rest.withFailureMessage("expected a query, or ANALYZE and a statement") ^^
      (start => ExplainQueryCommand(query(start)))
    words(Statement.Explain.claim) ~>! (analyze | explained)
  }

  /** A table identifier of one or more parts, optionally at a Delta version or timestamp. */
  private lazy val source: Parser[LogicalPlan] = {
    val name = tablePart ~ rep(sym(".", "'.'") ~>! tablePart) ^^ { case first ~ more => first +: more }
    val version = kw("VERSION") ~>! kw("AS") ~>! kw("OF") ~>!
      (number | stringLiteral).withFailureMessage("expected a version number") ^^ SourceTable.AtVersion
    val timestamp = kw("TIMESTAMP") ~>! kw("AS") ~>! kw("OF") ~>!
      stringLiteral.withFailureMessage("expected a timestamp string, e.g. '2024-01-31 12:00:00'") ^^
      SourceTable.AtTimestamp
    name ~ opt(version | timestamp) ^^ { case parts ~ travel => SourceTable.plan(parts, travel) }
  }

  /** One or more `item`s separated by commas; after a comma another item must follow. */
  private def list[T](item: Parser[T]): Parser[Seq[T]] =
    item ~ rep(sym(",", "','") ~>! item) ^^ { case first ~ more => first +: more }

  /** The columns in parentheses. None, `()`, parses: `BFIndexConfig` refuses it when the statement runs, as it does
   *  every other bad config (a parse-time error would be rewrapped by a parser in front: Delta's). */
  private lazy val columns: Parser[Seq[String]] =
    sym("(", "'(' and the columns to index") ~>! (sym(")", "')'") ^^^ Nil | list(columnName) <~! sym(")", "',' or ')'"))

  private lazy val options: Parser[Seq[(String, OptionValue)]] = {
    val key = (tablePart | stringLiteral)
      .withFailureMessage(s"expected an option: ${IndexOptions.Known.mkString(", ")}")
    val value = (number.map(OptionValue.Number) | kw("TRUE").map(_ => OptionValue.Bool(true)) |
      kw("FALSE").map(_ => OptionValue.Bool(false)) | stringLiteral.map(OptionValue.Str))
      .withFailureMessage("expected a value: a number, true, false or a 'string'")
    val option = key ~! (sym("=", "'='") ~>! value) ^^ { case k ~ v => k -> v }
    kw("OPTIONS") ~>! sym("(", "'('") ~>! list(option) <~! sym(")", "',' or ')'")
  }
}
