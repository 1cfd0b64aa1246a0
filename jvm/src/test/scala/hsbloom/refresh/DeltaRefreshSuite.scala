package hsbloom.refresh

import java.io.File

import scala.collection.mutable

import org.apache.spark.sql.DataFrame
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.testing.{NeedsDelta, Refreshes, SharedSession}

/**
 * refresh of indexes over Delta tables: the changes come from the table's log (the add and remove actions of the
 * commits since the version the data covers), a file that only got a deletion vector is the same file (its filter
 * still holds), and a log cleaned up is read by comparing listings. After each of Delta's operations and each
 * refresh, predicates select the same rows with hsbloom on and off, at the latest version and by time travel.
 */
class DeltaRefreshSuite extends AnyFunSuite with SharedSession with Refreshes {

  /** The newest commit of the table's log (a query of its history costs a job). */
  private def version(table: String): Long =
    new File(table, "_delta_log").listFiles.map(_.getName).filter(_.matches("\\d+\\.json")).map(_.stripSuffix(".json").toLong).max

  test("each mode through Delta's append, DELETE, UPDATE, MERGE, OPTIMIZE and overwrite", NeedsDelta) {
    val table = dir("delta")
    keyed(0, 6).write.format("delta").option("delta.enableDeletionVectors", "true").save(table)
    def latest(): DataFrame = spark.read.format("delta").load(table)
    def asOf(v: Long): DataFrame = spark.read.format("delta").option("versionAsOf", v).load(table)
    def sql(statement: String): Unit = spark.sql(statement.replace("{t}", s"delta.`$table`")).collect()
    create(latest(), "lake", Seq("key", "name"))
    // Few predicates (each is one Delta scan to plan): a key of each generation (first write, append, update,
    // overwrite), IN, OR of both indexed columns, OR with a column the index does not hold.
    val predicates = Seq("key = 120", "key IN (0, 1035, 1040, 3001, 3100)", "key = 2001 OR name = 'k0'", "key = 2030 OR v = 3")
    // The rows each predicate selects without hsbloom, once per table version: a version's rows never change.
    val answersOff = mutable.Map[Long, Seq[Either[String, Seq[Long]]]]()
    def check(current: Long, versions: Long*): Unit =
      ((current, latest()) +: versions.map(v => (v, asOf(v)))).foreach { case (v, df) =>
        val off = answersOff.getOrElseUpdate(v, outcomes(asOf(v), predicates, enabled = false))
        assert(outcomes(df, predicates, enabled = true) == off, (v, versions))
        useIndexes(false)
      }

    val operations: Seq[(String, () => Unit)] = Seq(
      "append" -> (() => keyed(1000, 2).write.format("delta").mode("append").save(table)),
      "delete" -> (() => sql("DELETE FROM {t} WHERE key % 3 = 0")), // deletion vectors
      "update" -> (() => sql("UPDATE {t} SET key = key + 2000 WHERE key < 60")),
      "merge" -> (() => sql("MERGE INTO {t} AS t USING (SELECT id + 1030 AS id, id + 1030 AS key, 'merged' AS name, " +
        "1L AS v FROM range(0, 40)) AS s ON t.key = s.key WHEN MATCHED THEN UPDATE SET t.name = s.name " +
        "WHEN NOT MATCHED THEN INSERT *")),
      "optimize" -> (() => sql("OPTIMIZE {t}")),
      "overwrite" -> (() => keyed(3000, 3).write.format("delta").mode("overwrite").save(table)))
    val modes = Seq("quick", "incremental", "incremental")
    // Data directories the version reads after each operation: the incremental refreshes refer to earlier data
    // until OPTIMIZE drops more files than the table keeps, which compacts.
    val parts = Map("append" -> 2, "update" -> 3, "merge" -> 4, "optimize" -> 1, "overwrite" -> 2)
    operations.zipWithIndex.foreach { case ((operation, run), step) =>
      val before = version(table)
      run()
      val after = version(table)
      check(after) // a stale index: still correct
      val mode = modes(step % 3)
      var result = hs.refreshIndex("lake", mode)
      if (operation == "delete") { // deletion vectors only: the files, and so their filters, are unchanged
        assert(!result.refreshed && result.message.contains("nothing to refresh"), result)
        check(after, before)
      } else {
        assert(result.refreshed, (operation, result))
        if (mode == "quick") {
          val staleness = hs.index("lake").staleness
          assert(staleness.checkedDeltaVersion.contains(after) && staleness.dataDeltaVersion.exists(_ < after))
          assert(staleness.appendedFilesNotIndexed > 0)
          check(after)
          result = hs.refreshIndex("lake", "incremental")
        }
        operation match { // what the log's actions said changed
          case "append" => assert((result.appendedFiles, result.deletedFiles) == ((2L, 0L)))
          case "update" => assert(result.appendedFiles >= 1, result) // the updated rows in new files
          case "optimize" | "overwrite" => assert(result.deletedFiles > 0 && result.appendedFiles > 0, result)
          case _ => assert(result.appendedFiles > 0, result)
        }
        val info = hs.index("lake")
        assert(info.source.deltaVersion.contains(after) && info.staleness.appendedFilesNotIndexed == 0, operation)
        assert(info.dataPaths.size == parts(operation), (operation, info.dataPaths))
        check(after, before)
        val probe = latest().selectExpr("max(key)").head().getLong(0)
        assert(withHsbloom(filesRead(latest().where(s"key = $probe"))) == 1, operation) // the new files are covered
      }
    }

    // Time travel by timestamp, to the first version and to the one before the overwrite: the answers of those
    // versions read by number with hsbloom off (both were checked above).
    val history = spark.sql(s"DESCRIBE HISTORY delta.`$table`").orderBy("version").collect()
    Seq(history.head, history(history.length - 2)).foreach { commit =>
      val stamp = commit.getAs[java.sql.Timestamp]("timestamp").toString
      val df = spark.read.format("delta").option("timestampAsOf", stamp).load(table)
      assert(outcomes(df, predicates, enabled = true) == answersOff(commit.getAs[Long]("version")), commit)
    }
    useIndexes(false)
    assert(!hs.refreshIndex("lake", "incremental").refreshed)
  }

  test("a Delta table whose log was cleaned up is refreshed by comparing listings", NeedsDelta) {
    val table = dir("expired")
    keyed(0, 3).write.format("delta").option("delta.checkpointInterval", "1").save(table)
    create(spark.read.format("delta").load(table), "expired", Seq("key"))
    keyed(500, 1).write.format("delta").mode("append").save(table)
    keyed(600, 1).write.format("delta").mode("append").save(table)
    assert(new File(table, f"_delta_log/${1}%020d.json").delete()) // as if cleaned up (checkpoints keep the table)
    val result = hs.refreshIndex("expired", "incremental")
    assert((result.appendedFiles, result.deletedFiles) == ((2L, 0L)))
    sameAnswers(spark.read.format("delta").load(table), predicatesFor(Seq(0, 120, 500, 620)))
  }

  test("a Delta table re-created at an older version is compared by listing", NeedsDelta) {
    val table = dir("recreated")
    keyed(0, 2).write.format("delta").save(table)
    keyed(100, 1).write.format("delta").mode("append").save(table)
    create(spark.read.format("delta").load(table), "recreated", Seq("key"))
    org.apache.commons.io.FileUtils.deleteDirectory(new File(table))
    keyed(200, 2).write.format("delta").save(table) // version 0 again: below the version the index holds
    val result = hs.refreshIndex("recreated", "incremental")
    assert((result.appendedFiles, result.deletedFiles) == ((2L, 3L)), result)
    sameAnswers(spark.read.format("delta").load(table), predicatesFor(Seq(0, 120, 210, 260)))
  }
}
