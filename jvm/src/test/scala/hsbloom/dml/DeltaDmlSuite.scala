package hsbloom.dml


import org.apache.commons.io.FileUtils
import org.apache.spark.sql.Row
import org.apache.spark.sql.functions.{col, concat, lit, when}
import org.apache.spark.sql.types.{IntegerType, LongType, StructType}
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.BFIndexConfig
import hsbloom.shim.CollectionConverters._
import hsbloom.testing.{Indexes, Queries, NeedsDelta, SharedSession}

/**
 * Delta DELETE, UPDATE and MERGE with hsbloom on read fewer target files and change the table exactly as off
 * (docs/design/dml.md). Every test runs the same statements on two byte-identical copies of a small Delta table
 * (16 files, keys spread over all of them, so Delta's min/max statistics skip nothing): one with hsbloom off, one
 * indexed with hsbloom on. The final tables and each commit's row counts in the Delta history must be the same; and
 * the run with hsbloom must have read fewer target files (`runExplainedString`), so a test cannot pass by not
 * pruning; where the rules must not prune (a cost that does not pay, a source read twice could change, every target
 * row needed), the report says why.
 */
class DeltaDmlSuite extends AnyFunSuite with SharedSession with Indexes with Queries {
  private val Rows = 640
  private val Files = 16
  private val Source = new StructType().add("id", LongType).add("k", IntegerType).add("v", IntegerType)
  /** The row counts of a commit's operationMetrics (times and byte counts differ from run to run). */
  private val Counted = "(?i).*(rows|files|deletionvectors).*"

  /** ids 0..639 spread over 16 files (seven of them null), k = id as an int, one value column; written once. */
  private val bases = scala.collection.mutable.Map[(Boolean, Boolean), String]()
  private def base(dv: Boolean, partitioned: Boolean): String = bases.getOrElseUpdate((dv, partitioned), {
    val path = dir("base")
    val n = col("id")
    val spread = (n * 37) % Rows
    val df = spark.range(Rows).select(when(n % 97 === 5, lit(null)).otherwise(spread).as("id"),
      spread.cast("int").as("k"), concat(lit("s"), n.cast("string")).as("s"), (n % 2).as("part"), lit(0).as("v"))
    val writer = df.repartition(Files).write.format("delta").option("delta.enableDeletionVectors", dv.toString)
    (if (partitioned) writer.partitionBy("part") else writer).save(path)
    path
  })

  /** Two copies of one Delta table: `off` is changed with hsbloom off, `on` (indexed) with hsbloom on. */
  private class Pair(name: String, dv: Boolean, partitioned: Boolean) {
    val off: String = dir("off")
    val on: String = dir("on")
    Seq(off, on).foreach(to => FileUtils.copyDirectory(new java.io.File(base(dv, partitioned)), new java.io.File(to)))
    // A small fpp: the tests count the files read exactly, without false positives.
    hs.createIndex(spark.read.format("delta").load(on), BFIndexConfig(name, Seq("id", "k"), fpp = Some(0.0001)))

    /** Runs `statement` ({t}: the table) on both copies; what hsbloom reported for the `on` run. */
    def run(statement: String): String = {
      useIndexes(false)
      spark.sql(statement.replace("{t}", s"delta.`$off`")).collect()
      val report = withHsbloom(hs.runExplainedString(statement.replace("{t}", s"delta.`$on`")))
      report
    }

    def assertSame(): Unit = {
      assert(sortedRows(spark.read.format("delta").load(on)) == sortedRows(spark.read.format("delta").load(off)))
      assert(history(on) == history(off))
    }
  }

  /** Per commit: the operation and its counted metrics. */
  private def history(path: String): Seq[(Long, String, Map[String, String])] =
    spark.sql(s"DESCRIBE HISTORY delta.`$path`").select("version", "operation", "operationMetrics").collect().map { r =>
      (r.getLong(0), r.getString(1), Option(r.getMap[String, String](2)).map(_.toMap).getOrElse(Map.empty)
        .filter { case (k, _) => k.matches(Counted) })
    }.sortBy(_._1).toSeq

  /** (files before, files after) of each scan the report says hsbloom pruned. */
  private def pruned(report: String): Seq[(Long, Long)] =
    "(\\d+) files -> (\\d+)".r.findAllMatchIn(report).map(m => (m.group(1).toLong, m.group(2).toLong)).toSeq

  private def assertPruned(report: String): Unit =
    assert(pruned(report).exists { case (before, after) => after < before }, report)

  private def sourceView(name: String, rows: Seq[Row], schema: StructType = Source): Unit =
    spark.createDataFrame(rows.asJava, schema).createOrReplaceTempView(name)

  private val MergeUpsert = "MERGE INTO {t} t USING src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v " +
    "WHEN NOT MATCHED THEN INSERT (id, k, s, part, v) VALUES (s.id, s.k, 'new', 0, s.v)"

  for ((dv, partitioned) <- Seq((true, false), (false, true))) {
    test(s"DELETE, UPDATE and MERGE change the table as without hsbloom (deletion vectors $dv, partitioned $partitioned)",
      NeedsDelta) {
      val pair = new Pair(s"dml_${if (dv) 1 else 0}${if (partitioned) 1 else 0}", dv, partitioned)
      assertPruned(pair.run("DELETE FROM {t} WHERE id IN (37, 74, 72)")) // two present, one absent
      assertPruned(pair.run("UPDATE {t} SET v = v + 1 WHERE id = 111 OR id <=> 148 OR id = 210"))
      // Keys present, absent (inserted twice: duplicated absent keys are both inserted), and a null (never matches).
      sourceView("src", Seq(Row(185L, 1, 10), Row(222L, 2, 20), Row(5000L, 3, 30), Row(5000L, 4, 31), Row(null, 5, 50)))
      val report = pair.run(MergeUpsert)
      assertContains(report, "from the source's keys: applied")
      assertPruned(report)
      pair.assertSame()
    }
  }

  test("MERGE: key types, nulls and clauses", NeedsDelta) {
    val pair = new Pair("dml_merge", dv = true, partitioned = false)
    // An int source key against the bigint target column (Spark casts the source side); with <=>, the null source
    // key matches the target's null ids.
    sourceView("src_int", Seq(Row(259, 9), Row(null, 8)), new StructType().add("id", IntegerType).add("v", IntegerType))
    assertPruned(pair.run("MERGE INTO {t} t USING src_int s ON t.id <=> s.id WHEN MATCHED THEN UPDATE SET v = s.v"))
    // A bigint source key against the int column k, one beyond the int range (no target value equals it).
    sourceView("src_long", Seq(Row(333L, 11), Row(5000000333L, 12)), new StructType().add("k", LongType).add("v", IntegerType))
    assertPruned(pair.run("MERGE INTO {t} t USING src_long s ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = s.v"))
    // Duplicated source keys are allowed for a delete-only MERGE.
    sourceView("src", Seq(Row(370L, 0, 0), Row(370L, 0, 1), Row(407L, 0, 0)))
    assertPruned(pair.run("MERGE INTO {t} t USING src s ON t.id = s.id WHEN MATCHED THEN DELETE"))
    // Insert-only MERGE: Delta's left anti join of the source (not materialized: local rows here) with the target.
    assertPruned(pair.run("MERGE INTO {t} t USING (SELECT * FROM VALUES (444L, 0, 1), (6000L, 6, 2) AS v(id, k, v)) s " +
      "ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, k, s, part, v) VALUES (s.id, s.k, 'ins', 1, s.v)"))
    // NOT MATCHED BY SOURCE needs every target row: nothing may be pruned by the source's keys.
    sourceView("src", Seq(Row(481L, 0, 3)))
    val report = pair.run("MERGE INTO {t} t USING src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v " +
      "WHEN NOT MATCHED BY SOURCE AND t.v = 2 THEN UPDATE SET v = 99")
    assert(!report.contains("from the source's keys: applied"), report)
    pair.assertSame()
  }

  test("MERGE pruning is skipped where it would not pay or be safe; a nondeterministic query reads its scan whole",
    NeedsDelta) {
    val pair = new Pair("dml_skips", dv = false, partitioned = false)
    // More keys than worth waiting for (a key is in 1 of 16 files): the cost model skips, with its reason.
    sourceView("src", (1 until 40).map(n => Row(37L * n % Rows, 0, n)))
    val costly = pair.run(MergeUpsert)
    assert(costly.contains("from the source's keys: skipped") || costly.contains("keys; not pruned"), costly)
    // A Delta table as the source is not materialized by Delta, so a second read could see another version.
    val deltaSource = dir("delta_source")
    spark.createDataFrame(Seq(Row(518L, 1, 5)).asJava, Source).write.format("delta").save(deltaSource)
    assertContains(pair.run(s"MERGE INTO {t} t USING delta.`$deltaSource` s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v"),
      "the source reads a Delta table")
    pair.assertSame()
    // rand(5) is seeded per partition (one per file here), so skipping files would change its values.
    withConf("spark.sql.files.openCostInBytes" -> (256L << 20).toString) {
      val query = s"SELECT id, rand(5) AS r FROM delta.`${pair.on}` WHERE id IN (37, 74, 111)"
      val off = sortedRows(spark.sql(query))
      withHsbloom {
        assert(sortedRows(spark.sql(query)) == off && off.size == 3)
        assertContains(explainText(spark.sql(query)), "below nondeterministic rand(5): not pruned")
      }
    }
  }

  test("appended and rewritten files are read until an incremental refresh indexes them", NeedsDelta) {
    val pair = new Pair("dml_stale", dv = false, partitioned = false)
    val appended = spark.createDataFrame(Seq(Row(7000L, 1, "a", 0L, 0), Row(7001L, 2, "a", 0L, 0)).asJava,
      new StructType().add("id", LongType).add("k", IntegerType).add("s", "string").add("part", LongType).add("v", IntegerType))
    Seq(pair.off, pair.on).foreach(p => appended.coalesce(1).write.format("delta").mode("append").save(p))
    // The appended file is not in the index: it is read (with the one indexed file that holds 111).
    val first = pair.run("DELETE FROM {t} WHERE id IN (7000, 111)")
    assert(pruned(first).contains((Files + 1L, 2L)), first)
    // Without deletion vectors the DELETE rewrote both files, and the UPDATE rewrites another: the new files are
    // not in the index, so a key no file holds still reads each of them, and only them, until a refresh.
    assertPruned(pair.run("UPDATE {t} SET v = 3 WHERE id = 148"))
    val files = spark.read.format("delta").load(pair.on).inputFiles.length
    // 72 is in no file (its row's id is null) but within the min/max of every original file: what hsbloom reads
    // is what its index lacks. (A rewritten file holding only 7001 is skipped by min/max already.)
    val absent = "DELETE FROM {t} WHERE id = 72"
    val (before, after) = pruned(pair.run(absent)).distinct match { case Seq(one) => one; case other => fail(s"$other") }
    assert((before == files - 1 || before == files) && after >= 1 && after < before)
    val result = hs.refreshIndex("dml_stale", "incremental")
    assert(result.appendedFiles == after + (files - before), result)
    assert(hs.index("dml_stale").numFiles == files)
    assert(pruned(pair.run(absent)).distinct == Seq((before, 0L)))
    pair.assertSame()
  }

}
