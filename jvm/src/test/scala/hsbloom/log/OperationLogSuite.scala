package hsbloom.log

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path => NioPath}
import java.util.concurrent.{CyclicBarrier, Executors, TimeUnit}

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.{BFIndexConfig, HsbloomException}
import hsbloom.format.{LogEntry, State, Writer}
import hsbloom.operations.DataVersions

/** An index's operation log on storage: create-if-absent under contention, reads, damage, writers, versions. */
class OperationLogSuite extends AnyFunSuite {
  private def freshLog(): (OperationLog, NioPath) = {
    val dir = Files.createTempDirectory("oplog").resolve("idx")
    (new OperationLog("idx", new Path(dir.resolve("_hsbloom_log").toUri), new Configuration()), dir.resolve("_hsbloom_log"))
  }

  private def entry(id: Long, state: State, version: Long = 3, writer: Writer = Writer.current()): LogEntry =
    LogEntry(id = id, state = state, operation = "create", writer = writer,
      config = Some(BFIndexConfig("idx", Seq("user_id"))), dataVersion = Some(version))

  test("threads racing for one entry id have exactly one winner, round after round") {
    val (log, _) = freshLog()
    val threads = 12
    val pool = Executors.newFixedThreadPool(threads)
    implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(pool)
    val states = State.Creating +: Seq.fill(5)(Seq(State.Active, State.Deleting, State.Deleted, State.Restoring)).flatten
    var previous: Option[LogEntry] = None
    try for (round <- 0 until 20) {
      val barrier = new CyclicBarrier(threads)
      val results = (0 until threads).map { t =>
        Future { barrier.await(); t -> log.append(previous, entry(round, states(round), writer = Writer(s"host$t", t, s"op$t"))) }
      }.map(Await.result(_, Duration(60, TimeUnit.SECONDS)))
      val winners = results.collect { case (t, true) => t }
      assert(winners.size == 1, s"round $round: $winners")
      previous = Some(log.read(round))
      assert(previous.get.writer.pid == winners.head)
    } finally pool.shutdown()
    assert(log.ids() == (0L until 20L))
  }

  test("append checks the id and the transition") {
    val (log, _) = freshLog()
    val first = entry(0, State.Creating)
    assert(log.append(None, first))
    assert(!log.append(None, first)) // taken
    assert(intercept[IllegalArgumentException](log.append(Some(first), entry(5, State.Active))).getMessage
      .contains("entry 5 cannot follow entry 0"))
    assert(intercept[IllegalArgumentException](log.append(Some(first), entry(1, State.Deleting))).getMessage
      .contains("DELETING cannot follow the transient CREATING"))
    assert(log.append(Some(first), entry(1, State.Active)))
    assert(log.entries().map(_.state) == Seq(State.Creating, State.Active))
  }

  test("readers use the latest stable entry") {
    val (log, _) = freshLog()
    assert(log.latest().isEmpty && log.latestStable().isEmpty)
    log.append(None, entry(0, State.Creating))
    assert(log.latest().get.state == State.Creating && log.latestStable().isEmpty) // never became ACTIVE
    log.append(Some(log.read(0)), entry(1, State.Active))
    log.append(Some(log.read(1)), entry(2, State.Deleting))
    assert(log.latest().get.state == State.Deleting)
    assert(log.latestStable().get.id == 1) // a crash here leaves the ACTIVE entry readable
  }

  private def write(dir: NioPath, id: Long, text: String): Unit =
    Files.write(dir.resolve(f"$id%020d.json"), text.getBytes(UTF_8))

  test("a partially written last entry is skipped by readers, but not an earlier one") {
    val (log, dir) = freshLog()
    log.append(None, entry(0, State.Creating))
    log.append(Some(log.read(0)), entry(1, State.Active))
    write(dir, 2, """{"log_format": 1, "id": 2, "sta""")
    assert(log.latestStable().get.id == 1)
    assert(intercept[HsbloomException](log.latest()).text.contains("unreadable"))
    write(dir, 0, "not json")
    Files.delete(dir.resolve(f"${2}%020d.json"))
    write(dir, 1, "[]")
    assert(intercept[HsbloomException](log.latestStable()).condition == HsbloomException.CorruptLog)
  }

  test("an entry of any shape is a CorruptLog error naming the way out") {
    val (log, dir) = freshLog()
    Files.createDirectories(dir)
    Seq("[" * 100000, """{"log_format": 1, "id": Infinity}""", """{"log_format": 1, "writer": "x"}""", "\u0000\u00ff",
      """{"log_format": 1, "id": 0, "state": "ACTIVE", "data_version": "0/../../victim"}""").foreach { text =>
      write(dir, 0, text)
      val e = intercept[HsbloomException](log.read(0))
      assert(e.condition == HsbloomException.CorruptLog && e.text.contains("DROP BLOOMFILTER INDEX `idx` FORCE"), text.take(40))
    }
  }

  test("an entry claiming another id, or missing, is damage") {
    val (log, dir) = freshLog()
    log.append(None, entry(0, State.Creating))
    Files.copy(dir.resolve(f"${0}%020d.json"), dir.resolve(f"${1}%020d.json"))
    assert(intercept[HsbloomException](log.read(1)).text.contains("claims to be entry 0"))
    assert(intercept[HsbloomException](log.read(7)).text.contains("does not exist"))
  }

  test("a writer is claimed dead only when that is provable") {
    val me = Writer.current()
    Writer.running(me.operationId) { assert(!me.isProvablyDead) }
    assert(me.isProvablyDead) // this JVM no longer runs that operation
    val finished = new ProcessBuilder("true").start()
    finished.waitFor()
    assert(Writer(Writer.localHost, finished.pid(), "op").isProvablyDead)
    assert(!Writer(Writer.localHost, ProcessHandle.current().parent().get.pid(), "op").isProvablyDead) // alive
    assert(!Writer("another-host", finished.pid(), "op").isProvablyDead) // cannot tell
  }

  test("the next data version is above every version the log named, reading back only to the latest build") {
    val (log, dir) = freshLog()
    assert(DataVersions.next(log, Set.empty) == 0)
    val steps = Seq(State.Creating -> 5L, State.Active -> 5L, State.Refreshing -> 9L, State.Active -> 5L, // rolled back
      State.Refreshing -> 5L, State.Active -> 5L, State.Vacuuming -> 5L, State.Active -> 5L) // quick, vacuum
    var previous: Option[LogEntry] = None
    steps.zipWithIndex.foreach { case ((state, version), n) =>
      val e = entry(n, state, version)
      assert(log.append(previous, e))
      previous = Some(e)
    }
    assert(DataVersions.next(log, Set.empty) == 10)
    write(dir, 0, "not json") // before the latest build: not read
    assert(DataVersions.next(log, Set.empty) == 10)
    assert(DataVersions.next(log, Set(12L)) == 13) // a directory on storage counts too
  }

  test("an entry larger than readers accept is never written") {
    val (log, _) = freshLog()
    val huge = entry(0, State.Creating).copy(message = Some("x" * (hsbloom.format.Layout.MaxLogEntryBytes.toInt + 1)))
    val e = intercept[HsbloomException](log.append(None, huge))
    assert(e.condition == HsbloomException.IndexState && e.text.contains("it was not written"))
    assert(log.ids().isEmpty)
  }
}
