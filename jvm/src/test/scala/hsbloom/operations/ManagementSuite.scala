package hsbloom.operations

import java.nio.file.Files

import scala.util.Try

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col, concat, lit}
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.{BFIndexConfig, HsbloomException}
import hsbloom.format.{LogEntry, State, Writer}
import hsbloom.testing.{Indexes, Queries, SharedSession}

/**
 * create, delete, restore, vacuum and cancel through `Hyperspace`, on real builds: the log each writes, what each
 * refuses (writing nothing), stuck operations cancelled, a dead writer's operation recovered, a failed build rolled
 * back, two threads creating one index. (The Python facade's mapping of these, a race of two processes and a writer
 * JVM killed mid-build: tests/test_index_management.py.)
 */
class ManagementSuite extends AnyFunSuite with SharedSession with Indexes with Queries {
  private val NumFiles = 4
  private val NumRows = 200

  private lazy val events: String = {
    val path = dir("events")
    spark.range(0, NumRows, 1, NumFiles).select(col("id"), concat(lit("user-"), col("id")).as("name"),
      (col("id") % 2 === 0).as("flag")).write.parquet(path)
    path
  }
  private def df: DataFrame = spark.read.parquet(events)

  private def error(call: => Any): HsbloomException = intercept[HsbloomException](call)

  test("create writes the log and the data, leaves the caller's job group, and describes the index") {
    spark.sparkContext.setJobGroup("callers-group", "the caller's jobs")
    try {
      hs.createIndex(df, BFIndexConfig("events_keys", Seq("id", "name"), fpp = Some(0.02)))
      assert(spark.sparkContext.getLocalProperty("spark.jobGroup.id") == "callers-group") // left as it was
    } finally spark.sparkContext.clearJobGroup()
    assert(states("events_keys") == Seq("CREATING", "ACTIVE"))
    // No global filter by default: the file table and its filters' blocks.
    assert(versions("events_keys") == Set("v__=0"))
    assert(systemPath.resolve("events_keys/v__=0").toFile.list().toSet.filterNot(_.startsWith(".")) == Set("blocks", "files"))
    val active = log("events_keys").latest().get
    assert(active.source.get.format == "parquet" && active.dataPath.contains(s"file:$systemPath/events_keys/v__=0"))
    val written = Files.readString(systemPath.resolve(f"events_keys/_hsbloom_log/${active.id}%020d.json"))
    assert(!written.contains("\"files\""), "the tables list the files, the log does not")
    assert(held("events_keys")._1.size == NumFiles)
    assert(active.summary.get.numFiles == NumFiles && active.summary.get.numRows == NumRows)
    val info = hs.index("events_keys")
    assert((info.state, info.numFiles, info.numRows, info.dataVersion) == (("ACTIVE", NumFiles, Some(NumRows), 0L)))
    assert(info.columns.map(c => (c.column, c.dataType)) == Seq("id" -> "bigint", "name" -> "string"))
    info.columns.foreach { c =>
      assert(c.numRows == NumRows && c.numNulls == 0 && c.ndv >= 0.9 * NumRows && c.ndv <= 1.1 * NumRows)
      assert(c.fileFilterBytes >= 32 * NumFiles && c.globalFilterBytes == 0) // none by default
    }
  }

  test("refused calls write nothing") {
    assertContains(error(hs.createIndex(df, BFIndexConfig("bad", Seq("user_id")))).text,
      "unknown column 'user_id'; the DataFrame's columns are: id, name, flag")
    assertContains(error(hs.createIndex(df, BFIndexConfig("bad", Seq("id", "flag")))).text, "column 'flag' has type boolean")
    assertContains(error(hs.createIndex(df.join(df, "id"), BFIndexConfig("bad", Seq("id")))).text, "a join [Join]")
    assertContains(error(hs.createIndex(df.where("id = 3"), BFIndexConfig("bad", Seq("id")))).text, "a filter")
    assertContains(error(BFIndexConfig("..", Seq("id"))).text, "contains '..'")
    assert(!Files.exists(systemPath) && hs.indexes().count() == 0)
  }

  test("a taken name is refused saying what to do") {
    hs.createIndex(df, BFIndexConfig("taken", Seq("id")))
    val active = error(hs.createIndex(df, BFIndexConfig("taken", Seq("name"))))
    assert(active.condition == HsbloomException.IndexExists)
    assertContains(active.text, "index 'taken' already exists (ACTIVE); delete and vacuum it first, or choose another")
    hs.deleteIndex("taken")
    val deleted = error(hs.createIndex(df, BFIndexConfig("taken", Seq("name"))))
    assert(deleted.condition == HsbloomException.IndexExists, deleted)
    assertContains(deleted.text, "index 'taken' already exists (DELETED); restore it, or vacuum it to free the name")
    assert(states("taken") == Seq("CREATING", "ACTIVE", "DELETING", "DELETED"))
  }

  test("delete, restore, vacuum and reuse of the name") {
    hs.createIndex(df, BFIndexConfig("life", Seq("id")))
    val active = error(hs.restoreIndex("life"))
    assert(active.condition == HsbloomException.IndexState, active)
    assertContains(active.text, "cannot restore index 'life': it is ACTIVE, and restore needs DELETED")
    hs.deleteIndex("life")
    assert(hs.index("life").state == "DELETED" && hs.indexes().collect().map(_.getAs[String]("state")).toSeq == Seq("DELETED"))
    assert(versions("life") == Set("v__=0")) // soft: the data stays
    val deleted = error(hs.deleteIndex("life"))
    assert(deleted.condition == HsbloomException.IndexState, deleted)
    assertContains(deleted.text, "cannot delete index 'life': it is DELETED")
    hs.restoreIndex("life")
    assert(hs.index("life").state == "ACTIVE")
    hs.deleteIndex("life")
    hs.vacuumIndex("life")
    assert(versions("life").isEmpty && hs.indexes().count() == 0)
    Seq(() => hs.index("life"), () => hs.restoreIndex("life"), () => hs.vacuumIndex("life")).foreach { call =>
      val e = error(call())
      assert(e.condition == HsbloomException.IndexNotFound && e.text.contains("index 'life' does not exist"))
    }
    hs.createIndex(df, BFIndexConfig("life", Seq("name"))) // the name is free again, with a new data version
    val info = hs.index("life")
    assert((info.state, info.dataVersion, info.config.indexedColumns) == (("ACTIVE", 1L, Seq("name"))))
    assert(versions("life") == Set("v__=1"))
    assert(states("life") == Seq("CREATING", "ACTIVE", "DELETING", "DELETED", "RESTORING", "ACTIVE", "DELETING",
      "DELETED", "VACUUMING", "DOESNOTEXIST", "CREATING", "ACTIVE"))
  }

  test("vacuum of an active index removes only the versions it does not read") {
    hs.createIndex(df, BFIndexConfig("old_versions", Seq("id")))
    val stray = systemPath.resolve("old_versions/v__=5/files")
    Files.createDirectories(stray)
    Files.write(stray.resolve("part-0.parquet"), "left by a crashed build".getBytes("UTF-8"))
    hs.vacuumIndex("old_versions")
    assert(versions("old_versions") == Set("v__=0") && hs.index("old_versions").state == "ACTIVE")
    assert(states("old_versions").takeRight(2) == Seq("VACUUMING", "ACTIVE"))
  }

  test("every operation on an unknown index is IndexNotFound") {
    Seq[String => Any](hs.deleteIndex(_), hs.restoreIndex, hs.vacuumIndex, hs.cancel, hs.index, hs.refreshIndex(_: String),
      hs.verifyIndex).foreach { operation =>
      val e = error(operation("ghost"))
      assert(e.condition == HsbloomException.IndexNotFound && e.text.contains("index 'ghost' does not exist"), e)
    }
  }

  /** Appends a transient entry as if `writer` (a JVM elsewhere, or one that died) had started an operation there. */
  private def stick(name: String, state: State, writer: Writer): LogEntry = {
    val entry = log(name).latest() match {
      case None => LogEntry(id = 0, state = state, operation = "create", writer = writer, dataVersion = Some(0))
      case Some(latest) => latest.successor(state, state.name.toLowerCase, writer)
    }
    assert(log(name).appendUnchecked(entry))
    entry
  }

  private val elsewhere = Writer("another-host", 1, "remote-operation") // alive as far as this host can tell

  test("cancel returns each stuck operation to where it started") {
    stick("stuck", State.Creating, elsewhere)
    val busy = error(hs.createIndex(df, BFIndexConfig("stuck", Seq("id"))))
    assert(busy.condition == HsbloomException.ConcurrentOperation)
    assert("index 'stuck' is busy: CREATING since .* by process 1 on host another-host.*cancel\\('stuck'\\)".r
      .findFirstIn(busy.text).isDefined, busy.text)
    Files.createDirectories(systemPath.resolve("stuck/v__=0")) // what its build had written so far
    hs.cancel("stuck")
    assert(states("stuck") == Seq("CREATING", "DOESNOTEXIST") && versions("stuck").isEmpty)
    assertContains(error(hs.cancel("stuck")).text, "no operation is in progress to cancel")

    hs.createIndex(df, BFIndexConfig("stuck", Seq("id")))
    assert(hs.index("stuck").dataVersion == 1) // never the cancelled build's version
    stick("stuck", State.Deleting, elsewhere)
    hs.cancel("stuck")
    assert(hs.index("stuck").state == "ACTIVE")
    hs.deleteIndex("stuck")
    stick("stuck", State.Restoring, elsewhere)
    hs.cancel("stuck")
    assert(hs.index("stuck").state == "DELETED")
    stick("stuck", State.Vacuuming, elsewhere)
    hs.cancel("stuck") // part of a deleted index's data may be gone: forward to DOESNOTEXIST
    assert(error(hs.index("stuck")).condition == HsbloomException.IndexNotFound)
    assert(versions("stuck").isEmpty && log("stuck").latest().get.message.contains("cancelled by cancel()"))
  }

  test("a dead writer's operation is recovered by the next create") {
    val finished = new ProcessBuilder("true").start()
    assert(finished.waitFor() == 0)
    val pid = finished.pid() // a process of this host that is gone
    stick("orphan", State.Creating, Writer(Writer.localHost, pid, "crashed-operation"))
    hs.createIndex(df, BFIndexConfig("orphan", Seq("id")))
    val entries = log("orphan").entries()
    assert(entries.map(_.state.name) == Seq("CREATING", "DOESNOTEXIST", "CREATING", "ACTIVE"))
    assert(entries(1).message.exists(_.startsWith(s"recovered: process $pid on host ${Writer.localHost} died during create")))
  }

  test("a failed build rolls back and removes its data") {
    val source = dir("broken")
    spark.range(0, 100, 1, 3).write.parquet(source)
    val broken = spark.read.parquet(source) // schema read while every file is intact
    Files.write(partFiles(source).last.toPath, "PAR1 this is not a parquet file PAR1".getBytes("UTF-8"))
    val e = error(hs.createIndex(broken, BFIndexConfig("broken", Seq("id"))))
    assert(e.condition == HsbloomException.BuildFailed && e.getCause != null)
    assertContains(e.text, "create of index 'broken' failed, so it was not created")
    assert(states("broken") == Seq("CREATING", "DOESNOTEXIST") && versions("broken").isEmpty)
    assert(hs.indexes().count() == 0 && spark.sparkContext.getLocalProperty("spark.jobGroup.id") == null)
  }

  test("an empty source makes a valid empty index") {
    val empty = dir("empty")
    Files.createDirectories(java.nio.file.Path.of(empty))
    hs.createIndex(spark.read.schema("id long, name string").parquet(empty), BFIndexConfig("empty", Seq("id", "name")))
    val info = hs.index("empty")
    assert((info.state, info.numFiles, info.numRows) == (("ACTIVE", 0L, Some(0L))))
    val files = spark.read.parquet(s"$systemPath/empty/v__=0/files")
    assert(files.count() == 0 && files.columns.contains("bitset_bytes") && !files.columns.contains("filter"))
  }

  test("two threads creating the same index: one wins, the other is told why") {
    val barrier = new java.util.concurrent.CyclicBarrier(2)
    val outcomes = new Array[Try[Unit]](2)
    val threads = (0 until 2).map(i => new Thread(() => {
      barrier.await()
      outcomes(i) = Try(hs.createIndex(df, BFIndexConfig("contended", Seq("id"))))
    }))
    threads.foreach(_.start())
    threads.foreach(_.join())
    val failures = outcomes.toSeq.flatMap(_.failed.toOption)
    assert(states("contended") == Seq("CREATING", "ACTIVE") && failures.size == 1, outcomes.toSeq)
    val lost = failures.head.asInstanceOf[HsbloomException]
    assert(Set(HsbloomException.ConcurrentOperation, HsbloomException.IndexExists).contains(lost.condition), lost)
    assertContains(lost.text, "index 'contended'")
    assert(hs.index("contended").state == "ACTIVE")
  }
}
