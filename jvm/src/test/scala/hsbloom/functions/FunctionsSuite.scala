package hsbloom.functions

import org.apache.spark.sql.AnalysisException
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.BuildInfo
import hsbloom.sbbf.{ParquetHash, Sbbf}
import hsbloom.testing.SharedSession

/**
 * The SQL functions hsbloom adds to every session (`SqlFunctions`): `hsbloom_version()`, `hsbloom_hash(value)` (the
 * Parquet SBBF hash) and `hsbloom_might_contain(filter, value)`, with their types, nulls and errors, through SQL on
 * the shared session.
 */
class FunctionsSuite extends AnyFunSuite with SharedSession {
  private def one(sql: String) = spark.sql(sql).head()

  private def hex(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02x").mkString

  test("hsbloom_version() is the jar's version") {
    assert(one("SELECT hsbloom_version()").getString(0) == BuildInfo.version)
  }

  test("hsbloom_hash is the Parquet hash of each type's PLAIN encoding") {
    val row = one("SELECT hsbloom_hash(CAST('' AS STRING)), hsbloom_hash(42L), hsbloom_hash(42), hsbloom_hash('ü日'), " +
      "hsbloom_hash(CAST(1.5 AS DOUBLE)), hsbloom_hash(X'00ff'), hsbloom_hash(CAST(NULL AS BIGINT))")
    assert(row.getLong(0) == 0xEF46DB3751D8E999L) // XXH64 of no bytes
    assert(row.getLong(1) == ParquetHash.hashLong(42L) && row.getLong(2) == ParquetHash.hashInt(42))
    assert(row.getLong(3) == ParquetHash.hashUTF8(UTF8String.fromString("ü日")))
    assert(row.getLong(4) == ParquetHash.hashDouble(1.5) && row.getLong(5) == ParquetHash.hashBytes(Array(0, -1)))
    assert(row.isNullAt(6))
  }

  test("hsbloom_might_contain finds what a filter holds, answers NULL for a NULL filter or value (even with a corrupt filter)") {
    val filter = Sbbf.ofBytes(1024)
    Seq(7L, 11L).foreach(v => filter.insertHash(ParquetHash.hashLong(v)))
    filter.insertHash(ParquetHash.hashUTF8(UTF8String.fromString("k7")))
    val f = s"X'${hex(filter.toBytes)}'"
    val row = one(s"SELECT hsbloom_might_contain($f, 7L), hsbloom_might_contain($f, 11L), hsbloom_might_contain($f, 'k7'), " +
      s"hsbloom_might_contain($f, 8L), hsbloom_might_contain(CAST(NULL AS BINARY), 1L), " +
      s"hsbloom_might_contain($f, CAST(NULL AS BIGINT))")
    assert(row.getBoolean(0) && row.getBoolean(1) && row.getBoolean(2))
    assert(!row.getBoolean(3)) // 8 is absent (a 1 KiB filter of three values: no false positive for it)
    assert(row.isNullAt(4) && row.isNullAt(5))
    // NULL in, NULL out before the filter is read: a NULL value with a corrupt filter is NULL, not an error.
    assert(one("SELECT hsbloom_might_contain(unhex('00'), CAST(NULL AS BIGINT))").isNullAt(0))
    // An empty filter (header and 32 zero bytes) holds nothing.
    assert(!one(s"SELECT hsbloom_might_contain(X'${hex(Sbbf.ofBytes(32).toBytes)}', 1L)").getBoolean(0))
  }

  test("types a function cannot take, a corrupt filter and a wrong number of arguments are errors naming them") {
    def refused(sql: String): String = intercept[Exception](spark.sql(sql).collect()).getMessage
    assert(intercept[AnalysisException](spark.sql("SELECT hsbloom_hash(true)").collect()).getMessage
      .contains("cannot hash values of type BOOLEAN"))
    assert(refused("SELECT hsbloom_might_contain('not binary', 1L)").contains("needs a BINARY filter"))
    assert(refused("SELECT hsbloom_might_contain(X'00', true)").contains("cannot hash values of type BOOLEAN"))
    assert(refused("SELECT hsbloom_might_contain(unhex('1580101c1c00001c1c00001c1c000000'), 1L)").contains("truncated SBBF"))
    assert(refused("SELECT hsbloom_might_contain(unhex('00'), 1L)").contains("corrupt SBBF header: numBytes is missing"))
    assert(refused("SELECT hsbloom_hash(1, 2)").contains("hsbloom_hash(value) takes 1 argument(s), got 2"))
    assert(refused("SELECT hsbloom_version(1)").contains("hsbloom_version() takes 0 argument(s), got 1"))
  }
}
