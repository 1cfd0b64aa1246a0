package hsbloom.operations

import java.nio.file.Files

import org.apache.spark.sql.functions.col
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.{BFIndexConfig, HsbloomException}
import hsbloom.catalog.IndexCatalog
import hsbloom.log.LogSteps
import hsbloom.testing.{HealthyIndex, Indexes, Queries, SharedSession}
import hsbloom.testing.HealthyIndex.{Name, NumFiles}

/**
 * A writer that dies at a step of create, refresh (full, incremental, quick), delete, restore or vacuum leaves an
 * index that answers correctly, never uses a half-built version, and that the documented operations recover
 * (docs/design/log.md, "Crashes, cancel and dead writers"; docs/troubleshooting.md).
 *
 * The writer is an operation of this JVM stopped at the step by the jar's test seam (`LogSteps.stopAt`: a
 * throwable no rollback catches, so nothing more is written, as after a kill); its writer is then provably gone
 * (its operation no longer runs here), as a killed process is. A build killed mid-way leaves what its tasks wrote
 * so far: here the operation stops after its transient entry and the test writes that partial data (some files of
 * the new data version, no complete file table). A real writer JVM killed (mid-create, and after a refresh
 * wrote its data) is tests/test_index_management.py's.
 * Uses the healthy index of `HealthyIndex`, on copies.
 */
class CrashStepsSuite extends AnyFunSuite with SharedSession with Indexes with Queries {
  private def source = HealthyIndex.source
  private def lookups: Seq[String] = HealthyIndex.lookupRows(spark)
  private def readFor7: Long = withHsbloom(filesRead(spark.read.parquet(source).where(col("id") === 7)))

  /** Runs `call`, an operation stopped at `step`: it ends with `LogSteps.StepReached`, writing nothing more. */
  private def stoppingAt(step: String)(call: => Any): Unit = {
    LogSteps.stopAt(step)
    try {
      val stopped = intercept[LogSteps.StepReached](call)
      assert(stopped.getMessage.contains(s"the writer stopped at step '$step'"))
    } finally LogSteps.clear()
    IndexCatalog.invalidateAll()
  }

  /** What a build killed mid-way leaves in its data version: a part file of its file table, no `_SUCCESS`. */
  private def partialData(version: Long): Unit = {
    val files = systemPath.resolve(Name).resolve(s"v__=$version").resolve("files")
    Files.createDirectories(files)
    Files.write(files.resolve("part-00000-killed.snappy.parquet"), Array.fill[Byte](300)(7))
  }

  private def leftoverDirectory(): Unit = Files.createDirectories(systemPath.resolve(Name).resolve("v__=5"))

  // name -> (operation, step, prepare, state left, index used after the crash, state after recovery)
  private val stateCases: Seq[(String, String, String, () => Unit, String, Boolean, String)] = Seq(
    ("delete dies after DELETING", "delete", "transient", () => (), "DELETING", true, "DELETED"),
    ("restore dies after RESTORING", "restore", "transient", () => hs.deleteIndex(Name), "RESTORING", false, "ACTIVE"),
    ("vacuum of an active index dies after removing a directory", "vacuum", "first-removal", () => leftoverDirectory(),
      "VACUUMING", true, "ACTIVE"),
    ("vacuum of a deleted index dies after removing a directory", "vacuum", "first-removal",
      () => { hs.deleteIndex(Name); leftoverDirectory() }, "VACUUMING", false, "DOESNOTEXIST"))

  private def stateOperation(operation: String): () => Unit = operation match {
    case "delete" => () => hs.deleteIndex(Name)
    case "restore" => () => hs.restoreIndex(Name)
    case "vacuum" => () => hs.vacuumIndex(Name)
  }

  stateCases.foreach { case (name, operation, step, prepare, left, used, recovered) =>
    test(s"a writer dying at a step leaves a recoverable index: $name") {
      HealthyIndex.copyInto(systemPath)
      prepare()
      stoppingAt(step)(stateOperation(operation)())
      assert(hs.indexes().collect().map(_.getAs[String]("state")).toSeq == Seq(left))
      assert(withHsbloom(lookups) == HealthyIndex.expected)
      assert(readFor7 == (if (used) 1 else NumFiles))

      stateOperation(operation)() // finds the writer gone, cancels its step, runs the operation
      if (recovered == "DOESNOTEXIST") {
        assert(intercept[HsbloomException](hs.index(Name)).condition == HsbloomException.IndexNotFound)
        assert(versions(Name).isEmpty)
      } else {
        assert(hs.index(Name).state == recovered)
        assert(hs.verifyIndex(Name).healthy) // DELETED data is checked too: restore would use it
      }
      assert(withHsbloom(lookups) == HealthyIndex.expected)
    }
  }

  // name -> (operation, step, recovery)
  private val buildCases: Seq[(String, String, String, String)] = Seq(
    ("create dies after CREATING", "create", "transient", "the next operation"),
    ("create dies mid-build", "create", "mid-build", "cancel"),
    ("create dies with its data built", "create", "built", "force delete"),
    ("full refresh dies after REFRESHING", "full", "transient", "the next operation"),
    ("full refresh dies mid-build", "full", "mid-build", "force delete"),
    ("full refresh dies with its data built", "full", "built", "vacuum"),
    ("incremental refresh dies after REFRESHING", "incremental", "transient", "cancel"),
    ("incremental refresh dies mid-build", "incremental", "mid-build", "the next operation"),
    ("incremental refresh dies with its data built", "incremental", "built", "force delete"),
    ("quick refresh dies after REFRESHING", "quick", "transient", "the next operation"))

  buildCases.foreach { case (name, operation, step, recovery) =>
    test(s"a build dying at a step never uses its data and is recovered: $name") {
      val creating = operation == "create"
      val quick = operation == "quick"
      if (!creating) HealthyIndex.copyInto(systemPath)
      val create = () => hs.createIndex(spark.read.parquet(source), BFIndexConfig(Name, Seq("id", "s")))
      val redo = () => if (creating) create() else hs.refreshIndex(Name, operation): Unit
      def grown[T](body: => T): T = if (creating) body else HealthyIndex.withAppendedFile(body)
      grown {
        val expected = lookups
        val before = versions(Name)
        stoppingAt(if (step == "mid-build") "transient" else step)(redo())
        val stuck = log(Name).latest().get
        if (step == "mid-build") partialData(stuck.dataVersion.get)
        assert(stuck.state.name == (if (creating) "CREATING" else "REFRESHING"))
        val abandoned = versions(Name) -- before
        if (step == "mid-build") assert(abandoned.nonEmpty && !abandoned.exists(complete(Name, _)), abandoned)
        if (step == "built") assert(abandoned.nonEmpty && abandoned.forall(complete(Name, _)), abandoned)
        assert(withHsbloom(lookups) == expected)
        // Never the unfinished version: no index at all for a create, else the previous version (one file for
        // id 7) and the appended file, which it does not hold.
        assert(readFor7 == (if (creating) NumFiles else 2))

        recovery match {
          case "the next operation" => redo() // it finds the writer gone and undoes its step first
          case "cancel" => hs.cancel(Name); redo()
          case "vacuum" => hs.vacuumIndex(Name); redo()
          case "force delete" => hs.deleteIndex(Name, force = true); hs.vacuumIndex(Name); create()
        }
        val info = hs.index(Name)
        assert(info.state == "ACTIVE" && info.numFiles == (if (creating || quick) NumFiles else NumFiles + 1))
        assert((abandoned & versions(Name)).isEmpty) // the unfinished data is gone ...
        assert(quick || info.dataVersion > stuck.dataVersion.get) // ... and its version never reused
        assert(hs.verifyIndex(Name).healthy)
        assert(withHsbloom(lookups) == expected)
        assert(readFor7 == (if (quick) 2 else 1))
      }
    }
  }

  test("a refresh stopped with its data built leaves the previous version in use until the next refresh") {
    HealthyIndex.copyInto(systemPath)
    HealthyIndex.withAppendedFile {
      stoppingAt("built")(hs.refreshIndex(Name, "incremental"))
      assert(states(Name) == Seq("CREATING", "ACTIVE", "REFRESHING") && complete(Name, "v__=1"))
      assert(hs.index(Name).state == "REFRESHING" && stable(Name).dataVersion.contains(0L))
      val expected = withHsbloom(lookups)
      assert(expected == sortedLookups(enabled = false))
      assert(readFor7 == 2) // version 0 prunes; the appended file is read
      val result = hs.refreshIndex(Name, "incremental") // the stopped writer is provably gone
      assert(result.refreshed && result.appendedFiles == 1)
      assert(states(Name) == Seq("CREATING", "ACTIVE", "REFRESHING", "ACTIVE", "REFRESHING", "ACTIVE"))
      assert(hs.index(Name).dataVersion == 2 && !versions(Name).contains("v__=1")) // never the stopped refresh's version
      assert(withHsbloom(lookups) == expected && readFor7 == 1)
    }
  }

  private def sortedLookups(enabled: Boolean): Seq[String] = { useIndexes(enabled); try lookups finally useIndexes(false) }
}
