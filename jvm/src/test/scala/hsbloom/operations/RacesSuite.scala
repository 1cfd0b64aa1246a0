package hsbloom.operations

import java.nio.file.Files

import scala.util.Try

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.col
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.{BFIndexConfig, HsbloomException, Hyperspace, RefreshResult}
import hsbloom.log.LogSteps
import hsbloom.testing.{HealthyIndex, Indexes, Queries, SharedSession}
import hsbloom.testing.HealthyIndex.{Name, NumFiles}

/**
 * Two or four writers racing on one operation of one index: exactly one wins, every loser gets an error naming the
 * concurrent operation and what to do, nothing of the losers is written, and the index stays correct and usable
 * (docs/design/log.md).
 *
 * The writers are threads of this JVM on the shared session: they reach the log through the same storage protocol
 * as separate processes (create-if-absent of the next entry). Each runs the operation to the point of writing its
 * transient entry and waits there for the others (`LogSteps.raceBeforeTransient`), so all of them try to write the
 * same entry id: the race is on that write, every time. (A race of two processes is in
 * tests/test_index_management.py.) Uses the healthy index of `HealthyIndex`, on copies.
 */
class RacesSuite extends AnyFunSuite with SharedSession with Indexes with Queries {

  /** Runs each call on a thread of its own, all meeting right before their transient entry; their outcomes. */
  private def race(calls: Seq[() => Any]): Seq[Try[Any]] = {
    LogSteps.raceBeforeTransient(calls.size)
    try {
      val outcomes = new Array[Try[Any]](calls.size)
      val threads = calls.indices.map(i => new Thread(() => outcomes(i) = Try(calls(i)())))
      threads.foreach(_.start())
      threads.foreach(_.join())
      outcomes.toSeq
    } finally LogSteps.clear()
  }

  private def leftoverDirectory(): Unit = Files.createDirectories(systemPath.resolve(Name).resolve("v__=5"))

  // name -> (prepare, the operation, the log's last two states, data directories after, files read for id 7)
  private val races: Seq[(String, () => Unit, (Hyperspace, DataFrame) => Any, Seq[String], Set[String], Int)] = Seq(
    ("create", () => (), (hs, df) => hs.createIndex(df, BFIndexConfig(Name, Seq("id", "s"))),
      Seq("CREATING", "ACTIVE"), Set("v__=0"), 1),
    ("full refresh", () => (), (hs, _) => hs.refreshIndex(Name, "full"), Seq("REFRESHING", "ACTIVE"),
      Set("v__=0", "v__=1"), 1),
    ("incremental refresh", () => (), (hs, _) => hs.refreshIndex(Name, "incremental"), Seq("REFRESHING", "ACTIVE"),
      Set("v__=0", "v__=1"), 1),
    ("quick refresh", () => (), (hs, _) => hs.refreshIndex(Name, "quick"), Seq("REFRESHING", "ACTIVE"),
      Set("v__=0"), 2), // the appended file is read until a build
    ("delete", () => (), (hs, _) => hs.deleteIndex(Name), Seq("DELETING", "DELETED"), Set("v__=0"), NumFiles),
    ("restore", () => hs.deleteIndex(Name), (hs, _) => hs.restoreIndex(Name), Seq("RESTORING", "ACTIVE"),
      Set("v__=0"), 1),
    ("vacuum of an active index", () => leftoverDirectory(), (hs, _) => hs.vacuumIndex(Name),
      Seq("VACUUMING", "ACTIVE"), Set("v__=0"), 1),
    ("vacuum of a deleted index", () => { hs.deleteIndex(Name); leftoverDirectory() }, (hs, _) => hs.vacuumIndex(Name),
      Seq("VACUUMING", "DOESNOTEXIST"), Set.empty, NumFiles))

  for ((operation, prepare, call, lastStates, dataAfter, readFor7) <- races; writers <- Seq(2, 4)) {
    test(s"$writers writers racing on $operation: one wins and the index stays usable") {
      val creating = operation == "create"
      val refreshing = operation.endsWith("refresh")
      if (!creating) HealthyIndex.copyInto(systemPath)
      def grown[T](body: => T): T = if (refreshing) HealthyIndex.withAppendedFile(body) else body
      grown {
        prepare()
        val entriesBefore = log(Name).ids().size
        val expected = HealthyIndex.lookupRows(spark)
        val df = spark.read.parquet(HealthyIndex.source)

        val outcomes = race(Seq.fill(writers)(() => call(hs, df)))

        val losers = outcomes.flatMap(_.failed.toOption)
        assert(losers.size == writers - 1, outcomes) // exactly one wins ...
        losers.foreach { loser => // ... the others learn why, and what to do
          assert(loser.isInstanceOf[HsbloomException], loser)
          val e = loser.asInstanceOf[HsbloomException]
          assert(e.condition == HsbloomException.ConcurrentOperation, e)
          Seq(s"index '$Name'", "at the same time", "nothing was changed", "run this one again")
            .foreach(needle => assertContains(e.text, needle))
        }
        if (refreshing) assert(outcomes.flatMap(_.toOption).collect { case r: RefreshResult => r.refreshed } == Seq(true))
        assert(states(Name).drop(entriesBefore) == lastStates) // the losers wrote nothing
        assert(versions(Name) == dataAfter)
        assert(withHsbloom(HealthyIndex.lookupRows(spark)) == expected)
        assert(withHsbloom(filesRead(spark.read.parquet(HealthyIndex.source).where(col("id") === 7))) == readFor7)
        if (lastStates.last == "DOESNOTEXIST") { // the name is free again
          assert(intercept[HsbloomException](hs.index(Name)).condition == HsbloomException.IndexNotFound)
        } else {
          assert(hs.verifyIndex(Name).healthy)
          // Still usable by the ordinary operations (log-only ones: cheap).
          if (lastStates.last == "ACTIVE") hs.deleteIndex(Name)
          hs.restoreIndex(Name)
          assert(hs.index(Name).state == "ACTIVE")
          assert(withHsbloom(HealthyIndex.lookupRows(spark)) == expected)
        }
      }
    }
  }
}
