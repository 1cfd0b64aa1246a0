package hsbloom.sql

import java.lang.reflect.{InvocationHandler, Method, Proxy}

import scala.collection.mutable

import org.apache.spark.sql.catalyst.analysis.{RelationTimeTravel, UnresolvedRelation}
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.catalyst.parser.{ParseException, ParserInterface}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.SparkSqlParser
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.{BFIndexConfig, HsbloomException, RefreshResult}
import hsbloom.testing.ErrorConditions

/** The SQL statements parse into their commands, fail with the statement's form, and leave Spark's alone. */
class HsbloomSqlParserSuite extends AnyFunSuite {
  private val spark = new SparkSqlParser()
  private val parser = new HsbloomSqlParser(spark)

  private def parse(sql: String): LogicalPlan = parser.parsePlan(sql)

  private def parseError(sql: String): ParseException = intercept[ParseException](parse(sql))

  /** A bad config parses (a parse-time error would be rewrapped by a parser in front: Delta's) and fails to run. */
  private def configError(sql: String): HsbloomException = {
    val e = intercept[HsbloomException](parse(sql).asInstanceOf[CreateIndexCommand].config)
    assert(e.condition == HsbloomException.InvalidConfig, e.getMessage)
    e
  }

  private def create(sql: String): CreateIndexCommand = parse(sql).asInstanceOf[CreateIndexCommand]

  private def relation(parts: String*): UnresolvedRelation = UnresolvedRelation(parts.toSeq)

  test("CREATE: name, source, columns, defaults; keywords in any case") {
    val c = create("CREATE BLOOMFILTER INDEX ids ON events (user_id, trace_id)")
    assert(c.config == BFIndexConfig("ids", Seq("user_id", "trace_id")))
    assert(c.source == relation("events") && !c.ifNotExists)
    assert(create("create BloomFilter index ids on events (user_id)") ==
      CreateIndexCommand(relation("events"), "ids", Seq("user_id"), Nil, ifNotExists = false))
    assert(create("CREATE BLOOMFILTER INDEX IF NOT EXISTS ids ON events (a);").ifNotExists)
    assert(create("create bloomfilter index if not exists ids on events (a)").ifNotExists)
  }

  test("index names: identifiers, backquoted (a backquote doubled) and strings; '.' and '-' when quoted") {
    def name(sql: String): String = create(s"CREATE BLOOMFILTER INDEX $sql ON t (a)").config.indexName
    assert(name("ids_1") == "ids_1" && name("2024_events") == "2024_events")
    assert(name("`events.ids`") == "events.ids")
    assert(name("'events-ids'") == "events-ids")
    assert(name("\"events-ids\"") == "events-ids")
    assert(intercept[HsbloomException](name("`a``b`")).getMessage.contains("'a`b'"))
    assert(parse("DROP BLOOMFILTER INDEX `my.index-2`") == DropIndexCommand("my.index-2", ifExists = false, force = false))
    assert(parse("DROP BLOOMFILTER INDEX `on`") == DropIndexCommand("on", ifExists = false, force = false))
    val unquoted = parseError("DROP BLOOMFILTER INDEX events.ids")
    assert(unquoted.getMessage.contains("a name with '.' or '-' must be quoted, as in `events.ids`"), unquoted.getMessage)
    assert(parseError("DROP BLOOMFILTER INDEX events-ids").getMessage.contains("must be quoted"))
  }

  test("source: multi-part and backquoted identifiers, paths, VERSION AS OF and TIMESTAMP AS OF") {
    def source(table: String): LogicalPlan = create(s"CREATE BLOOMFILTER INDEX i ON $table (a)").source
    assert(source("spark_catalog.default.events") == relation("spark_catalog", "default", "events"))
    assert(source("`spark_catalog`.`default`.`my events`") == relation("spark_catalog", "default", "my events"))
    assert(source("parquet.`/data/events`") == relation("parquet", "/data/events"))
    assert(source("delta.`/data/t` VERSION AS OF 3") == RelationTimeTravel(relation("delta", "/data/t"), None, Some("3")))
    assert(source("t version as of '7'") == RelationTimeTravel(relation("t"), None, Some("7")))
    assert(source("t TIMESTAMP AS OF '2024-01-31 12:00:00'") ==
      RelationTimeTravel(relation("t"), Some(Literal("2024-01-31 12:00:00")), None))
    assert(source("version") == relation("version"), "a table may be named version")
    assert(source("db.2024_events") == relation("db", "2024_events"))
    assert(SourceTable.quoted(Seq("parquet", "/a`b")) == "`parquet`.`/a``b`")
  }

  test("columns may be backquoted; only top-level names") {
    assert(create("CREATE BLOOMFILTER INDEX i ON t (`user id`, `a.b`, `x``y`)").config.indexedColumns ==
      Seq("user id", "a.b", "x`y"))
    val nested = parseError("CREATE BLOOMFILTER INDEX i ON t (s.a)")
    assert(nested.getMessage.contains("only top-level columns can be indexed") && nested.getMessage.contains("`s.a`"),
      nested.getMessage)
  }

  test("OPTIONS: every key, each type it takes, keys in any case") {
    val c = create("CREATE BLOOMFILTER INDEX i ON t (a) OPTIONS (fpp = 0.001, expected_num_items = 1000000, " +
      "global_filter = false, granularity = 'row_group')")
    assert(c.config == BFIndexConfig("i", Seq("a"), Some(1000000L), Some(0.001), globalFilter = false, "row_group"))
    val strings = create("CREATE BLOOMFILTER INDEX i ON t (a) OPTIONS ('FPP' = '1e-3', Expected_Num_Items = '5', " +
      "GLOBAL_FILTER = 'TRUE', `granularity` = 'ROW_GROUP')").config
    assert(strings == BFIndexConfig("i", Seq("a"), Some(5L), Some(0.001), globalFilter = true, "row_group"))
    assert(create("CREATE BLOOMFILTER INDEX i ON t (a) OPTIONS (global_filter = TRUE)").config.globalFilter)
    assert(create("CREATE BLOOMFILTER INDEX i ON t (a) OPTIONS (fpp = .05)").config.fpp.contains(0.05))
    val grams = create("CREATE BLOOMFILTER INDEX i ON t (a) OPTIONS (substring_columns = 'message, `a,b`, `x``y` '," +
      " NGRAM_SIZE = 4)").config
    assert(grams.substringColumns == Seq("message", "a,b", "x`y") && grams.ngramSizes == Map("message" -> 4,
      "a,b" -> 4, "x`y" -> 4))
    // Without ngram_size, or with 'auto', create chooses each column's n from its data.
    assert(create("CREATE BLOOMFILTER INDEX i ON t (a) OPTIONS (substring_columns = 'a')").config.ngramSizesToChoose == Seq("a"))
    assert(create("CREATE BLOOMFILTER INDEX i ON t (a) OPTIONS (substring_columns = 'a', ngram_size = 'AUTO')")
      .config.ngramSizes.isEmpty)
  }

  test("OPTIONS: an unknown key names the known ones; a wrong type or value is HSBLOOM_INVALID_CONFIG") {
    def options(text: String): String = configError(s"CREATE BLOOMFILTER INDEX i ON t (a) OPTIONS ($text)").getMessage
    val unknown = options("fpp = 0.01, numItems = 5")
    assert(unknown.contains("unknown option 'numitems'") &&
      unknown.contains("fpp, expected_num_items, global_filter, granularity, substring_columns, ngram_size"), unknown)
    assert(options("fpp = 'abc'").contains("option fpp must be a number"))
    assert(options("fpp = true").contains("option fpp must be a number"))
    assert(options("fpp = 2").contains("fpp must be strictly between 0 and 1, got 2.0"))
    assert(options("expected_num_items = 1.5").contains("must be a positive integer of at most 9223372036854775807, got 1.5"))
    assert(options("expected_num_items = 0").contains("expected_num_items must be positive"))
    assert(options("global_filter = 1").contains("global_filter must be true or false, got 1"))
    assert(options("granularity = 1").contains("granularity must be a string"))
    assert(options("granularity = 'block'").contains("granularity must be one of 'file', 'row_group'"))
    assert(options("fpp = 0.1, FPP = 0.2").contains("option 'fpp' is given more than once"))
    assert(options("substring_columns = 1").contains("option substring_columns must be a string of column names"))
    Seq("'a,,b'", "'`a'", "'a`b'", "'a,'").foreach { bad =>
      assert(options(s"substring_columns = $bad").contains("option substring_columns must be column names separated"), bad)
    }
    assert(options("substring_columns = 'a, a'").contains("substring_columns lists [a] more than once"))
    assert(options("substring_columns = 'a', ngram_size = 'x'").contains("option ngram_size must be an integer or " +
      "'auto', got 'x'"))
    assert(options("substring_columns = 'a', ngram_size = 1").contains("ngram_size must be from 2 to 8 bytes, got 1"))
    assert(options("ngram_size = 4").contains("option ngram_size needs substring_columns"))
    assert(configError("CREATE BLOOMFILTER INDEX '..x' ON t (a)").getMessage.contains("contains '..'"))
    assert(configError("CREATE BLOOMFILTER INDEX i ON t (a, A, a)").getMessage.contains("more than once"))
    assert(configError("CREATE BLOOMFILTER INDEX i ON t ()").getMessage.contains("must name at least one column"))
    assert(options(s"expected_num_items = ${BigInt(Long.MaxValue) + 1}")
      .contains(s"must be a positive integer of at most ${Long.MaxValue}, got ${BigInt(Long.MaxValue) + 1}"))
    assert(options("fpp = 'NaN'").contains("fpp must be strictly between 0 and 1, got NaN"))
  }

  test("REFRESH: FULL by default, every mode in any case") {
    assert(parse("REFRESH BLOOMFILTER INDEX ids") == RefreshIndexCommand("ids", RefreshResult.Full))
    assert(parse("refresh bloomfilter index ids full") == RefreshIndexCommand("ids", RefreshResult.Full))
    assert(parse("REFRESH BLOOMFILTER INDEX ids INCREMENTAL") == RefreshIndexCommand("ids", RefreshResult.Incremental))
    assert(parse("Refresh BloomFilter Index `a.b` Quick;") == RefreshIndexCommand("a.b", RefreshResult.Quick))
    assert(parse("REFRESH BLOOMFILTER INDEX ids").output.map(_.name) ==
      Seq("name", "mode", "refreshed", "appended_files", "deleted_files", "data_version", "message"))
  }

  test("DROP: IF EXISTS and FORCE") {
    assert(parse("DROP BLOOMFILTER INDEX ids") == DropIndexCommand("ids", ifExists = false, force = false))
    assert(parse("DROP BLOOMFILTER INDEX IF EXISTS ids") == DropIndexCommand("ids", ifExists = true, force = false))
    assert(parse("drop bloomfilter index ids force") == DropIndexCommand("ids", ifExists = false, force = true))
    assert(parse("DROP BLOOMFILTER INDEX if exists 'ids' FORCE") == DropIndexCommand("ids", ifExists = true, force = true))
    assert(parse("DROP BLOOMFILTER INDEX ids").output.isEmpty)
  }

  test("RESTORE, VACUUM, CANCEL, DESCRIBE, VERIFY, SHOW FILES IN") {
    assert(parse("RESTORE BLOOMFILTER INDEX ids") == RestoreIndexCommand("ids"))
    assert(parse("vacuum bloomfilter index `i-1`") == VacuumIndexCommand("i-1"))
    assert(parse("CANCEL BLOOMFILTER INDEX ids") == CancelIndexCommand("ids"))
    assert(parse("DESCRIBE BLOOMFILTER INDEX ids") == DescribeIndexCommand("ids"))
    assert(parse("desc bloomfilter index ids") == DescribeIndexCommand("ids"))
    assert(parse("VERIFY BLOOMFILTER INDEX ids") == VerifyIndexCommand("ids"))
    assert(parse("SHOW FILES IN BLOOMFILTER INDEX ids") == ShowIndexFilesCommand("ids"))
    assert(parse("DESCRIBE BLOOMFILTER INDEX ids").output.map(_.name).take(3) == Seq("name", "state", "indexed_columns"))
    assert(parse("VERIFY BLOOMFILTER INDEX ids").output.map(_.name) ==
      Seq("name", "state", "healthy", "log_entries", "data_paths", "problems", "not_checked"))
    assert(parse("SHOW FILES IN BLOOMFILTER INDEX ids").output.map(_.name) ==
      Seq("file_id", "file_path", "file_size", "file_mtime", "filter_source"))
    Seq("RESTORE", "VACUUM", "CANCEL").foreach(v => assert(parse(s"$v BLOOMFILTER INDEX ids").output.isEmpty))
  }

  test("SHOW BLOOMFILTER INDEXES, and ON a table") {
    assert(parse("SHOW BLOOMFILTER INDEXES") == ShowIndexesCommand(None))
    assert(parse("show bloomfilter indexes on db.events") == ShowIndexesCommand(Some(relation("db", "events"))))
    assert(parse("SHOW BLOOMFILTER INDEXES ON delta.`/t` VERSION AS OF 2") ==
      ShowIndexesCommand(Some(RelationTimeTravel(relation("delta", "/t"), None, Some("2")))))
    assert(parse("SHOW BLOOMFILTER INDEXES").output.map(_.name) ==
      Seq("name", "indexed_columns", "state", "source", "num_files", "index_size", "fpp", "damage"))
  }

  test("EXPLAIN BLOOMFILTER: a query parsed by Spark's parser; ANALYZE keeps the statement's text") {
    val query = "SELECT * FROM events WHERE user_id = 42"
    assert(parse(s"EXPLAIN BLOOMFILTER $query") == ExplainQueryCommand(spark.parsePlan(query)))
    assert(parse(s"explain bloomfilter\n  -- the lookup\n  $query;") == ExplainQueryCommand(spark.parsePlan(query)))
    assert(parse("EXPLAIN BLOOMFILTER ANALYZE DELETE FROM t WHERE id = 1 ;\n") ==
      ExplainAnalyzeCommand("DELETE FROM t WHERE id = 1"))
    assert(parse("EXPLAIN BLOOMFILTER analyze MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE") ==
      ExplainAnalyzeCommand("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE"))
    assert(parse(s"EXPLAIN BLOOMFILTER $query").output.map(_.name) == Seq("plan"))
    assert(parse("EXPLAIN BLOOMFILTER ANALYZE SELECT 1").output.map(_.name) == Seq("plan"))
  }

  test("EXPLAIN BLOOMFILTER: only a query (a command would run); Spark's errors point into the statement") {
    val command = parseError("EXPLAIN BLOOMFILTER DELETE FROM t WHERE id = 1")
    assert(command.getMessage.contains("expected a query") && command.getMessage.contains("ANALYZE"), command.getMessage)
    val bad = parseError("EXPLAIN BLOOMFILTER\nSELECT * FROM t WHERE id =")
    assert(ErrorConditions.of(bad) == "PARSE_SYNTAX_ERROR")
    assert(bad.command.contains("EXPLAIN BLOOMFILTER\nSELECT * FROM t WHERE id ="), "the statement as written")
    assert(bad.start.line.contains(2) && bad.start.startPosition.contains(26), bad.getMessage)
    assert(parseError("EXPLAIN BLOOMFILTER").getMessage.contains("expected a query, or ANALYZE and a statement"))
    assert(parseError("EXPLAIN BLOOMFILTER ANALYZE ").getMessage.contains("expected the statement to run"))
  }

  test("whitespace, comments and trailing semicolons around the words") {
    assert(parse("  /* a comment */ DROP -- another\n BLOOMFILTER\tINDEX\n ids ;; ") ==
      DropIndexCommand("ids", ifExists = false, force = false))
  }

  test("a malformed statement: PARSE_SYNTAX_ERROR at the failing word, saying what was expected, with the form") {
    def error(sql: String, expected: String): ParseException = {
      val e = parseError(sql)
      assert(ErrorConditions.of(e) == "PARSE_SYNTAX_ERROR", e.getMessage)
      assert(e.getMessage.contains(expected), s"'$expected' not in: ${e.getMessage}")
      e
    }
    val drop = error("DROP BLOOMFILTER ids", "Syntax error at or near 'ids': expected INDEX")
    assert(drop.getMessage.contains("The form is: DROP BLOOMFILTER INDEX [IF EXISTS] name [FORCE]"))
    assert(drop.start.line.contains(1) && drop.start.startPosition.contains(17), drop.getMessage)
    error("DROP BLOOMFILTER INDEX IF ids", "expected EXISTS")
    error("DROP BLOOMFILTER INDEX ids NOW", "'NOW': expected FORCE or the end of the statement")
    error("DROP BLOOMFILTER INDEX ids FORCE NOW", "'NOW': expected the end of the statement")
    error("REFRESH BLOOMFILTER INDEX ids QUICK FULL", "'FULL': expected the end of the statement")
    error("DROP BLOOMFILTER INDEX", "at or near end of input: expected an index name")
    error("REFRESH BLOOMFILTER INDEX FULL", "to name an index FULL, quote it")
    error("REFRESH BLOOMFILTER INDEX ids SOMETIMES", "expected FULL, INCREMENTAL, QUICK or the end of the statement")
    error("CREATE BLOOMFILTER INDEX ON t (a)", "expected an index name")
    error("CREATE BLOOMFILTER INDEX IF EXISTS i ON t (a)", "expected NOT")
    error("CREATE BLOOMFILTER INDEX i t (a)", "expected ON")
    error("CREATE BLOOMFILTER INDEX i ON (a)", "expected a table name")
    error("CREATE BLOOMFILTER INDEX i ON t", "expected '(' and the columns to index")
    error("CREATE BLOOMFILTER INDEX i ON t (@)", "expected a column name")
    error("CREATE BLOOMFILTER INDEX i ON t (a,)", "expected a column name")
    error("CREATE BLOOMFILTER INDEX i ON t (a b)", "expected ',' or ')'")
    error("CREATE BLOOMFILTER INDEX i ON t VERSION AS 3 (a)", "expected OF")
    error("CREATE BLOOMFILTER INDEX i ON t VERSION AS OF x (a)", "expected a version number")
    error("CREATE BLOOMFILTER INDEX i ON t (a) OPTIONS fpp = 0.1", "expected '('")
    error("CREATE BLOOMFILTER INDEX i ON t (a) OPTIONS (fpp 0.1)", "expected '='")
    error("CREATE BLOOMFILTER INDEX i ON t (a) OPTIONS (fpp = x)", "expected a value")
    error("CREATE BLOOMFILTER INDEX i ON t (a) WITH (fpp = 0.1)", "expected OPTIONS or the end of the statement")
    error("SHOW BLOOMFILTER INDEX", "expected INDEXES")
    error("SHOW BLOOMFILTER INDEXES FOR t", "expected ON or the end of the statement")
    error("VERIFY BLOOMFILTER INDEX a b", "'b': expected the end of the statement")
    error("SHOW FILES IN BLOOMFILTER ids", "expected INDEX")
    val multiline = error("CREATE BLOOMFILTER INDEX i\nON t\n  (a,\n   )", "expected a column name")
    assert(multiline.start.line.contains(4) && multiline.start.startPosition.contains(3), multiline.getMessage)
    assert(multiline.getMessage.contains("== SQL =="), multiline.getMessage)
  }

  private val sparkStatements = Seq(
    "SELECT 1", "CREATE TABLE t (a INT) USING parquet", "EXPLAIN SELECT 1", "DROP TABLE t", "REFRESH TABLE t",
    "SHOW TABLES", "DESCRIBE t", "DESCRIBE bloomfilter", "DESC bloomfilter idx", "SELECT * FROM bloomfilter",
    "REFRESH 'bloomfilter'", "CREATE TABLE bloomfilter (a INT) USING parquet", "SHOW FILES", "EXPLAIN EXTENDED SELECT 1")

  test("Spark's statements, and words that are hsbloom's elsewhere, go to Spark's parser unchanged") {
    sparkStatements.foreach { sql =>
      val ours = scala.util.Try(parse(sql))
      val theirs = scala.util.Try(spark.parsePlan(sql))
      assert(ours.isSuccess == theirs.isSuccess, sql)
      ours.foreach { plan =>
        assert(plan.getClass == theirs.get.getClass, sql)
        assert(!plan.getClass.getName.startsWith("hsbloom."), sql)
        assert(plan.toString.replaceAll("#\\d+", "") == theirs.get.toString.replaceAll("#\\d+", ""), sql)
      }
      ours.failed.foreach(e => assert(e.getMessage == theirs.failed.get.getMessage, sql))
    }
    val typo = "SELEC 1"
    assert(intercept[ParseException](parse(typo)).getMessage == intercept[ParseException](spark.parsePlan(typo)).getMessage)
  }

  test("the claims: which first words make a statement hsbloom's") {
    assert(Grammar.claim("DESCRIBE BLOOMFILTER INDEX x").contains(Statement.Describe))
    assert(Grammar.claim("describe bloomfilter").isEmpty && Grammar.claim("VACUUM bloomfilter").isEmpty)
    assert(Grammar.claim("RESTORE bloomfilter TO VERSION AS OF 1").isEmpty)
    assert(Grammar.claim("DROP BLOOMFILTERS").isEmpty && Grammar.claim("DROP `BLOOMFILTER`").isEmpty)
    assert(Grammar.claim("SHOW FILES IN BLOOMFILTER INDEX x").contains(Statement.Files))
    assert(Grammar.claim("EXPLAIN BLOOMFILTER SELECT 1").contains(Statement.Explain))
  }

  test("every other method goes to the wrapped parser") {
    val calls = mutable.Buffer[String]()
    val recorder = Proxy.newProxyInstance(getClass.getClassLoader, Array(classOf[ParserInterface]),
      new InvocationHandler {
        override def invoke(proxy: Any, method: Method, args: Array[AnyRef]): AnyRef = {
          calls += method.getName
          null
        }
      }).asInstanceOf[ParserInterface]
    val wrapped = new HsbloomSqlParser(recorder)
    wrapped.parsePlan("SELECT 1")
    wrapped.parseExpression("a + 1")
    wrapped.parseTableIdentifier("a.b")
    wrapped.parseFunctionIdentifier("f")
    wrapped.parseMultipartIdentifier("a.b")
    wrapped.parseQuery("SELECT 1")
    wrapped.parseTableSchema("a INT")
    wrapped.parseDataType("INT")
    assert(calls == Seq("parsePlan", "parseExpression", "parseTableIdentifier", "parseFunctionIdentifier",
      "parseMultipartIdentifier", "parseQuery", "parseTableSchema", "parseDataType"))
  }
}
