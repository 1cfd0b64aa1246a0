package hsbloom.sql

import org.apache.spark.sql.catalyst.analysis.NameParameterizedQuery
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.catalyst.parser.NamedParameterContext
import org.apache.spark.sql.execution.SparkSqlParser
import org.scalatest.funsuite.AnyFunSuite

/** Spark 4.1 and later parse `spark.sql(text, args)` through `parsePlanWithParameters` (the shim's
 * `ParameterizedParsing`): hsbloom's statements are claimed there too, and the arguments reach an explained query. */
class ParameterizedParsingSuite extends AnyFunSuite {
  private val spark = new SparkSqlParser()
  private val parser = new HsbloomSqlParser(spark)

  test("spark.sql's arguments reach an explained query; other statements go to the wrapped parser with them") {
    val context = NamedParameterContext(Map("id" -> Literal(42)))
    val query = "SELECT * FROM t WHERE id = :id"
    assert(parser.parsePlanWithParameters(s"EXPLAIN BLOOMFILTER $query", context) ==
      ExplainQueryCommand(NameParameterizedQuery(spark.parsePlanWithParameters(query, context), Seq("id"),
        Seq(Literal(42)))))
    assert(parser.parsePlanWithParameters("DROP BLOOMFILTER INDEX i", context) ==
      DropIndexCommand("i", ifExists = false, force = false))
    assert(parser.parsePlanWithParameters(query, context) == spark.parsePlanWithParameters(query, context))
  }
}
