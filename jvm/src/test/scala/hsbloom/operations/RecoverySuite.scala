package hsbloom.operations

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path}

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.spark.sql.functions.col
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.{BFIndexConfig, HsbloomException}
import hsbloom.testing.{HealthyIndex, Indexes, Queries, SharedSession}
import hsbloom.testing.HealthyIndex.Name

/**
 * A damaged log never locks an index, and bad system paths are refused before anything is written, each failure an
 * `HsbloomException` whose condition names the kind and whose text names the fix (docs/troubleshooting.md). Uses the
 * healthy index of `HealthyIndex`, on copies. (That Python sees each as an `HsbloomError`: tests/test_recovery.py.)
 */
class RecoverySuite extends AnyFunSuite with SharedSession with Indexes with Queries {
  private def entry(id: Long): Path = systemPath.resolve(Name).resolve("_hsbloom_log").resolve(f"$id%020d.json")

  private def failure(call: => Any, needles: String*): HsbloomException = {
    val e = intercept[HsbloomException](call)
    needles.foreach(n => assertContains(e.text, n))
    e
  }

  private def edited(p: Path)(change: ObjectNode => Unit): Unit = {
    val json = new ObjectMapper().readTree(Files.readAllBytes(p)).asInstanceOf[ObjectNode]
    change(json)
    Files.write(p, json.toString.getBytes(UTF_8))
  }

  private val damage: Seq[(String, Path => Unit)] = Seq(
    "truncated" -> (p => Files.write(p, Files.readAllBytes(p).take(Files.size(p).toInt / 2))),
    "bit flip" -> { p => val b = Files.readAllBytes(p); b(0) = (b(0) ^ 1).toByte; Files.write(p, b) },
    "garbage" -> (p => Files.write(p, Array.tabulate[Byte](300)(i => (i * 31 + 7).toByte))),
    "unknown log format" -> (p => edited(p)(_.put("log_format", 99))),
    "100,000 nested [" -> (p => Files.write(p, ("[" * 100000).getBytes(UTF_8))),
    "empty" -> (p => Files.write(p, Array.emptyByteArray)),
    "wrong id" -> (p => edited(p)(_.put("id", 7))))

  private def lookups: Seq[String] = withHsbloom(HealthyIndex.lookupRows(spark))

  damage.foreach { case (name, damaging) =>
    test(s"a damaged latest log entry can be force-deleted and rebuilt: $name") {
      HealthyIndex.copyInto(systemPath)
      damaging(entry(1)) // 0: CREATING, 1: ACTIVE
      assert(lookups == HealthyIndex.expected) // not used: no stable entry is readable
      val fix = s"delete_index('$Name', force=True)"
      failure(hs.refreshIndex(Name, "full"), "log entry", fix)
      failure(hs.refreshIndex(Name, "incremental"), fix)
      failure(hs.cancel(Name), fix)
      failure(hs.deleteIndex(Name), fix)
      failure(hs.restoreIndex(Name), fix)
      assert(failure(hs.index(Name), fix).condition == HsbloomException.CorruptLog)
      val row = hs.indexes().collect().toSeq match { case Seq(r) => r; case rows => fail(s"rows: $rows") }
      assert(row.getAs[String]("state") == "UNREADABLE" && row.getAs[String]("damage").contains(entry(1).getFileName.toString))
      val result = hs.verifyIndex(Name)
      assert(!result.healthy && result.problems.exists(_.file.endsWith(entry(1).getFileName.toString)), result)

      hs.deleteIndex(Name, force = true)
      hs.vacuumIndex(Name)
      assert(versions(Name).isEmpty && hs.indexes().count() == 0)
      failure(hs.index(Name), "does not exist")
      if (name == "100,000 nested [" || name == "truncated") { // a build costs seconds: rebuild in two cases
        hs.createIndex(spark.read.parquet(HealthyIndex.source), BFIndexConfig(Name, Seq("id", "s")))
        assert(hs.verifyIndex(Name).healthy)
        assert(lookups == HealthyIndex.expected)
        assert(withHsbloom(filesRead(spark.read.parquet(HealthyIndex.source).where(col("id") === 7))) == 1)
      }
    }
  }

  test("a damaged earlier entry is reported but does not stop the index") {
    HealthyIndex.copyInto(systemPath)
    Files.write(entry(0), ("[" * 100000).getBytes(UTF_8))
    assert(lookups == HealthyIndex.expected)
    assert(withHsbloom(filesRead(spark.read.parquet(HealthyIndex.source).where(col("id") === 7))) == 1)
    assert(hs.verifyIndex(Name).problems.map(_.file.split('/').last) == Seq(entry(0).getFileName.toString))
    hs.deleteIndex(Name) // the latest entry is readable: the ordinary protocol works
    hs.restoreIndex(Name)
    assert(hs.index(Name).state == "ACTIVE")
  }

  test("a missing log entry is reported") {
    HealthyIndex.copyInto(systemPath)
    Files.delete(entry(0))
    assert(hs.verifyIndex(Name).problems.map(_.problem) == Seq("log entry is missing (the ids have a gap)"))
  }

  test("force delete of an active index and of nothing") {
    HealthyIndex.copyInto(systemPath)
    hs.deleteIndex(Name, force = true)
    assert(hs.indexes().count() == 0)
    failure(hs.restoreIndex(Name), "does not exist")
    val again = failure(hs.deleteIndex(Name, force = true), "already deleted", "vacuuming it removes its leftover data")
    assert(again.condition == HsbloomException.IndexNotFound)
    hs.vacuumIndex(Name)
    failure(hs.deleteIndex(Name, force = true), "does not exist")
    failure(hs.verifyIndex("never_created"), "does not exist")
  }

  /** Creating an index with the system path `system` fails naming the setting; the failure. */
  private def create(system: String): HsbloomException = withConf("spark.hsbloom.system.path" -> system) {
    failure(hs.createIndex(spark.read.parquet(HealthyIndex.source), BFIndexConfig("paths", Seq("id"))),
      "spark.hsbloom.system.path")
  }

  test("bad system paths are refused before anything is written") {
    val regular = Path.of(dir("a-file"))
    Files.write(regular, "not a directory".getBytes(UTF_8))
    assertContains(create(regular.toString).text, "regular file")
    assertContains(create(regular.resolve("below").toString).text, "lies under")
    assert(new String(Files.readAllBytes(regular), UTF_8) == "not a directory")
    // Permission bits do not stop root, so a directory where nothing can be created, even by root, stands in for a
    // read-only one: the check writes a probe file rather than reading modes.
    assertContains(create("/proc/hsbloom-cannot-exist/system").text, "could not be created")
    val unknown = create("nosuchscheme://host/indexes")
    assert(unknown.condition == HsbloomException.SystemPath && unknown.text.contains("nosuchscheme"))
    withConf("spark.hsbloom.system.path" -> "nosuchscheme://host/indexes") {
      failure(hs.indexes(), "spark.hsbloom.system.path")
      failure(hs.index("x"), "spark.hsbloom.system.path")
      failure(hs.deleteIndex("x", force = true), "spark.hsbloom.system.path")
    }
  }

  test("a system path inside or containing the source is refused") {
    val source = Path.of(HealthyIndex.source)
    val before = Files.list(source).map[String](_.getFileName.toString).sorted().toArray.toSeq
    assertContains(create(source.resolve("_indexes").toString).text, "inside the source")
    assertContains(create(source.toString).text, "inside the source")
    assertContains(create(source.getParent.toString).text, "contains the source")
    assert(Files.list(source).map[String](_.getFileName.toString).sorted().toArray.toSeq == before)
    assert(spark.read.parquet(source.toString).count() > 0)
  }
}
