package hsbloom.shim

import scala.util.Random

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.functions.{col, expr}
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.testing.{Indexes, Queries, NeedsDelta, SharedSession}

/**
 * Delta's classes as the shim recognizes them on a real table (`Delta`: by name, read by reflection), and the
 * scans of a table with deletion vectors pruned at every version: deleted rows never come back, and since a
 * file's filter holds every row stored in it, pruning applies at the latest version, by time travel and after a
 * RESTORE. Rows with hsbloom on equal rows with it off throughout.
 */
class DeltaScanSuite extends AnyFunSuite with SharedSession with Indexes with Queries {

  /** The file relation of `df`'s analyzed plan, as a DataFrame given to create_index has it. */
  private def relation(df: DataFrame): HadoopFsRelation =
    df.queryExecution.analyzed.collectFirst { case FileRelation(_, fs, _, _) => fs }.getOrElse(fail("no file scan"))

  test("the shim reads a Delta scan's snapshot version, root and column mapping; Parquet is not Delta", NeedsDelta) {
    val table = dir("mapped")
    spark.sql(s"CREATE TABLE delta.`$table` (id BIGINT, a BIGINT) USING delta " +
      "TBLPROPERTIES ('delta.columnMapping.mode' = 'name')")
    spark.range(10).selectExpr("id", "id * 2 AS a").write.format("delta").mode("append").save(table)
    spark.sql(s"ALTER TABLE delta.`$table` RENAME COLUMN a TO b")
    val latest = relation(spark.read.format("delta").load(table))
    val first = relation(spark.read.format("delta").option("versionAsOf", 1).load(table))
    assert(Delta.isDelta(latest) && Delta.isLogFileIndex(latest.location) && !Delta.isBatchIndex(latest.location))
    val (version, root, catalogTable) = Delta.logFileIndexSnapshot(latest.location)
    assert(version == 2 && root.stripSuffix("/").endsWith(table.stripSuffix("/")) && catalogTable.isEmpty)
    assert(Delta.logFileIndexSnapshot(first.location)._1 == 1)
    assert(FileSources.formatName(latest) == "delta")
    val (mode, schema) = Delta.columnMapping(latest.fileFormat)
    assert(mode == "NameMapping" && schema.fieldNames.toSeq == Seq("id", "b"))
    assert(Delta.physicalName(schema("b")) != "b" && Delta.physicalName(schema("b")).startsWith("col-"))

    val parquet = dir("plain")
    spark.range(3).write.parquet(parquet)
    val plain = relation(spark.read.parquet(parquet))
    assert(!Delta.isDelta(plain) && !Delta.isLogFileIndex(plain.location) && FileSources.formatName(plain) == "parquet")
    val unmapped = dir("unmapped")
    spark.range(2).write.format("delta").save(unmapped)
    assert(Delta.columnMapping(relation(spark.read.format("delta").load(unmapped)).fileFormat)._1 == "NoMapping")
    assert(FileSources.isFixedListing(plain.location) && !FileSources.isFixedListing(latest.location))
    // The scan Delta prepares for a query pins its snapshot (the index the physical rule prunes).
    val scan = spark.read.format("delta").load(table).where("id = 3").queryExecution.executedPlan.collectFirst {
      case s: org.apache.spark.sql.execution.FileSourceScanExec => s
    }.getOrElse(fail("no scan"))
    assert(Delta.isPinnedIndex(scan.relation.location) && Delta.isDelta(scan.relation))
  }

  test("a table with deletion vectors is pruned at every version, after a DELETE and a RESTORE", NeedsDelta) {
    val table = dir("delta")
    // Keys scattered over the files (a permutation of 0..3000), so Delta's min/max skipping cannot prune alone.
    spark.range(0, 3000, 1, 6).select(expr("pmod(id * 7919, 3001)").as("key"), (col("id") % 10).as("v"), col("id"))
      .write.format("delta").option("delta.enableDeletionVectors", "true").save(table)
    spark.sql(s"DELETE FROM delta.`$table` WHERE key % 3 = 0")
    val metrics = spark.sql(s"DESCRIBE HISTORY delta.`$table`").select("operationMetrics").head().getMap[String, String](0)
    assert(metrics.getOrElse("numDeletionVectorsAdded", "0").toInt > 0, metrics)
    create(spark.read.format("delta").load(table), "delta_key", Seq("key"))
    def read(): DataFrame = spark.read.format("delta").load(table)
    def asOf(v: Long): DataFrame = spark.read.format("delta").option("versionAsOf", v).load(table)
    // The keys each condition finds (key 3 and 6 deleted); None: not checked beyond on == off.
    val conditions = Seq("key = 3" -> Some(Seq[Long]()), "key IN (3, 4, 5, 6)" -> Some(Seq[Long](4, 5)),
      "key = 4 OR v = 3" -> None, "key IS NULL" -> Some(Seq[Long]()))
    val rng = new Random(17)
    def k: Int = rng.nextInt(3011) - 5
    def leaf(): String = Seq(s"key = $k", s"key IN ($k, $k, $k)", s"key <=> $k", "key IS NULL", s"v = ${rng.nextInt(10)}",
      s"NOT (key = $k)", s"key > $k")(rng.nextInt(7))
    val predicates = Seq.fill(16)(Seq(leaf(), s"(${leaf()}) OR (${leaf()})", s"(${leaf()}) AND (${leaf()})")(rng.nextInt(3)))
    val found = sameAnswers(read(), conditions.map(_._1) ++ predicates)
    conditions.zip(found).foreach { case ((condition, keys), ids) =>
      keys.foreach(want => assert(ids.toOption.get.map(i => i * 7919 % 3001).sorted == want, condition)) // key of id i
    }
    val unpruned = filesRead(read().where("key = 4")) // after Delta's own min/max skipping
    withHsbloom {
      assert(filesRead(read().where("key = 4")) == 1 && unpruned > 1)
      assertContains(explainText(read().where("key = 4")), "PrunedFileIndex")
      assert(fileCounts(read().where("key = 4")) == ((1L, Some(unpruned), Some(unpruned - 1)))) // before: after Delta's
    }

    // A newer version (more deletions), the version before the DELETE, and a RESTORE: all correct, all pruned.
    spark.sql(s"DELETE FROM delta.`$table` WHERE key = 4")
    spark.sql(s"RESTORE TABLE delta.`$table` TO VERSION AS OF 0")
    val checks = Seq("key = 3", "key = 4", "key IN (3, 4, 6)", "key = 6 OR v = 1")
    Seq(read(), asOf(0), asOf(1), asOf(2)).foreach(df => sameAnswers(df, checks))
    val restoredUnpruned = filesRead(read().where("key = 3"))
    withHsbloom {
      assert(read().where("key = 3").select("key").collect().map(_.getLong(0)).toSeq == Seq(3L)) // restored
      assert(filesRead(read().where("key = 3")) == 1 && restoredUnpruned > 1) // another version, same files: pruned
      assert(filesRead(asOf(1).where("key = 4")) == 1) // time travel to the indexed version
    }
  }
}
