package hsbloom.index

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.Row
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.format.{Checksums, TableSchemas}
import hsbloom.sbbf.Sbbf

/**
 * Filters stored once, in `blocks/` (`FilterBlocks.attach`), read back whole (`StoredFilters`) and probed
 * block by block (`FilterBlocks.Reader`), for groups on both sides of a stripe's size.
 */
class StoredFiltersSuite extends AnyFunSuite {
  private val conf = new Configuration()

  /** `k` filters of `bytes` bytes each, of 40 random hashes, written as one task's rows at `<dataPath>`. */
  private def written(dataPath: String, counts: Seq[(Int, Int)]): Seq[(Row, Sbbf, Seq[Long])] = {
    val random = new scala.util.Random(counts.hashCode)
    var id = -1L
    val filters = for ((k, bytes) <- counts; _ <- 0 until k) yield {
      val hashes = Seq.fill(40)(random.nextLong())
      val sbbf = Sbbf.ofBytes(bytes)
      hashes.foreach(sbbf.insertHash)
      id += 1
      (Row(id, s"file:/data/part-$id.parquet", 10L, 20L, "c", 40L, 0L, 40L, sbbf.toBytes), sbbf, hashes)
    }
    // attach returns the rows group by group, not in their order: match them by file id.
    val byId = filters.map { case (row, sbbf, hashes) => row.getLong(0) -> (sbbf, hashes) }.toMap
    FilterBlocks.attach(filters.map(_._1).iterator, dataPath, conf).toList.map { row =>
      val (sbbf, hashes) = byId(row.getLong(0))
      (row, sbbf, hashes)
    }
  }

  test("every filter reads back byte for byte, and every inserted hash probes positive, for groups of 1 to 40") {
    val dataPath = new Path(Files.createTempDirectory("stored").toUri.toString, "idx/v__=0").toString
    // The two last groups are laid out in several batches of stripes, the 1 MiB one ending in a partial stripe.
    val rows = written(dataPath, Seq(1 -> 32, 1 -> 4096, 2 -> 1024, 3 -> 2048, 9 -> 512, 20 -> 8192, 3 -> (1 << 20),
      40 -> 65536))
    val s = TableSchemas.StoredFileTable
    // attach's rows: every stored column but the last, `filter_source`, which writeFileTable adds.
    assert(s.fieldNames.last == TableSchemas.FilterSource)
    assert(rows.forall(_._1.length == s.size - 1) && !s.fieldNames.contains("filter"))
    val part = new Path(IndexTables.filesPath(dataPath), "part-0.parquet")
    val reader = new StoredFilters.Reader(conf)
    val blocks = new FilterBlocks.Reader(conf, 1L << 20)
    var groups = Map.empty[(String, Long), FilterBlocks.Group]
    rows.foreach { case (row, sbbf, hashes) =>
      assert(reader.verified(row, part, dataPath).sameElements(sbbf.toBytes))
      val key = (row.getString(8), row.getLong(9))
      // One Group (one id) per group, as IndexData.load makes them: the block cache is keyed by the id.
      if (!groups.contains(key)) groups += key -> FilterBlocks.Group(groups.size,
        new Path(IndexTables.blocksPath(dataPath), row.getString(8)), row.getLong(9), row.getInt(10), row.getInt(12))
      val member = FilterBlocks.Member(groups(key), row.getInt(11))
      assert(hashes.forall(blocks.mightContain(member, _)))
    }
    // The side file holds the groups and nothing else; checksums cost at most 8 bytes per 256 of blocks.
    val side = groups.values.head.file
    val length = side.getFileSystem(conf).getFileStatus(side).getLen
    assert(groups.values.map(_.storedBytes).sum == length)
    groups.values.filter(g => g.count * g.bitsetBytes >= 512).foreach { g =>
      val blockBytes = g.count.toLong * g.bitsetBytes
      assert(g.storedBytes - blockBytes <= 8 * ((blockBytes + 255) / 256), g)
    }
  }

  test("a stripe with a flipped bit fails: read back, the filter is refused; probed, its group keeps its files") {
    val dataPath = new Path(Files.createTempDirectory("stored").toUri.toString, "idx/v__=0").toString
    val rows = written(dataPath, Seq(2 -> 1024))
    val side = new Path(IndexTables.blocksPath(dataPath), rows.head._1.getString(8))
    val file = new java.io.File(side.toUri)
    val bytes = Files.readAllBytes(file.toPath)
    bytes(100) = (bytes(100) ^ 4).toByte
    Files.write(file.toPath, bytes)
    new java.io.File(file.getParent, s".${file.getName}.crc").delete()
    val part = new Path(IndexTables.filesPath(dataPath), "part-0.parquet")
    val error = intercept[IllegalStateException](new StoredFilters.Reader(conf).verified(rows.head._1, part, dataPath))
    assert(error.getMessage.contains("fails its checksum") && error.getMessage.contains("mode='full'"))
    val group = FilterBlocks.Group(0, side, rows.head._1.getLong(9), 2, 1024)
    val blocks = new FilterBlocks.Reader(conf, 1L << 20)
    // Stripe 0 (the damaged one) answers "may contain" for anything; other stripes still answer.
    val inFirstStripe = Iterator.continually(scala.util.Random.nextLong())
      .find(h => group.stripeOf(Sbbf.blockIndex(h, group.numBlocks)) == 0).get
    assert(blocks.mightContain(FilterBlocks.Member(group, 0), inFirstStripe))
  }

  test("a filter with bytes after its bitset is stored and checksummed as the filter it reads back as") {
    val dataPath = new Path(Files.createTempDirectory("stored").toUri.toString, "idx/v__=0").toString
    val sbbf = Sbbf.ofBytes(1024)
    (1 to 40).foreach(i => sbbf.insertHash(i * 0x9E3779B97F4A7C15L))
    def row(id: Long, filter: Array[Byte]) = Row(id, s"file:/data/part-$id.parquet", 10L, 20L, "c", 40L, 0L, 40L, filter)
    val attached = FilterBlocks.attach(Iterator(row(0, sbbf.toBytes), row(1, sbbf.toBytes ++ Array[Byte](1, 2, 3))),
      dataPath, conf).toSeq.sortBy(_.getLong(0))
    val checksum = TableSchemas.StoredFileTable.fieldIndex(Checksums.FilterChecksum)
    assert(attached.map(_.getLong(checksum)).distinct == Seq(Checksums.xxh64(sbbf.toBytes, 0L)))
    val part = new Path(IndexTables.filesPath(dataPath), "part-0.parquet")
    attached.foreach(r => assert(new StoredFilters.Reader(conf).verified(r, part, dataPath).sameElements(sbbf.toBytes)))
  }
}
