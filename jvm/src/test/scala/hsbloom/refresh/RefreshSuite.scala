package hsbloom.refresh

import scala.util.Try

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.col
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.{HsbloomException, RefreshResult}
import hsbloom.testing.{Refreshes, SharedSession}

/**
 * refresh in each mode on Parquet directories: what each finds changed (appended, deleted, changed files), what it
 * writes (the log only, a data directory beside the earlier ones, a whole new version), what it refuses, and two
 * refreshes at once. After every change of the source and every refresh, predicates select the same rows with
 * hsbloom on and off. (Delta tables: DeltaRefreshSuite; versions of several directories: RefreshVersionsSuite.)
 */
class RefreshSuite extends AnyFunSuite with SharedSession with Refreshes {
  private val PerFile = 50

  test("without a global filter the distinct count stays the column's through an incremental refresh") {
    // ndv counts each key once (ndv_scope "column") without a global filter, and an incremental refresh adds the
    // appended files' count: the same 3,000 keys in two files count 3,000, not 6,000 as the files' sum does.
    val directory = dir("twice")
    val keys = spark.range(0, 3000).selectExpr("id AS key")
    keys.coalesce(1).write.parquet(directory)
    keys.coalesce(1).write.mode("append").parquet(directory)
    create(spark.read.parquet(directory), "twice", Seq("key"))
    val created = stable("twice").summary.get.column("key").get
    assert(created.ndvOfColumn.contains(true) && created.globalFilterBytes == 0, created)
    assert(math.abs(created.ndv - 3000) <= 30 && created.fileNdvSum.exists(s => math.abs(s - 6000) <= 60), created)
    spark.range(3000, 4000).selectExpr("id AS key").coalesce(1).write.mode("append").parquet(directory)
    assert(hs.refreshIndex("twice", "incremental").refreshed)
    val refreshed = stable("twice").summary.get.column("key").get
    assert(refreshed.ndvOfColumn.contains(true) && math.abs(refreshed.ndv - 4000) <= 40, refreshed)
  }

  test("each mode on a Parquet directory: appended, deleted and rewritten files") {
    val directory = dir("events")
    keyed(0, 6).write.parquet(directory)
    def read(): DataFrame = spark.read.parquet(directory)
    create(read(), "events", Seq("key", "name"), globalFilter = true)
    val first = hs.index("events")

    val quiet = hs.refreshIndex("events", "quick")
    assert(!quiet.refreshed && quiet.message.contains("nothing to refresh"))
    assert(!hs.refreshIndex("events", "incremental").refreshed && !hs.refreshIndex("events", "full").refreshed)
    assert(states("events") == Seq("CREATING", "ACTIVE")) // nothing written

    // Append two files, remove one, rewrite one in place (changed = deleted + appended).
    val parts = partFiles(directory)
    keyed(1000, 2).write.mode("append").parquet(directory)
    removePart(parts(0))
    rewriteInPlace(parts(1), keyed(5000, 1, perFile = 3))
    val keys = Seq[Long](1000, 1075, 5001, 160, 299, 10, 60) // appended x2, rewritten, kept x2, deleted, rewritten
    sameAnswers(read(), predicatesFor(keys)) // stale index: still correct

    val quick = hs.refreshIndex("events", "quick")
    assert((quick.refreshed, quick.appendedFiles, quick.deletedFiles) == ((true, 3L, 2L)))
    val recorded = hs.index("events")
    assert(recorded.dataVersion == first.dataVersion) // nothing built
    assert((recorded.staleness.appendedFilesNotIndexed, recorded.staleness.deletedFilesStillIndexed) == ((3L, 2L)))
    assert(!recorded.staleness.isCurrent && stable("events").pending.isDefined)
    assert(!hs.refreshIndex("events", "quick").refreshed) // already recorded
    sameAnswers(read(), predicatesFor(keys))
    withHsbloom {
      assert(filesRead(read().where("key = 1000")) == 3) // the three files the data lacks
      assert(filesRead(read().where("key = 160")) == 4) // ... plus the one indexed file that holds it
    }

    val incremental = hs.refreshIndex("events", "incremental")
    assert((incremental.appendedFiles, incremental.deletedFiles) == ((3L, 2L)))
    val info = hs.index("events")
    assert(info.dataVersion == first.dataVersion + 1)
    assert(info.numFiles == 7 && info.numRows.contains(6L * PerFile + 3))
    assert(info.staleness.appendedFilesNotIndexed == 0 && info.staleness.globalFilterDeletedFiles == 2)
    val ids = heldIds("events")
    assert(ids.size == 7 && ids.max >= 6) // appended files got new ids
    assert(info.dataPaths.size == 2) // the appended files' directory, and the first one referred to
    assert(fileTable("events") == Map("key" -> ids, "name" -> ids))
    val (before, after) = (globalFilter(first.dataPaths, "key"), globalFilter(info.dataPaths, "key"))
    assert(after.numBytes == before.numBytes) // same size: OR-ed
    assert(holdsAll(after, Seq(1000, 1099, 5000, 5002, 0, 299)))
    sameAnswers(read(), predicatesFor(keys))
    withHsbloom(assert(filesRead(read().where("key = 1000")) == 1 && filesRead(read().where("key = 5001")) == 1))
    assert(!hs.refreshIndex("events", "incremental").refreshed)

    val full = hs.refreshIndex("events", "full") // the global filters hold deleted values: a full build has work
    assert(full.refreshed && hs.index("events").staleness.isCurrent)
    assert(!hs.refreshIndex("events", "full").refreshed)
    sameAnswers(read(), predicatesFor(keys))
    assert(states("events") == Seq("CREATING", "ACTIVE") ++ Seq.fill(3)(Seq("REFRESHING", "ACTIVE")).flatten)
    assert(versions("events") == Set("v__=0", "v__=1", "v__=2"))
    hs.vacuumIndex("events")
    assert(versions("events") == Set("v__=2"))
    sameAnswers(read(), predicatesFor(keys))
  }

  test("refresh refuses an unknown mode, a column of another type incrementally, and a deleted index") {
    val directory = dir("typed")
    keyed(0, 2).write.parquet(directory)
    create(spark.read.parquet(directory), "typed", Seq("key"))
    val mode = intercept[HsbloomException](hs.refreshIndex("typed", "fast"))
    assert(mode.condition == HsbloomException.InvalidArgument)
    assertContains(mode.text, "refresh mode must be one of full, incremental, quick; got 'fast'")
    // The column is now written as a string: old rows hold hashes of longs.
    keyed(0, 2).withColumn("key", col("key").cast("string")).write.mode("overwrite").parquet(directory)
    val typed = intercept[HsbloomException](hs.refreshIndex("typed", "incremental"))
    assert(typed.condition == HsbloomException.IndexState)
    assertContains(typed.text, "column 'key' is now string, but the index holds bigint values; refresh it in full mode")
    assert(hs.refreshIndex("typed", "full").refreshed)
    assert(hs.index("typed").source.schema.toMap.get("key").contains("string"))
    hs.deleteIndex("typed")
    assertContains(intercept[HsbloomException](hs.refreshIndex("typed", "quick")).text,
      "cannot refresh index 'typed': it is DELETED, and refresh needs ACTIVE")
  }

  test("two refreshes at once: one wins, and queries meanwhile stay correct") {
    val directory = dir("busy")
    keyed(0, 4).write.parquet(directory)
    def read(): DataFrame = spark.read.parquet(directory)
    create(read(), "busy", Seq("key"))
    keyed(1000, 2).write.mode("append").parquet(directory)
    val predicates = predicatesFor(Seq(0, 150, 1000, 1060))
    val expected = outcomes(read(), predicates, enabled = false)
    val barrier = new java.util.concurrent.CyclicBarrier(3)
    val results = new Array[Try[RefreshResult]](2)
    val threads = (0 until 2).map(i => new Thread(() => { barrier.await(); results(i) = Try(hs.refreshIndex("busy", "full")) }))
    threads.foreach(_.start())
    barrier.await()
    while (threads.exists(_.isAlive)) assert(outcomes(read(), predicates, enabled = true) == expected) // meanwhile
    threads.foreach(_.join())
    useIndexes(false)
    val failures = results.toSeq.flatMap(_.failed.toOption)
    assert(failures.size == 1, results.toSeq)
    val lost = failures.head.asInstanceOf[HsbloomException]
    assert(lost.condition == HsbloomException.ConcurrentOperation && lost.text.contains("index 'busy'"), lost)
    assert(states("busy") == Seq("CREATING", "ACTIVE", "REFRESHING", "ACTIVE") && hs.index("busy").numFiles == 6)
  }

}

