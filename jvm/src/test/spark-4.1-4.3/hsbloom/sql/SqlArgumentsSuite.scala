package hsbloom.sql

import org.scalatest.funsuite.AnyFunSuite

import hsbloom.HsbloomException
import hsbloom.testing.SharedSession

/**
 * `spark.sql(text, args)` with EXPLAIN BLOOMFILTER on Spark 4.1 and later, where the parser gets the arguments:
 * they reach the explained query when hsbloom's parser is the outermost (no Delta: Spark 4.3's session), and are
 * refused with what to do when Delta's parser, in front of hsbloom's, drops them (4.1 and 4.2's sessions).
 */
class SqlArgumentsSuite extends AnyFunSuite with SharedSession {
  private def explain(text: String, args: Either[Map[String, Any], Array[Any]]): String = {
    val sql = s"EXPLAIN BLOOMFILTER SELECT * FROM range(10) $text"
    args.fold(named => spark.sql(sql, named), positional => spark.sql(sql, positional)).head().getString(0)
  }

  test("spark.sql's named and positional arguments reach the query of EXPLAIN BLOOMFILTER, or are refused") {
    val cases = Seq(
      ("WHERE id = :id", Left(Map[String, Any]("id" -> 7)), "= 7"),
      ("WHERE id = ?", Right(Array[Any](8)), "= 8"))
    for ((text, args, shown) <- cases) {
      if (SharedSession.withDelta) {
        val e = intercept[HsbloomException](explain(text, args))
        assert(e.condition == HsbloomException.InvalidArgument)
        assert(e.getMessage.contains("such as Delta's, drops them): write the values into the query"), e.getMessage)
      } else {
        val plan = explain(text, args)
        assert(plan.contains(shown), plan)
      }
    }
  }
}
