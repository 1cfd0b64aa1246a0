package hsbloom.sbbf

import org.apache.spark.sql.types.StringType
import org.scalatest.funsuite.AnyFunSuite

/** Spark 4's collated strings: equal values may differ in bytes, so no byte hash may stand for them. */
class CollatedHashSuite extends AnyFunSuite {
  test("a collated string type has no hasher; the binary one has") {
    assert(ParquetHash.hasherFor(StringType("UTF8_LCASE")).isEmpty)
    assert(ParquetHash.hasherFor(StringType("UTF8_BINARY")).isDefined)
  }
}
