package hsbloom.sql

import org.scalatest.funsuite.AnyFunSuite

import hsbloom.HsbloomException
import hsbloom.testing.SharedSession

/** `spark.sql(text, args)` with hsbloom's statements on Spark 3.5 and 4.0, whose analyzer binds arguments only in the plan
 * it is given: EXPLAIN BLOOMFILTER refuses them, naming the version and what to do. */
class SqlArgumentsSuite extends AnyFunSuite with SharedSession {
  test("spark.sql's arguments in EXPLAIN BLOOMFILTER are refused, naming the Spark version and the fix") {
    for ((text, args) <- Seq("WHERE id = :id" -> Map("id" -> 7), "WHERE id = ?" -> Array(8))) {
      val e = intercept[HsbloomException] {
        args match {
          case named: Map[String, Any] @unchecked =>
            spark.sql(s"EXPLAIN BLOOMFILTER SELECT * FROM range(10) $text", named)
          case positional: Array[Int] => spark.sql(s"EXPLAIN BLOOMFILTER SELECT * FROM range(10) $text", positional)
        }
      }
      assert(e.condition == HsbloomException.InvalidArgument)
      assert(e.getMessage.contains(s"(Spark ${spark.version}; they do from Spark 4.1"), e.getMessage)
      assert(e.getMessage.contains("write the values into the query"))
    }
    assert(spark.sql("EXPLAIN BLOOMFILTER SELECT * FROM range(10) WHERE id = 7").head().getString(0).contains("= 7"))
  }
}
