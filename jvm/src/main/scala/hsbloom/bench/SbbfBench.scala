package hsbloom.bench

import java.util.zip.CRC32

import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter
import org.apache.parquet.io.api.Binary
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

import hsbloom.{ParquetHash, Sbbf}

/**
 * The JVM half of bench/sbbf.py: hash+insert and check throughput of parquet-java's
 * BlockSplitBloomFilter and of hsbloom's Scala Sbbf, on one thread, over values generated here
 * with the same formula bench/sbbf.py uses in numpy (so all three sides see the same values).
 *
 * Values: int64 `splitmix64(seed, i)`; strings are uuid-like, 36 ASCII bytes (the 128 bits of
 * `splitmix64(seed, 2i)`, `splitmix64(seed, 2i + 1)` as 8-4-4-4-12 lowercase hex). Checks probe
 * `n` values of the next seed, almost none of them inserted.
 *
 * Each method returns `Array(insertNanos, checkNanos, positives, crc32 of the serialized filter)`,
 * the best times of `repeats` runs after a warm-up, so Python can print ratios and confirm that
 * every implementation built the same filter.
 */
object SbbfBench {

  def splitmix64(seed: Long, i: Long): Long = {
    var z = seed + (i + 1) * 0x9e3779b97f4a7c15L
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL
    z ^ (z >>> 31)
  }

  def longs(n: Int, seed: Long): Array[Long] = Array.tabulate(n)(i => splitmix64(seed, i))

  private val Hex = "0123456789abcdef".getBytes("US-ASCII")
  val UuidLength = 36

  /** n uuid-like strings, back to back in one array (36 bytes each). */
  def uuids(n: Int, seed: Long): Array[Byte] = {
    val out = new Array[Byte]((n.toLong * UuidLength).toInt)
    var i = 0
    while (i < n) {
      val hi = splitmix64(seed, 2L * i)
      val lo = splitmix64(seed, 2L * i + 1)
      var pos = i * UuidLength
      var nibble = 0
      while (nibble < 32) {
        if (nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20) { out(pos) = '-'; pos += 1 }
        val word = if (nibble < 16) hi else lo
        out(pos) = Hex(((word >>> (60 - 4 * (nibble & 15))) & 0xf).toInt)
        pos += 1
        nibble += 1
      }
      i += 1
    }
    out
  }

  private trait Filter {
    def insertLong(v: Long): Unit
    def checkLong(v: Long): Boolean
    /** The string at `offset` of `data` (36 bytes), handed over the way each writer gets it. */
    def insertString(data: Array[Byte], offset: Int): Unit
    def checkString(data: Array[Byte], offset: Int): Boolean
    def serialized: Array[Byte]
  }

  /** parquet-java, as Spark's Parquet writer drives it: a Binary per value, hash(), insertHash(). */
  private final class ParquetJava(numBytes: Int) extends Filter {
    val bloom = new BlockSplitBloomFilter(numBytes)
    private def binary(data: Array[Byte], offset: Int): Binary = {
      // Spark's writer copies each UTF8String to a byte[] (getBytes) and wraps it.
      val bytes = java.util.Arrays.copyOfRange(data, offset, offset + UuidLength)
      Binary.fromReusedByteArray(bytes)
    }
    def insertLong(v: Long): Unit = bloom.insertHash(bloom.hash(v))
    def checkLong(v: Long): Boolean = bloom.findHash(bloom.hash(v))
    def insertString(data: Array[Byte], offset: Int): Unit = bloom.insertHash(bloom.hash(binary(data, offset)))
    def checkString(data: Array[Byte], offset: Int): Boolean = bloom.findHash(bloom.hash(binary(data, offset)))
    def serialized: Array[Byte] = {
      val out = new java.io.ByteArrayOutputStream()
      val header = org.apache.parquet.format.converter.ParquetMetadataConverter.toBloomFilterHeader(bloom)
      org.apache.parquet.format.Util.writeBloomFilterHeader(header, out)
      bloom.writeTo(out)
      out.toByteArray
    }
  }

  /** hsbloom's Scala Sbbf, as its index build drives it: hashing UTF8String in place. */
  private final class Hsbloom(numBytes: Int) extends Filter {
    val sbbf: Sbbf = Sbbf.ofBytes(numBytes)
    private def utf8(data: Array[Byte], offset: Int): UTF8String =
      UTF8String.fromAddress(data, Platform.BYTE_ARRAY_OFFSET.toLong + offset, UuidLength)
    def insertLong(v: Long): Unit = sbbf.insertHash(ParquetHash.hashLong(v))
    def checkLong(v: Long): Boolean = sbbf.mightContainHash(ParquetHash.hashLong(v))
    def insertString(data: Array[Byte], offset: Int): Unit = sbbf.insertHash(ParquetHash.hashUTF8(utf8(data, offset)))
    def checkString(data: Array[Byte], offset: Int): Boolean = sbbf.mightContainHash(ParquetHash.hashUTF8(utf8(data, offset)))
    def serialized: Array[Byte] = sbbf.toBytes
  }

  private def crc(bytes: Array[Byte]): Long = { val c = new CRC32(); c.update(bytes); c.getValue }

  private def run(make: () => Filter, insert: Filter => Unit, check: Filter => Long, repeats: Int): Array[Long] = {
    var bestInsert = Long.MaxValue
    var bestCheck = Long.MaxValue
    var positives = 0L
    var checksum = 0L
    var r = 0
    while (r < repeats) {
      val filter = make()
      val t0 = System.nanoTime()
      insert(filter)
      val t1 = System.nanoTime()
      positives = check(filter)
      val t2 = System.nanoTime()
      bestInsert = math.min(bestInsert, t1 - t0)
      bestCheck = math.min(bestCheck, t2 - t1)
      checksum = crc(filter.serialized)
      r += 1
    }
    Array(bestInsert, bestCheck, positives, checksum)
  }

  private def timeLongs(make: () => Filter, n: Int, numBytes: Int, seed: Long, repeats: Int): Array[Long] = {
    val values = longs(n, seed)
    val probes = longs(n, seed + 1)
    def insert(f: Filter): Unit = { var i = 0; while (i < n) { f.insertLong(values(i)); i += 1 } }
    def check(f: Filter): Long = { var c = 0L; var i = 0; while (i < n) { if (f.checkLong(probes(i))) c += 1; i += 1 }; c }
    run(make, insert, check, 1) // warm-up: lets the JIT compile the loops
    run(make, insert, check, repeats)
  }

  private def timeStrings(make: () => Filter, n: Int, numBytes: Int, seed: Long, repeats: Int): Array[Long] = {
    val values = uuids(n, seed)
    val probes = uuids(n, seed + 1)
    def insert(f: Filter): Unit = { var i = 0; while (i < n) { f.insertString(values, i * UuidLength); i += 1 } }
    def check(f: Filter): Long = {
      var c = 0L; var i = 0
      while (i < n) { if (f.checkString(probes, i * UuidLength)) c += 1; i += 1 }
      c
    }
    run(make, insert, check, 1)
    run(make, insert, check, repeats)
  }

  def parquetJavaLongs(n: Int, numBytes: Int, seed: Long, repeats: Int): Array[Long] =
    timeLongs(() => new ParquetJava(numBytes), n, numBytes, seed, repeats)

  def parquetJavaStrings(n: Int, numBytes: Int, seed: Long, repeats: Int): Array[Long] =
    timeStrings(() => new ParquetJava(numBytes), n, numBytes, seed, repeats)

  def hsbloomLongs(n: Int, numBytes: Int, seed: Long, repeats: Int): Array[Long] =
    timeLongs(() => new Hsbloom(numBytes), n, numBytes, seed, repeats)

  def hsbloomStrings(n: Int, numBytes: Int, seed: Long, repeats: Int): Array[Long] =
    timeStrings(() => new Hsbloom(numBytes), n, numBytes, seed, repeats)
}
