package hsbloom.sql

import org.apache.spark.sql.execution.SparkSqlParser
import org.scalatest.funsuite.AnyFunSuite

/** Spark 4.3 splits a script into statements through the parser (the shim's `StatementSplitting`): the wrapped
 * parser's split, hsbloom's statements among them. */
class StatementSplittingSuite extends AnyFunSuite {
  test("a script with hsbloom's statements splits as the wrapped parser splits it") {
    val spark = new SparkSqlParser()
    val script = "CREATE BLOOMFILTER INDEX i ON parquet.`/t` (a); SELECT 1; DROP BLOOMFILTER INDEX i"
    assert(new HsbloomSqlParser(spark).splitStatements(script) == spark.splitStatements(script))
  }
}
