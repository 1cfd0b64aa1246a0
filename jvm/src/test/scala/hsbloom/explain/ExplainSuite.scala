package hsbloom.explain

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col, concat, lit}
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.testing.{Indexes, Queries, SharedSession, SparkFeatures}

/**
 * What hsbloom says it does: `PruningExplain` (`hs.explain`, EXPLAIN BLOOMFILTER) shows both plans, the indexes each
 * scan uses with its files before and after, the indexes it does not use and why, the join filters and the joins
 * considered, and leaves the session's setting as it was; `StatementExplain` (`hs.run_explained`, EXPLAIN
 * BLOOMFILTER ANALYZE) runs a statement and reports the scans pruned while it ran.
 */
class ExplainSuite extends AnyFunSuite with SharedSession with Indexes with Queries {
  private val rule = "=" * 72

  private lazy val table: String = {
    val path = dir("events")
    spark.range(0, 2000, 1, 10).select(col("id").as("key"), concat(lit("s"), col("id")).as("name"), (col("id") % 7).as("v"))
      .write.parquet(path)
    path
  }
  private def read(): DataFrame = spark.read.parquet(table)

  /** The text of section `title` of an explain report (up to the next section). */
  private def section(text: String, title: String): String =
    text.split(java.util.regex.Pattern.quote(s"$rule\n$title\n$rule\n"), 2) match {
      case Array(_, rest) => rest.split(java.util.regex.Pattern.quote(s"$rule\n"), 2).head.trim
      case _ => fail(s"no section '$title' in:\n$text")
    }

  test("a pruned lookup: both plans, the index and its files before and after, nothing unused, no joins") {
    create(read(), "events_key", Seq("key"))
    val text = explainText(read().where("key = 1234"))
    assertContains(section(text, "Plan with hsbloom:"), "PrunedFileIndex")
    assertContains(section(text, "Plan without hsbloom:"), "InMemoryFileIndex")
    val used = section(text, "Indexes used:")
    assert(used.startsWith(s"file:$table") || used.contains(table), used)
    assert("index events_key \\(log entry 1, data version 0\\): 10 files -> 1 \\(checks: Probe\\(key, 1 hash\\(es\\)\\)"
      .r.findFirstIn(used).isDefined, used)
    assert(section(text, "Indexes not used:") == "(none)")
    assert(section(text, "Join filters injected:") == "(none)")
    assert(section(text, "Joins considered (what each join feature decided, and why):") ==
      "(none: no join of this query has an indexed key)")
    val unindexed = explainText(read().where("v = 3"))
    assert(section(unindexed, "Indexes used:") == "(none: no scan of this query is pruned by an hsbloom index)")
  }

  test("explain leaves the session's setting as it was, set or not") {
    create(read(), "events_key", Seq("key"))
    val lookup = read().where("key = 5")
    explainText(lookup)
    assert(spark.conf.getOption("spark.hsbloom.enabled").isEmpty)
    Seq("false", "true").foreach { setting =>
      withConf("spark.hsbloom.enabled" -> setting) {
        assertContains(explainText(lookup), "10 files -> 1")
        assert(spark.conf.get("spark.hsbloom.enabled") == setting)
      }
    }
  }

  test("an index over the files of a scan that reads them otherwise is named with the reason") {
    val ints = dir("ints")
    spark.range(0, 1000, 1, 5).select(col("id").cast("int").as("k")).write.parquet(ints)
    create(spark.read.parquet(ints), "ints_k", Seq("k"))
    val retyped = spark.read.schema("k BIGINT").parquet(ints).where("k = 7")
    val notUsed = section(explainText(retyped), "Indexes not used:")
    assert(notUsed.startsWith("ints_k on ") && notUsed.contains("column.k differs"), notUsed)
    // Read whole where this Spark can read the files so (SparkFeatures: not 3.5).
    if (SparkFeatures.readsWidenedParquetInts) assert(withHsbloom(filesRead(retyped)) == 5)
    assert(section(explainText(spark.read.parquet(ints).where("k = 7")), "Indexes not used:") == "(none)")
  }

  test("a scan below a nondeterministic operator is left whole, and explain says why") {
    create(read(), "events_key", Seq("key"))
    val sampled = read().where("key IN (5, 1500)").selectExpr("key", "rand(5) AS r")
    val off = sortedRows(sampled)
    withHsbloom {
      assert(sortedRows(sampled) == off && off.size == 2)
      assert(filesRead(sampled) == 10)
    }
    assertContains(section(explainText(sampled), "Indexes not used:"), "below nondeterministic rand(5): not pruned")
  }

  test("a statement run explained reports the scans pruned while it ran, and none with hsbloom off") {
    create(read(), "events_key", Seq("key"))
    val statement = s"SELECT count(*) FROM parquet.`$table` WHERE key IN (3, 1999)"
    val on = withHsbloom(hs.runExplainedString(statement))
    assert("10 files -> 2".r.findFirstIn(section(on, "Scans pruned while the statement ran (files before -> after):")).isDefined, on)
    assert(section(on, "Joins considered (what each join feature decided, and why):") ==
      "(none: no join of this statement has an indexed key)")
    val off = hs.runExplainedString(statement)
    assert(section(off, "Scans pruned while the statement ran (files before -> after):") ==
      "(none: no scan of this statement was pruned by an hsbloom index)")
  }
}
