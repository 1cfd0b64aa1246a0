package hsbloom.catalog

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col, lit, when}
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.HsbloomException
import hsbloom.testing.{Indexes, NeedsDelta, Queries, SharedSession, SparkFeatures}

/**
 * An index over a Delta table is used only for scans that read the values it hashed (the read facts of
 * `ReadFacts`): a column mapping change (a swap, a rename to the indexed name, a drop and re-add) or type widening
 * changes the values a scan produces for the indexed column. The literals of every query are taken from the rows
 * Spark reads with hsbloom off after the change, so a stale index would drop exactly the rows asked for. Each case:
 * the same rows with hsbloom on and off, explain naming the fact that differs, quick and incremental refreshes
 * refused with the fix, and a full refresh making the index usable again. (The other formats and session settings:
 * tests/test_read_facts.py.)
 */
class DeltaReadFactsSuite extends AnyFunSuite with SharedSession with Indexes with Queries {
  private val NumFiles = 4
  private val Rows = 100

  /** A Delta table with column mapping by name: id, a (odd numbers, a few nulls), b (large numbers), i (an int). */
  private def deltaTable(properties: String = ""): String = {
    val path = dir("t")
    spark.sql(s"CREATE TABLE delta.`$path` (id BIGINT, a BIGINT, b BIGINT, i INT) USING delta " +
      s"TBLPROPERTIES ('delta.columnMapping.mode' = 'name'$properties)")
    spark.range(Rows).select(col("id"), when(col("id") % 10 === 3, lit(null)).otherwise(col("id") * 2 + 1).as("a"),
      when(col("id") % 10 === 6, lit(null)).otherwise(col("id") + 1000000).as("b"), (col("id") * 3).cast("int").as("i"))
      .repartition(NumFiles, col("id")).write.format("delta").mode("append").save(path)
    path
  }

  /** `=`, `<=>`, `IN`, `IS NULL`, `<=> NULL` and `IS NOT NULL` on `column`, with values it holds as read now. */
  private def assertSameRows(read: () => DataFrame, column: String): Unit = {
    useIndexes(false)
    val present = read().select(column).distinct().orderBy(column).collect().filterNot(_.isNullAt(0)).map(_.get(0)).take(3)
    val predicates = present.map(v => s"$column = $v").toSeq ++ present.take(1).map(v => s"$column <=> $v") ++
      (if (present.isEmpty) Nil else Seq(s"$column IN (${present.mkString(", ")})")) ++
      Seq(s"$column IS NULL", s"$column <=> NULL", s"$column IS NOT NULL")
    sameAnswers(read(), predicates)
  }

  private def assertNotUsed(df: DataFrame, index: String, fact: String): Unit = {
    val notUsed = explainText(df).split("Indexes not used:")(1)
    assert(notUsed.contains(index) && notUsed.contains(fact), notUsed)
  }

  private def assertPrunes(df: DataFrame, predicate: String): Unit =
    assert(withHsbloom(filesRead(df.where(predicate))) < NumFiles, predicate)

  private val changes = Seq(
    "swap a and b" -> Seq("ALTER TABLE {t} RENAME COLUMN a TO tmp", "ALTER TABLE {t} RENAME COLUMN b TO a",
      "ALTER TABLE {t} RENAME COLUMN tmp TO b"),
    "rename b to the indexed name a" -> Seq("ALTER TABLE {t} DROP COLUMN a", "ALTER TABLE {t} RENAME COLUMN b TO a"),
    "drop and re-add a" -> Seq("ALTER TABLE {t} DROP COLUMN a", "ALTER TABLE {t} ADD COLUMNS (a BIGINT)"))

  changes.foreach { case (change, statements) =>
    test(s"Delta column mapping: $change", NeedsDelta) {
      val path = deltaTable()
      def read(): DataFrame = spark.read.format("delta").load(path)
      create(read(), "cm", Seq("a"))
      assertPrunes(read(), "a = 7")
      statements.foreach(s => spark.sql(s.replace("{t}", s"delta.`$path`")))

      assertSameRows(() => read(), "a")
      assertNotUsed(read().where("a = 7"), "cm", "column.a differs")
      Seq("quick", "incremental").foreach { mode =>
        val refused = intercept[HsbloomException](hs.refreshIndex("cm", mode))
        assert(refused.condition == HsbloomException.IndexState && ("no longer matches how its source is read " +
          "\\(column\\.a was .*refresh it in full mode").r.findFirstIn(refused.text).isDefined, refused.text)
      }
      assert(hs.refreshIndex("cm", "full").refreshed && !hs.refreshIndex("cm", "full").refreshed)
      assertSameRows(() => read(), "a")
      val present = read().where("a IS NOT NULL").select("a").collect() // none after a re-add: every file prunes
      assertPrunes(read(), s"a = ${present.headOption.map(_.getLong(0)).getOrElse(7L)}")
    }
  }

  // Where this Delta can widen a column's type (SparkFeatures: not Delta 3.3, Spark 3.5's).
  if (SparkFeatures.deltaTypeWidening) test("Delta type widening", NeedsDelta) {
    val path = deltaTable(", 'delta.enableTypeWidening' = 'true'")
    def read(): DataFrame = spark.read.format("delta").load(path)
    create(read(), "widened", Seq("i"))
    spark.sql(s"ALTER TABLE delta.`$path` ALTER COLUMN i TYPE BIGINT")
    spark.range(3).selectExpr("id + 10000 AS id", "CAST(NULL AS BIGINT) AS a", "id AS b", "id + 5000000000 AS i")
      .write.format("delta").mode("append").save(path)
    assertSameRows(() => read(), "i")
    assertNotUsed(read().where("i = 3"), "widened", "column.i differs")
    assert(hs.refreshIndex("widened", "full").refreshed)
    assertSameRows(() => read(), "i")
  }
}
