package hsbloom.format

import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.internal.SQLConf
import org.scalatest.funsuite.AnyFunSuite

class ReadOptionsSuite extends AnyFunSuite {
  private val conf = new SQLConf()
  private val scanned = Map(
    "header" -> "true", "mergeSchema" -> "false", "path" -> "/t",
    "fs.s3a.secret.key" -> "S3CRET", "parquet.encryption.key.list" -> "k1:AAAA", "my.service.Token" -> "tok",
    "spark.hadoop.fs.azure.sas.x" -> "sig", "libraryOption" -> "v1")

  test("value-deciding options are kept verbatim, secrets never, any other as a keyed hash") {
    val recorded = ReadOptions.record(scanned, conf)
    assert(recorded.verbatim == Map("header" -> "true", "mergeschema" -> "false"))
    assert(recorded.hashed.keySet == Set("libraryoption"))
    assert(recorded.hashed("libraryoption").matches("[0-9a-f]{64}"))
    assert(recorded.salt.matches("[0-9a-f]{32}"))
    val written = (recorded.verbatim ++ recorded.hashed).mkString + recorded.salt
    Seq("S3CRET", "k1:AAAA", "tok", "sig", "v1").foreach(secret => assert(!written.contains(secret), secret))
  }

  test("a scan is covered with the same values, however its keys are spelled, and not with another value") {
    val recorded = ReadOptions.record(scanned, conf)
    assert(ReadOptions.difference(recorded, CaseInsensitiveMap(scanned), conf).isEmpty)
    val respelled = scanned - "libraryOption" + ("LIBRARYOPTION" -> "v1") - "header" + ("Header" -> "true")
    assert(ReadOptions.difference(recorded, respelled, conf).isEmpty)
    // Credentials do not change the values read: another key or none is still covered.
    assert(ReadOptions.difference(recorded, scanned - "fs.s3a.secret.key" + ("fs.s3a.access.key" -> "A"), conf).isEmpty)
    val why = ReadOptions.difference(recorded, scanned + ("libraryOption" -> "v2"), conf)
    assert(why.exists(w => w.contains("libraryoption=(hashed)") && !w.contains("v1") && !w.contains("v2")))
    assert(ReadOptions.difference(recorded, scanned + ("header" -> "false"), conf).exists(_.contains("header=false")))
    assert(ReadOptions.difference(recorded, scanned - "libraryOption", conf).isDefined)
  }

  test("an older entry's options (all verbatim, no salt) still match a scan of value-deciding options") {
    val older = ReadOptions.Recorded(Map("header" -> "true"), Map.empty, "")
    assert(ReadOptions.difference(older, Map("header" -> "true"), conf).isEmpty)
    assert(ReadOptions.difference(older, Map("header" -> "true", "libraryOption" -> "v"), conf).isDefined)
  }
}
