package hsbloom.refresh

import java.io.File
import java.nio.file.{Files, StandardCopyOption}

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col, lit}
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.{BFIndexConfig, HsbloomException}
import hsbloom.catalog.{IndexCatalog, Sources}
import hsbloom.conf.HsbloomConf
import hsbloom.format.Layout
import hsbloom.index.{GlobalFilter, GlobalFilterRef}
import hsbloom.operations.BuildData
import hsbloom.sbbf.Sbbf
import hsbloom.testing.{Refreshes, SharedSession}

/**
 * Versions made of several data directories: incremental refreshes that refer to earlier data, then compact past
 * the bound on directories; the global filters of a version's directories, which must line up to be OR-ed; and a
 * full refresh of data of an older layout. Queries select the same rows with hsbloom on and off after every change.
 */
class RefreshVersionsSuite extends AnyFunSuite with SharedSession with Refreshes {

  test("incremental refreshes refer to earlier data, then compact; pruning, joins, vacuum and counts follow") {
    val directory = dir("parts")
    keyed(0, 4).write.parquet(directory) // keys 0..199; generation g appends keys 1000 g ...
    def read(): DataFrame = spark.read.parquet(directory)
    val probe = dir("probe")
    spark.range(0, 4100, 7).select(col("id").as("key"), (col("id") * 10).as("pid")).repartition(2).write.parquet(probe)
    create(read(), "parts", Seq("key", "name"), globalFilter = true)
    val originals = partFiles(directory)

    def generation(g: Int): File = {
      val before = partFiles(directory).toSet
      keyed(1000L * g, 1).write.mode("append").parquet(directory)
      (partFiles(directory).toSet -- before).toSeq match { case Seq(added) => added; case other => fail(s"$other") }
    }
    def check(parts: Int, held: Seq[Long], gone: Seq[Long]): Unit = {
      val info = hs.index("parts")
      assert(info.dataPaths.size == parts && info.numFiles == partFiles(directory).size)
      assert(info.numRows.contains(read().count()) && info.numRows.contains(info.columns.head.numRows))
      val counted = versionRows("parts").collect().groupBy(_.getAs[String]("column")).map { case (c, rows) =>
        // A filter's serialization: the Parquet header of its bitset's size, then the bitset.
        c -> ((rows.map(_.getAs[Long]("num_rows")).sum, rows.map(_.getAs[Long]("num_nulls")).sum,
          rows.map { r => val n = r.getAs[Int]("bitset_bytes"); Sbbf.header(n).length.toLong + n }.sum))
      }
      assert(info.columns.map(c => c.column -> ((c.numRows, c.numNulls, c.fileFilterBytes))).toMap == counted)
      sameAnswers(read(), predicatesFor(held ++ gone))
      withHsbloom {
        held.foreach(k => assert(filesRead(read().where(s"key = $k")) == 1, k))
        gone.foreach(k => assert(filesRead(read().where(s"key = $k")) == 0, k))
      }
    }

    val first = generation(1)
    assert(hs.refreshIndex("parts", "incremental").appendedFiles == 1)
    check(2, Seq(1000, 1049, 10, 199), Seq(2000))
    removePart(originals.head) // keys 0..49
    generation(2)
    val second = hs.refreshIndex("parts", "incremental")
    assert((second.appendedFiles, second.deletedFiles) == ((1L, 1L)))
    check(3, Seq(2000, 1000, 60), Seq(10, 3000))
    removePart(first)
    val deletes = hs.refreshIndex("parts", "incremental") // deletes only: the same directories, one more id dropped
    assert((deletes.refreshed, deletes.deletedFiles, deletes.dataVersion) == ((true, 1L, hs.index("parts").dataVersion)))
    check(3, Seq(2000, 60), Seq(10, 1000))
    val ids = heldIds("parts")
    assert(ids.size == 4 && fileTable("parts") == Map("key" -> ids, "name" -> ids))
    assert(hs.index("parts").staleness.globalFilterDeletedFiles == 2)

    // Joins: the global filter of the version is the OR of its directories' (keys of every part join).
    withConf("spark.sql.autoBroadcastJoinThreshold" -> "-1") {
      def joined(): DataFrame = spark.read.parquet(probe).join(read(), "key").select("pid", "id")
      def small(): DataFrame = read().join(spark.read.parquet(probe).where("pid IN (630, 20020)"), "key")
      Seq(() => joined(), () => small()).foreach { query =>
        val on = withHsbloom(sortedRows(query()))
        assert(on == sortedRows(query()) && on.nonEmpty)
      }
      withHsbloom {
        assertContains(explainText(joined()), "may be a key of the global filter of parts.key")
        // The probe table is half the indexed table's bytes: the cost model would not read it twice for its keys.
        withConf("spark.hsbloom.join.costModel" -> "false") {
          assert(filesRead(small()) == 2 + 2) // the two files holding keys 63 and 2002, and the probe's two
        }
      }
      assert(filesRead(small()) == 4 + 2)
    }

    assert(versions("parts") == Set("v__=0", "v__=1", "v__=2"))
    hs.vacuumIndex("parts") // every directory is still read
    assert(versions("parts") == Set("v__=0", "v__=1", "v__=2"))
    IndexCatalog.invalidateAll()
    check(3, Seq(2000, 60), Seq(10, 1000))

    withConf(HsbloomConf.RefreshMaxReferredParts.key -> "3") {
      generation(3)
      assertContains(hs.refreshIndex("parts", "incremental").message, "compacted into data version 3")
    }
    check(1, Seq(3000, 2000, 60), Seq(10, 1000))
    val compacted = heldIds("parts")
    assert(fileTable("parts") == Map("key" -> compacted, "name" -> compacted))
    assert(holdsAll(globalFilter(hs.index("parts").dataPaths, "key"), Seq(3000, 2049, 50, 199)))
    hs.vacuumIndex("parts") // nothing reads the earlier directories now
    assert(versions("parts") == Set("v__=3"))
    IndexCatalog.invalidateAll()
    check(1, Seq(3000, 60), Seq(10))
  }

  test("the global filters of data directories that do not line up are refused") {
    // A version's global filter is the OR of its directories' filters, only when all have the recorded size.
    val source = dir("one")
    keyed(0, 1).write.parquet(source)
    val df = spark.read.parquet(source)
    val files = Sources.describe(df, Seq("key")).files
    val config = BFIndexConfig("t", Seq("key"), fpp = Some(0.01), globalFilter = true)
    val built = Seq(256, 256, 512).zipWithIndex.map { case (blocks, n) =>
      val path = s"file:${suiteDir.resolve(s"lineup/v__=$n")}"
      path -> BuildData(df, files, config, files.size, path, "test", Map("key" -> blocks)).column("key").get.globalFilterBytes
    }
    val sizes = built.map(_._2)
    def load(count: Int) = GlobalFilter.load(GlobalFilterRef(built.take(count).map(_._1), "key", "t", sizes.head))
    assert(load(2).numBytes == 256 * 32) // two of one size: OR-ed
    val refused = intercept[IllegalStateException](load(3))
    assertContains(refused.getMessage, s"has ${sizes(2)} bytes, not the ${sizes.head} its log entry records")
  }

  test("a full refresh rebuilds data of an older layout, which queries and an incremental refresh do not use") {
    // Entries written before the layout was recorded, and a file table that holds whole filters, as layout 3 did.
    val directory = dir("growing")
    keyed(0, 4).write.parquet(directory)
    create(spark.read.parquet(directory), "layout", Seq("key"))
    assert(!hs.refreshIndex("layout", "full").refreshed && !hs.index("layout").needsFullRefresh)

    val entryFile = systemPath.resolve(f"layout/_hsbloom_log/${log("layout").ids().max}%020d.json")
    val entry = new ObjectMapper().readTree(Files.readAllBytes(entryFile)).asInstanceOf[ObjectNode]
    assert(entry.get("data_layout").asInt == Layout.DataLayout)
    entry.remove(java.util.List.of("data_layout", "data_parts", "dropped_file_ids"))
    Files.write(entryFile, entry.toString.getBytes("UTF-8"))
    partFiles(s"$systemPath/layout/v__=0/files").foreach { part =>
      val staging = dir("layout3")
      spark.read.parquet(part.toString).withColumn("filter", lit(Array.emptyByteArray)).coalesce(1).write.parquet(staging)
      Files.copy(partFiles(staging).head.toPath, part.toPath, StandardCopyOption.REPLACE_EXISTING)
      new File(part.getParentFile, s".${part.getName}.crc").delete() // Hadoop's checksum of the old bytes
    }
    IndexCatalog.invalidateAll()

    assert(hs.index("layout").needsFullRefresh)
    val lookup = spark.read.parquet(directory).where("key = 150")
    withHsbloom {
      assertContains(explainText(lookup), "refresh the index with mode='full'")
      assert(filesRead(lookup) == partFiles(directory).size) // no pruning on data it cannot read
    }
    keyed(1000, 1).write.mode("append").parquet(directory)
    val refused = intercept[HsbloomException](hs.refreshIndex("layout", "incremental"))
    assert(refused.condition == HsbloomException.IndexState && "older hsbloom .*; refresh it in full mode".r
      .findFirstIn(refused.text).isDefined, refused.text)
    val result = hs.refreshIndex("layout", "full")
    assert(result.refreshed && result.dataVersion == 1 && !hs.index("layout").needsFullRefresh)
    assert(!hs.refreshIndex("layout", "full").refreshed)
    sameAnswers(spark.read.parquet(directory), predicatesFor(Seq(0, 150, 1000, 1049)))
  }
}
