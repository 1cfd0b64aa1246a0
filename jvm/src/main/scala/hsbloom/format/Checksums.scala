package hsbloom.format

import java.nio.charset.StandardCharsets

import org.apache.spark.sql.catalyst.expressions.XXH64
import org.apache.spark.sql.types.{LongType, StructField}
import org.apache.spark.unsafe.Platform

/**
 * The checksums that guard every byte query planning trusts (docs/design/integrity.md):
 * a Bloom filter with bits cleared answers "absent" with full confidence, so
 * damage must be caught before a filter is probed, not after.
 *
 * XXH64 (the hash the Parquet spec already uses for values, `ParquetHash`) is
 * computed with a seed that names where the bytes belong, so bytes that are
 * intact but in the wrong place (a shifted offset, a file copied from another
 * version or another side file) fail their check as surely as flipped bits:
 *
 *  - a file-table row: over the fields planning reads, seeded by its index's
 *    and data directory's names (`<index>/v__=N`); column `row_checksum`;
 *  - a filter: over its serialization as read back from its blocks (seed 0);
 *    column `filter_checksum`, checked by whoever reads whole filters
 *    (`StoredFilters`: refresh, `verify`);
 *  - a stripe of block rows of a side file under `blocks/` (`FilterBlocks`):
 *    8 bytes right after the stripe, seeded by the side file's name and the
 *    stripe's offset;
 *  - a global filter chunk: over its bytes and shape, seeded by the index's
 *    and data directory's names and the column; column `chunk_checksum`.
 */
object Checksums {
  val FilterChecksum = "filter_checksum"
  val RowChecksum = "row_checksum"
  val ChunkChecksum = "chunk_checksum"

  /** The checksum columns a stored file-table row carries after `TableSchemas.BlockColumns`. */
  val FileTableColumns: Seq[StructField] =
    Seq(StructField(FilterChecksum, LongType, nullable = false), StructField(RowChecksum, LongType, nullable = false))

  /** Bytes a stripe's checksum takes after its block rows. */
  val StripeChecksumBytes = 8

  def xxh64(bytes: Array[Byte], offset: Int, length: Int, seed: Long): Long =
    XXH64.hashUnsafeBytes(bytes, Platform.BYTE_ARRAY_OFFSET.toLong + offset, length, seed)

  def xxh64(bytes: Array[Byte], seed: Long): Long = xxh64(bytes, 0, bytes.length, seed)

  /** A seed naming a place: the XXH64 of its name. */
  def seedOf(name: String): Long = xxh64(name.getBytes(StandardCharsets.UTF_8), 0L)

  /**
   * The seed of a data directory's rows and chunks: its index's name and its own (`<index>/v__=N`), not
   * where the system path is (so a moved system path still checks out).
   */
  def directorySeed(dataPath: String): Long = {
    val dir = new org.apache.hadoop.fs.Path(dataPath)
    seedOf(Option(dir.getParent).map(_.getName).getOrElse("") + "/" + dir.getName)
  }

  /** The checksum of a stripe of block rows that starts at `stripeOffset` of the side file `fileName`. */
  def stripe(bytes: Array[Byte], offset: Int, length: Int, fileName: String, stripeOffset: Long): Long =
    xxh64(bytes, offset, length, XXH64.hashLong(stripeOffset, seedOf(fileName)))

  /** The fields of a file-table row that planning reads, in a fixed order. */
  final case class RowFields(fileId: Long, path: String, size: Long, mtime: Long, column: String, numRows: Long,
      numNulls: Long, blocksFile: String, blocksOffset: Long, blocksCount: Int, blocksPosition: Int, bitsetBytes: Int,
      filterChecksum: Long) {
    def checksum(directorySeed: Long): Long = {
      val out = new RowBytes
      def string(s: String): Unit = out.bytes(java.nio.ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8)))
      out.long(fileId); string(path); out.long(size); out.long(mtime); string(column)
      out.long(numRows); out.long(numNulls); string(blocksFile); out.long(blocksOffset)
      out.int(blocksCount); out.int(blocksPosition); out.int(bitsetBytes); out.long(filterChecksum)
      out.checksum(directorySeed)
    }
  }

  /**
   * The bytes a file-table row's checksum covers, written into one buffer
   * that a loader reuses for every row (`TableRows.checksum`), in the encoding
   * row checksums have always had (`java.io.DataOutputStream`'s, which wrote
   * them before): numbers big-endian, a string as its UTF-8 length (an int)
   * then its UTF-8 bytes. Stored indexes depend on it: never change it.
   */
  final class RowBytes {
    private var buffer = new Array[Byte](256)
    private var length = 0

    def clear(): Unit = length = 0
    def long(v: Long): Unit = bigEndian(v, 8)
    def int(v: Int): Unit = bigEndian(v.toLong, 4)
    /** A string's UTF-8 bytes (the buffer's remaining bytes), after their length. */
    def bytes(utf8: java.nio.ByteBuffer): Unit = {
      val n = utf8.remaining
      int(n); room(n); utf8.duplicate().get(buffer, length, n); length += n
    }
    def checksum(directorySeed: Long): Long = xxh64(buffer, 0, length, directorySeed)

    private def bigEndian(v: Long, n: Int): Unit = {
      room(n)
      var i = 0
      while (i < n) { buffer(length + i) = (v >>> (8 * (n - 1 - i))).toByte; i += 1 }
      length += n
    }
    private def room(n: Int): Unit =
      if (length + n > buffer.length) buffer = java.util.Arrays.copyOf(buffer, math.max(buffer.length * 2, length + n))
  }

  /** The checksum of a global filter chunk (its bytes and its place in the filter). */
  def chunk(bytes: Array[Byte], column: String, chunkIndex: Int, numChunks: Int, filterBytes: Long,
      directorySeed: Long): Long = {
    val place = XXH64.hashLong(filterBytes, XXH64.hashLong((chunkIndex.toLong << 32) | numChunks,
      xxh64(column.getBytes(StandardCharsets.UTF_8), directorySeed)))
    xxh64(bytes, place)
  }
}
