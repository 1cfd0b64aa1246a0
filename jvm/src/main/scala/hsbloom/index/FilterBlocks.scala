package hsbloom.index

import java.util.UUID

import scala.collection.mutable.ArrayBuffer

import com.google.common.cache.{Cache, CacheBuilder, Weigher}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.TaskContext
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

import hsbloom.sbbf.{Sbbf, SbbfFormatException}

/**
 * The block-addressable copy of a version's file-level filters, so that query
 * planning reads only the 32-byte blocks its probes need (docs/pruning.md).
 *
 * A probe of hash `h` in a filter of `B` blocks needs block
 * `b = ((h >>> 32) * B) >>> 32` and nothing else. The file-level table keeps
 * each filter whole (in the Parquet serialization, for any reader); next to it,
 * `blocks/` holds the same bitsets block-major: filters of one size written by
 * one task form a group of `k` filters, stored as block 0 of each filter, then
 * block 1 of each, and so on. Block `b` of the `j`-th filter of a group is at
 * `offset + b * (k * 32 + 8) + j * 32`: each block row is followed by its
 * 8-byte checksum (`Checksums.blockRow`), so one positioned read of
 * `k * 32 + 8` bytes gives block `b` of every file in the group, the exact
 * bytes a lookup of one value needs, and proof that they are intact. Each
 * table row points at its group (`blocks_file`, `blocks_offset`,
 * `blocks_count`) and its place in it (`blocks_position`).
 */
object FilterBlocks {
  val Dir: String = Layout.BlocksDir

  /** The columns each stored file-table row gets besides `IndexTables.FileTableSchema`. */
  val Columns: Seq[StructField] = Seq(
    StructField("blocks_file", StringType, nullable = false),
    StructField("blocks_offset", LongType, nullable = false),
    StructField("blocks_count", IntegerType, nullable = false),
    StructField("blocks_position", IntegerType, nullable = false),
    StructField("bitset_bytes", IntegerType, nullable = false))

  /** Bitset bytes a task gathers before it writes them out as groups. */
  private val GroupBytes = 64L << 20

  /**
   * Writes the filters of `rows` (rows of `FileTableSchema`, the serialized
   * filter last) into one side file of the current task under
   * `<dataPath>/blocks/`, and returns the rows with `Columns` and
   * `Checksums.FileTableColumns` appended. A filter that does not parse gets
   * no blocks (`blocks_count` 0): its file is then always read.
   */
  def attach(rows: Iterator[Row], dataPath: String, conf: Configuration): Iterator[Row] = {
    val filterOrdinal = IndexTables.FileTableSchema.fieldIndex("filter")
    val directorySeed = Checksums.directorySeed(dataPath)
    def withChecksums(row: Row, blocks: Seq[Any]): Row = {
      val filterChecksum = Checksums.xxh64(row.getAs[Array[Byte]](filterOrdinal), 0L)
      val fields = Checksums.RowFields(row.getLong(0), row.getString(1), row.getLong(2), row.getLong(3),
        row.getString(4), row.getLong(5), row.getLong(6), blocks(0).asInstanceOf[String], blocks(1).asInstanceOf[Long],
        blocks(2).asInstanceOf[Int], blocks(3).asInstanceOf[Int], blocks(4).asInstanceOf[Int], filterChecksum)
      Row.fromSeq(row.toSeq ++ blocks ++ Seq(filterChecksum, fields.checksum(directorySeed)))
    }
    lazy val fileName = {
      val task = Option(TaskContext.get())
      f"part-${task.map(_.partitionId()).getOrElse(0)}%05d-${task.map(_.taskAttemptId()).getOrElse(0L)}-${UUID.randomUUID()}.blocks"
    }
    lazy val out = {
      val path = new Path(IndexTables.blocksPath(dataPath), fileName)
      path.getFileSystem(conf).create(path, false)
    }
    var written = 0L
    var outUsed = false

    /** Writes the buffered filters as groups, returns their rows with the block columns. */
    def flush(buffered: ArrayBuffer[(Row, Option[Sbbf.Header])]): Seq[Row] = {
      val (parsed, unparsed) = buffered.partition(_._2.isDefined)
      val grouped = parsed.groupBy(_._2.get.numBytes).toSeq.sortBy(_._1).flatMap { case (numBytes, members) =>
        outUsed = true
        val offset = written
        val k = members.size
        val rowBytes = k * 32
        val region = new Array[Byte](rowBytes + Checksums.BlockRowChecksumBytes)
        val checksum = java.nio.ByteBuffer.wrap(region, rowBytes, Checksums.BlockRowChecksumBytes)
        val filters = members.map(_._1.getAs[Array[Byte]](filterOrdinal)).toArray
        val starts = members.map(_._2.get.headerLength).toArray
        // Block-major: for each block index, that block of every member, then the row's checksum.
        var b = 0
        while (b < numBytes / 32) {
          var j = 0
          while (j < k) {
            System.arraycopy(filters(j), starts(j) + b * 32, region, j * 32, 32)
            j += 1
          }
          checksum.putLong(rowBytes, Checksums.blockRow(region, 0, rowBytes, fileName, written))
          out.write(region)
          written += region.length
          b += 1
        }
        members.zipWithIndex.map { case ((row, _), j) => withChecksums(row, Seq(fileName, offset, k, j, numBytes)) }
      }
      grouped ++ unparsed.map { case (row, _) => withChecksums(row, Seq("", 0L, 0, 0, 0)) }
    }

    new Iterator[Row] {
      private var ready: Iterator[Row] = Iterator.empty
      private var closed = false
      override def hasNext: Boolean = {
        while (!ready.hasNext && rows.hasNext) {
          val buffered = ArrayBuffer[(Row, Option[Sbbf.Header])]()
          var bytes = 0L
          while (rows.hasNext && bytes < GroupBytes) {
            val row = rows.next()
            val filter = row.getAs[Array[Byte]](filterOrdinal)
            val header = try Some(Sbbf.parseHeader(filter)) catch { case _: SbbfFormatException => None }
            buffered += row -> header
            bytes += filter.length
          }
          ready = flush(buffered).iterator
        }
        if (!ready.hasNext && !closed) {
          closed = true
          if (outUsed) out.close()
        }
        ready.hasNext
      }
      override def next(): Row = { if (!hasNext) throw new NoSuchElementException; ready.next() }
    }
  }

  /** A group of filters of one size in a side file; `id` numbers the groups of one loaded version. */
  final case class Group(id: Int, file: Path, offset: Long, count: Int, bitsetBytes: Int) {
    def numBlocks: Int = bitsetBytes / 32
    /** Bytes of one block row: block `b` of every member, then its checksum. */
    def rowLength: Int = count * 32 + Checksums.BlockRowChecksumBytes
    def rowOffset(b: Int): Long = offset + b.toLong * rowLength
  }

  /** One file's filter inside a group. */
  final case class Member(group: Group, position: Int)

  /**
   * Reads block ranges of one version's side files, caching what it read
   * (bounded by bytes, least recently used out), so planning costs one read
   * per group and probed block, then memory reads. Each block row is checked
   * against its checksum once, when it is read; a row that fails makes every
   * filter of its group answer "may contain" (the files are read), and is
   * reported once to `IndexDamage`.
   */
  final class Reader(conf: Configuration, maxCachedBytes: Long) {
    private val Damaged = new Array[Byte](0)
    // Keyed by group id and block index in one long.
    private val cache: Cache[java.lang.Long, Array[Byte]] = CacheBuilder.newBuilder()
      .maximumWeight(math.max(maxCachedBytes, 1L))
      .weigher(new Weigher[java.lang.Long, Array[Byte]] {
        override def weigh(k: java.lang.Long, v: Array[Byte]): Int = v.length + 64
      })
      .build[java.lang.Long, Array[Byte]]()

    /** Whether `member`'s filter may hold `h`: one block of its group, read once. */
    def mightContain(member: Member, h: Long): Boolean = {
      val group = member.group
      val b = Sbbf.blockIndex(h, group.numBlocks)
      val blocks = cache.get((group.id.toLong << 32) | b, () => read(group, b))
      (blocks eq Damaged) || Sbbf.mightContainHashInBlock(blocks, member.position * 32, h)
    }

    private def read(group: Group, b: Int): Array[Byte] = {
      val bytes = new Array[Byte](group.rowLength)
      val at = group.rowOffset(b)
      try {
        val in = group.file.getFileSystem(conf).open(group.file)
        try in.readFully(at, bytes) finally in.close()
      } catch {
        case e @ (_: java.io.EOFException | _: java.io.FileNotFoundException | _: org.apache.hadoop.fs.ChecksumException) =>
          IndexDamage.record(group.file, s"block row $b of the filter group at offset ${group.offset} cannot be " +
            s"read ($e)")
          return Damaged
      }
      val rowBytes = group.count * 32
      val stored = java.nio.ByteBuffer.wrap(bytes, rowBytes, Checksums.BlockRowChecksumBytes).getLong
      if (stored == Checksums.blockRow(bytes, 0, rowBytes, group.file.getName, at)) bytes
      else {
        IndexDamage.record(group.file, s"block row $b of the filter group at offset ${group.offset} fails its " +
          "checksum")
        Damaged
      }
    }
  }
}
