package hsbloom

import org.apache.spark.sql.Row
import org.apache.spark.sql.execution.SparkPlan
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.explain.PruningExplain
import hsbloom.testing.SharedSession

/**
 * The Scala API (`hsbloom.Hyperspace`) as a Scala or Java job uses it: on a real local session with hsbloom's
 * extension, over Parquet written by Spark. Each operation once, the answers of queries with hsbloom on equal to
 * those with it off while fewer files are read, and bad input as `HsbloomException`s with their error classes.
 */
class HyperspaceSuite extends AnyFunSuite with SharedSession {
  private def table(name: String, from: Long, to: Long, files: Int): String = {
    val path = suiteDir.resolve(name).toString
    spark.range(from, to, 1, files).selectExpr("id", "cast(id as string) AS s", "id % 7 AS g")
      .write.mode("append").parquet(path)
    path
  }

  private def filesRead(plan: SparkPlan): Long = PruningExplain.filesRead(plan)

  private def lookup(path: String, id: Long, enabled: Boolean): (Seq[Row], Long) = {
    spark.conf.set("spark.hsbloom.enabled", enabled.toString)
    val df = spark.read.parquet(path).where(s"id = $id")
    val rows = df.collect().toSeq
    (rows, filesRead(df.queryExecution.executedPlan))
  }

  test("create, query, refresh in every mode, describe, verify, delete, restore, vacuum") {
    val hs = new Hyperspace(spark)
    val path = table("events", 0, 20000, 8)
    hs.createIndex(spark.read.parquet(path), BFIndexConfig("events_ids", Seq("id", "s")))
    val info = hs.index("events_ids")
    assert(info.state == "ACTIVE" && info.numFiles == 8 && info.numRows.contains(20000L))
    assert(info.columns.map(_.column) == Seq("id", "s") && info.source.format == "parquet")
    assert(hs.indexes().collect().map(_.getString(0)).toSeq == Seq("events_ids"))

    val (off, allFiles) = lookup(path, 4242, enabled = false)
    val (on, pruned) = lookup(path, 4242, enabled = true)
    assert(on == off && off.size == 1 && allFiles == 8 && pruned == 1)
    assert(hs.explainString(spark.read.parquet(path).where("id = 4242")).contains("8 files -> 1"))

    table("events", 20000, 20100, 2)
    val quick = hs.refreshIndex("events_ids", "quick")
    assert(quick.refreshed && quick.appendedFiles == 2 && hs.index("events_ids").staleness.appendedFilesNotIndexed == 2)
    assert(lookup(path, 20050, enabled = true)._1.size == 1) // an appended file is read until it is indexed
    val incremental = hs.refreshIndex("events_ids", "incremental")
    assert(incremental.refreshed && incremental.dataVersion == 1 && hs.index("events_ids").dataPaths.size == 2)
    assert(!hs.refreshIndex("events_ids").refreshed) // full: nothing changed
    assert(lookup(path, 20050, enabled = true) == ((Seq(Row(20050L, "20050", 20050L % 7)), 1L)))
    assert(hs.verifyIndex("events_ids").healthy)

    hs.deleteIndex("events_ids")
    assert(hs.index("events_ids").state == "DELETED" && lookup(path, 4242, enabled = true)._2 == 10)
    hs.restoreIndex("events_ids")
    assert(hs.index("events_ids").state == "ACTIVE")
    hs.deleteIndex("events_ids")
    hs.vacuumIndex("events_ids")
    assert(intercept[HsbloomException](hs.index("events_ids")).condition == HsbloomException.IndexNotFound)
    assert(hs.indexes().count() == 0)
  }

  test("bad input is an HsbloomException whose error class names the kind, and nothing is written") {
    val hs = new Hyperspace(spark)
    val path = table("small", 0, 100, 2)
    def error(body: => Any): HsbloomException = intercept[HsbloomException](body)
    assert(error(BFIndexConfig("a/b", Seq("id"))).condition == HsbloomException.InvalidConfig)
    assert(error(BFIndexConfig("ok", Seq("id"), fpp = Some(1.5))).getMessage.contains("fpp must be strictly between 0 and 1"))
    val unknown = error(hs.createIndex(spark.read.parquet(path), BFIndexConfig("small_ids", Seq("nope"))))
    assert(unknown.condition == HsbloomException.UnsupportedSource && unknown.text.contains("unknown column 'nope'"))
    assert(error(hs.createIndex(spark.read.parquet(path).groupBy("g").count(), BFIndexConfig("agg", Seq("g"))))
      .text.contains("an aggregation"))
    assert(error(hs.refreshIndex("small_ids", "sideways")).condition == HsbloomException.InvalidArgument)
    assert(error(hs.restoreIndex("small_ids")).condition == HsbloomException.IndexNotFound)
    hs.createIndex(spark.read.parquet(path), BFIndexConfig("small_ids", Seq("id")))
    assert(error(hs.createIndex(spark.read.parquet(path), BFIndexConfig("small_ids", Seq("id")))).condition ==
      HsbloomException.IndexExists)
    assert(error(hs.restoreIndex("small_ids")).condition == HsbloomException.IndexState)
    assert(error(hs.cancel("small_ids")).condition == HsbloomException.IndexState)
    val e = error(hs.restoreIndex("small_ids"))
    assert(e.getSqlState == "55000" && e.getMessageParameters.get("message") == e.text)
    assert(hs.indexes().count() == 1)
  }

  test("an index whose log this user may not read is left out of the listing, not an error") {
    val hs = new Hyperspace(spark)
    val path = table("closed", 0, 100, 2)
    hs.createIndex(spark.read.parquet(path), BFIndexConfig("open_ids", Seq("id")))
    hs.createIndex(spark.read.parquet(path), BFIndexConfig("closed_ids", Seq("id")))
    withConf("spark.hsbloom.system.path" -> s"denied://$systemPath") {
      assert(hs.indexes().collect().map(_.getString(0)).toSeq == Seq("open_ids"))
    }
  }

  test("a Java caller builds the config step by step") {
    val config = BFIndexConfig.of("java_ids", "id", "s").withFpp(0.001).withGlobalFilter(false)
    assert(config.indexedColumns == Seq("id", "s") && config.fpp.contains(0.001) && !config.globalFilter)
  }
}

/** The local file system under the scheme `denied:`, refusing this user the log of any index named `closed_*`. */
class DeniedLocalFileSystem extends org.apache.hadoop.fs.RawLocalFileSystem {
  override def getUri: java.net.URI = java.net.URI.create("denied:///")
  override def listStatus(p: org.apache.hadoop.fs.Path): Array[org.apache.hadoop.fs.FileStatus] = {
    if (p.getParent != null && p.getParent.getName.startsWith("closed_")) {
      throw new org.apache.hadoop.security.AccessControlException(s"Permission denied: $p")
    }
    super.listStatus(p)
  }
}

