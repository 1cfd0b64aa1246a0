package hsbloom.format

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/**
 * `FileKey.listed` reads the key off a plain path string without parsing it
 * (what the file tables store, once per file when a version loads); that
 * key is exactly the one a Hadoop `Path` gives, for tricky spellings and
 * random ones, and anything not plain is parsed.
 */
class FileKeySuite extends AnyFunSuite {
  private def parsed(path: String): Option[String] =
    try Some(FileKey.of(new Path(path).toUri)) catch { case _: IllegalArgumentException => None }

  private val plain = Seq(
    "file:/data/part-00000.parquet",
    "file:/a b/c  d.parquet",
    "file:/日本語/é/x.parquet",
    "file:///data/x.parquet",
    "file:/",
    "hdfs://namenode:8020/warehouse/t/part-1.parquet",
    "hdfs://namenode/warehouse/t/k=1/part-1.parquet",
    "s3a://bucket/prefix/part-1.snappy.parquet",
    "s3a://my_bucket.with-dots/x/y=a:b/part.parquet",
    "abfss://container@account.dfs.core.windows.net/t/part.parquet",
    "gs://b/with#hash/and?query/[brackets]/{braces}/~tilde/x.parquet",
    "file:/a/.hidden/..three/x.",
    "file:/\u00a0nbsp/\u2003em space/x")

  private val notPlain = Seq(
    "file:/a%20b/x.parquet",
    "file:/100%/x",
    "file:/a//b",
    "file:/a/./b",
    "file:/a/../b",
    "file:/a/b/",
    "file:/a/..",
    "file:a/relative",
    "/no/scheme",
    "relative/path",
    "hdfs://host",
    "file://",
    "s3a://bucket%20x/y",
    "hdfs://[::1]:8020/x",
    "file:/emoji/\uD83D\uDE00.parquet",
    "file:/tab\there",
    "file:/back\\slash",
    "1file:/x",
    "fi le:/x")

  test("a plain path's key is read off the string and is the key Path gives") {
    plain.foreach { p =>
      assert(FileKey.plainKey(p) != null, p)
      assert(FileKey.plainKey(p) == parsed(p).get, p)
      assert(FileKey.listed(p) == parsed(p).get, p)
    }
  }

  test("any other path is parsed as before") {
    notPlain.foreach { p =>
      assert(FileKey.plainKey(p) == null, p)
      parsed(p).foreach(key => assert(FileKey.listed(p) == key, p))
    }
  }

  test("over random spellings, the key read off the string is Path's whenever there is one") {
    val random = new scala.util.Random(18)
    val prefixes = Seq("file:", "file:/", "file://", "file:///", "hdfs://nn:8020", "hdfs://nn", "s3a://b_1.x", "s3a://",
      "x+y.z-1://h@u:p", "", "/", "C:")
    val pieces = Seq("/", "/", "/", "a", "Z", "0", ".", "..", "%", "%2F", " ", ":", "@", "#", "?", "[", "]", "é", "日",
      "\uD83D\uDE00", "\uD800", "\\", "\t", "\u0085", "\u00a0", "~", "+", ";", "=", "&", "$", ",", "'", "\"", "<")
    var plainSeen = 0
    (0 until 20000).foreach { _ =>
      val p = prefixes(random.nextInt(prefixes.size)) + Seq.fill(random.nextInt(8))(pieces(random.nextInt(pieces.size))).mkString
      val fast = FileKey.plainKey(p)
      if (fast != null) {
        plainSeen += 1
        assert(parsed(p).contains(fast), p)
      }
    }
    assert(plainSeen > 1000) // the fast path is taken often enough to be checked
  }
}
