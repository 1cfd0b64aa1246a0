package hsbloom.index

import java.util.UUID

import scala.collection.mutable.ArrayBuffer

import com.google.common.cache.{Cache, CacheBuilder, Weigher}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.TaskContext
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

import hsbloom.format.{Checksums, Layout, TableSchemas}
import hsbloom.sbbf.{Block, Sbbf, SbbfFormatException}

/**
 * The block-addressable copy of a version's file-level filters, so that query
 * planning reads only the 32-byte blocks its probes need (docs/pruning.md).
 *
 * A probe of hash `h` in a filter of `B` blocks needs block
 * `b = ((h >>> 32) * B) >>> 32` and nothing else. This is the only copy of the
 * filters (the file-level table holds their counts and addresses; a whole
 * filter is rebuilt from its blocks by `StoredFilters`):
 * `blocks/` holds the bitsets block-major: filters of one size written by
 * one task form a group of `k` filters, stored as block 0 of each filter, then
 * block 1 of each, and so on (a *block row* of `k * 32` bytes). Consecutive
 * block rows form a *stripe* of about 512 bytes (`Group.rowsPerStripe`: 16/k
 * rows, at least one), followed by its 8-byte checksum (`Checksums.stripe`),
 * so one positioned read of a stripe gives block `b` of every file in the
 * group, the bytes a lookup of one value needs, and proof that they are
 * intact, while a group of few filters pays at most about 3 % for checksums
 * (one per block row cost 25 % for a group of one). Each table row points at
 * its group (`blocks_file`, `blocks_offset`, `blocks_count`) and its place in
 * it (`blocks_position`).
 */
object FilterBlocks {
  val Dir: String = Layout.BlocksDir

  /** Bytes of stripes laid out at a time (`attach`): a few filters' worth of sequential reads, within a core's cache. */
  private val BatchBytes = 256L << 10

  /** Bitset bytes a task gathers before it writes them out as groups. */
  private val GroupBytes = 64L << 20

  /**
   * Writes the filters of `rows` (rows of `TableSchemas.FileTable`, possibly with
   * further fields after it) into one side file of the current task under
   * `<dataPath>/blocks/`, and returns the rows without the `filter` field and
   * with `TableSchemas.BlockColumns` and `Checksums.FileTableColumns` appended: the filter is
   * stored once, in its blocks. A filter that does not parse gets no blocks
   * (`blocks_count` 0): its file is then always read.
   */
  def attach(rows: Iterator[Row], dataPath: String, conf: Configuration): Iterator[Row] = {
    val filterOrdinal = TableSchemas.FilterOrdinal
    val directorySeed = Checksums.directorySeed(dataPath)
    def withChecksums(row: Row, header: Option[Sbbf.Header], blocks: Seq[Any]): Row = {
      // Over the filter as it is read back (`StoredFilters`): the header of its size, then its bitset; that is the
      // filter itself when it was written with that header and nothing after its bitset (every filter hsbloom makes).
      val filterChecksum = header.map { h =>
        val filter = row.getAs[Array[Byte]](filterOrdinal)
        val canonical = Sbbf.header(h.numBytes)
        val asReadBack = filter.length == canonical.length + h.numBytes &&
          java.util.Arrays.equals(filter, 0, canonical.length, canonical, 0, canonical.length)
        if (asReadBack) Checksums.xxh64(filter, 0L)
        else Checksums.xxh64(canonical ++ java.util.Arrays.copyOfRange(filter, h.headerLength,
          h.headerLength + h.numBytes), 0L)
      }.getOrElse(Checksums.xxh64(Array.emptyByteArray, 0L))
      val fields = Checksums.RowFields(row.getLong(0), row.getString(1), row.getLong(2), row.getLong(3),
        row.getString(4), row.getLong(5), row.getLong(6), blocks(0).asInstanceOf[String], blocks(1).asInstanceOf[Long],
        blocks(2).asInstanceOf[Int], blocks(3).asInstanceOf[Int], blocks(4).asInstanceOf[Int], filterChecksum)
      val values = row.toSeq
      Row.fromSeq(values.take(filterOrdinal) ++ values.drop(filterOrdinal + 1) ++ blocks ++
        Seq(filterChecksum, fields.checksum(directorySeed)))
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
        val group = Group(0, null, offset, k, numBytes)
        val filters = members.map(_._1.getAs[Array[Byte]](filterOrdinal)).toArray
        val starts = members.map(_._2.get.headerLength).toArray
        // Block-major: for each block index, that block of every member; each stripe of rows, then its checksum.
        // Stripes are laid out a batch at a time, member by member, so each filter is read in order (one stream
        // at a time, which the cache prefetches), not one block of each of k filters in turn.
        val stripeBytes = group.rowsPerStripe * k * 32 + Checksums.StripeChecksumBytes
        val batchStripes = math.max(1, (BatchBytes / stripeBytes).toInt)
        val batch = new Array[Byte](math.min(batchStripes, group.numStripes) * stripeBytes)
        var s0 = 0
        while (s0 < group.numStripes) {
          val s1 = math.min(group.numStripes, s0 + batchStripes)
          var j = 0
          while (j < k) {
            var (s, at) = (s0, 0)
            while (s < s1) {
              val first = s * group.rowsPerStripe
              val rows = group.stripeDataBytes(s) / (k * 32)
              var r = 0
              while (r < rows) {
                System.arraycopy(filters(j), starts(j) + (first + r) * 32, batch, at + (r * k + j) * 32, 32)
                r += 1
              }
              at += rows * k * 32 + Checksums.StripeChecksumBytes
              s += 1
            }
            j += 1
          }
          var (s, at) = (s0, 0)
          while (s < s1) {
            val dataBytes = group.stripeDataBytes(s)
            java.nio.ByteBuffer.wrap(batch, at + dataBytes, Checksums.StripeChecksumBytes)
              .putLong(Checksums.stripe(batch, at, dataBytes, fileName, written + at))
            at += dataBytes + Checksums.StripeChecksumBytes
            s += 1
          }
          out.write(batch, 0, at)
          written += at
          s0 = s1
        }
        members.zipWithIndex.map { case ((row, header), j) =>
          withChecksums(row, header, Seq(fileName, offset, k, j, numBytes))
        }
      }
      grouped ++ unparsed.map { case (row, _) => withChecksums(row, None, Seq("", 0L, 0, 0, 0)) }
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
    /** Block rows (block `b` of every member) per checksummed stripe: about `StripeBytes`, at least one row. */
    val rowsPerStripe: Int = math.max(1, StripeBytes / (count * 32))
    def numStripes: Int = (numBlocks + rowsPerStripe - 1) / rowsPerStripe
    /** The stripe that holds block row `b`. */
    def stripeOf(b: Int): Int = b / rowsPerStripe
    /** Where stripe `s` starts in the side file. */
    def stripeOffset(s: Int): Long = offset + s.toLong * (rowsPerStripe * count * 32 + Checksums.StripeChecksumBytes)
    /** Bytes of stripe `s` before its checksum (the last stripe may hold fewer rows). */
    def stripeDataBytes(s: Int): Int = (math.min(numBlocks, (s + 1) * rowsPerStripe) - s * rowsPerStripe) * count * 32
    /** Where block `b` of member `position` is, from the start of its stripe. */
    def inStripe(b: Int, position: Int): Int = ((b % rowsPerStripe) * count + position) * 32
    /** Bytes the group takes in its side file. */
    def storedBytes: Long = numBlocks.toLong * count * 32 + numStripes.toLong * Checksums.StripeChecksumBytes
  }

  /** Bytes of block rows a stripe aims at: its checksum then costs 8 in 256 to 512 bytes, at most 3.2 %. */
  val StripeBytes = 512

  /** One file's filter inside a group. */
  final case class Member(group: Group, position: Int)

  /**
   * Reads stripes of one version's side files, caching what it read
   * (bounded by bytes, least recently used out), so planning costs one read
   * per group and probed stripe, then memory reads. Each stripe is checked
   * against its checksum once, when it is read; a stripe that fails makes every
   * filter of its group answer "may contain" (the files are read), and is
   * reported once to `IndexDamage`.
   */
  final class Reader(conf: Configuration, maxCachedBytes: Long) {
    private val Damaged = new Array[Byte](0)
    // Keyed by group id and stripe index in one long.
    private val cache: Cache[java.lang.Long, Array[Byte]] = CacheBuilder.newBuilder()
      .maximumWeight(math.max(maxCachedBytes, 1L))
      .weigher(new Weigher[java.lang.Long, Array[Byte]] {
        override def weigh(k: java.lang.Long, v: Array[Byte]): Int = v.length + 64
      })
      .build[java.lang.Long, Array[Byte]]()

    /** Whether `member`'s filter may hold `h`: one stripe of its group, read once. */
    def mightContain(member: Member, h: Long): Boolean = {
      val group = member.group
      val b = Sbbf.blockIndex(h, group.numBlocks)
      val stripe = stripeOf(group, b)
      (stripe == null) || Block.contains(stripe, group.inStripe(b, member.position), h)
    }

    // Groups of one whose bitset is in memory (`SealedTable`), by group id: never read, never evicted.
    private val pinned = new java.util.concurrent.ConcurrentHashMap[Integer, Array[Byte]]()

    /** Serves `group` (a group of one filter) from `bitset` in memory. */
    def pin(group: Group, bitset: Array[Byte]): Unit = {
      require(group.count == 1 && bitset.length == group.bitsetBytes, "a pinned group is one whole bitset")
      pinned.put(group.id, bitset)
    }

    /** The stripe holding block row `b` of `group` (every member's block `b`), read once; null when damaged. */
    def stripeOf(group: Group, b: Int): Array[Byte] = {
      val s = group.stripeOf(b)
      val bitset = pinned.get(group.id)
      if (bitset != null) {
        val from = s * group.rowsPerStripe * 32
        return java.util.Arrays.copyOfRange(bitset, from, from + group.stripeDataBytes(s))
      }
      val stripe = cache.get((group.id.toLong << 32) | s, () => read(group, s))
      if (stripe eq Damaged) null else stripe
    }

    private def read(group: Group, s: Int): Array[Byte] = {
      val dataBytes = group.stripeDataBytes(s)
      val bytes = new Array[Byte](dataBytes + Checksums.StripeChecksumBytes)
      val at = group.stripeOffset(s)
      try {
        val in = group.file.getFileSystem(conf).open(group.file)
        try in.readFully(at, bytes) finally in.close()
      } catch {
        case e @ (_: java.io.EOFException | _: java.io.FileNotFoundException | _: org.apache.hadoop.fs.ChecksumException) =>
          IndexDamage.record(group.file, s"stripe $s of the filter group at offset ${group.offset} cannot be " +
            s"read ($e)")
          return Damaged
      }
      val stored = java.nio.ByteBuffer.wrap(bytes, dataBytes, Checksums.StripeChecksumBytes).getLong
      if (stored == Checksums.stripe(bytes, 0, dataBytes, group.file.getName, at)) bytes
      else {
        IndexDamage.record(group.file, s"stripe $s of the filter group at offset ${group.offset} fails its " +
          "checksum")
        Damaged
      }
    }
  }
}
