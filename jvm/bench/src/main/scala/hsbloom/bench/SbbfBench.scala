package hsbloom.bench

import java.util.zip.CRC32

import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter
import org.apache.parquet.io.api.Binary
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

import hsbloom.sbbf.ParquetHash
import hsbloom.sbbf.Sbbf

/**
 * The JVM half of bench/sbbf.py: hash+insert and check throughput of parquet-java's
 * BlockSplitBloomFilter and of hsbloom's Scala Sbbf, on one thread, over values generated here
 * with the same formula bench/sbbf.py uses in numpy (so all three sides see the same values).
 *
 * Values: int64 `splitmix64(seed, i)`; strings are uuid-like, 36 ASCII bytes (the 128 bits of
 * `splitmix64(seed, 2i)`, `splitmix64(seed, 2i + 1)` as 8-4-4-4-12 lowercase hex). Checks probe
 * `n` values of the next seed, almost none of them inserted.
 *
 * Each method times one build and probe and returns `Array(insertNanos, checkNanos, positives,
 * crc32 of the serialized filter)`, so that Python can interleave the implementations' runs (the
 * machine's load then affects all alike), print ratios and confirm every side built the same
 * filter. The generated values are kept between calls.
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

  /** One timed build and probe; with `warmUp`, one untimed run first so the JIT has compiled the loops. */
  private def run(make: () => Filter, insert: Filter => Unit, check: Filter => Long, warmUp: Boolean): Array[Long] = {
    if (warmUp) check({ val f = make(); insert(f); f })
    val filter = make()
    val t0 = System.nanoTime()
    insert(filter)
    val t1 = System.nanoTime()
    val positives = check(filter)
    val t2 = System.nanoTime()
    Array(t1 - t0, t2 - t1, positives, crc(filter.serialized))
  }

  // The last generated data set, kept so that repeated calls do not regenerate (or re-allocate) it.
  private var longData: ((Int, Long), (Array[Long], Array[Long])) = null
  private var stringData: ((Int, Long), (Array[Byte], Array[Byte])) = null

  private def longInputs(n: Int, seed: Long): (Array[Long], Array[Long]) = synchronized {
    if (longData == null || longData._1 != ((n, seed))) longData = ((n, seed), (longs(n, seed), longs(n, seed + 1)))
    longData._2
  }

  private def stringInputs(n: Int, seed: Long): (Array[Byte], Array[Byte]) = synchronized {
    if (stringData == null || stringData._1 != ((n, seed))) {
      stringData = null
      stringData = ((n, seed), (uuids(n, seed), uuids(n, seed + 1)))
    }
    stringData._2
  }

  private def timeLongs(make: () => Filter, n: Int, seed: Long, warmUp: Boolean): Array[Long] = {
    val (values, probes) = longInputs(n, seed)
    def insert(f: Filter): Unit = { var i = 0; while (i < n) { f.insertLong(values(i)); i += 1 } }
    def check(f: Filter): Long = { var c = 0L; var i = 0; while (i < n) { if (f.checkLong(probes(i))) c += 1; i += 1 }; c }
    run(make, insert, check, warmUp)
  }

  private def timeStrings(make: () => Filter, n: Int, seed: Long, warmUp: Boolean): Array[Long] = {
    val (values, probes) = stringInputs(n, seed)
    def insert(f: Filter): Unit = { var i = 0; while (i < n) { f.insertString(values, i * UuidLength); i += 1 } }
    def check(f: Filter): Long = {
      var c = 0L; var i = 0
      while (i < n) { if (f.checkString(probes, i * UuidLength)) c += 1; i += 1 }
      c
    }
    run(make, insert, check, warmUp)
  }

  def parquetJavaLongs(n: Int, numBytes: Int, seed: Long, warmUp: Boolean): Array[Long] =
    timeLongs(() => new ParquetJava(numBytes), n, seed, warmUp)

  def parquetJavaStrings(n: Int, numBytes: Int, seed: Long, warmUp: Boolean): Array[Long] =
    timeStrings(() => new ParquetJava(numBytes), n, seed, warmUp)

  def hsbloomLongs(n: Int, numBytes: Int, seed: Long, warmUp: Boolean): Array[Long] =
    timeLongs(() => new Hsbloom(numBytes), n, seed, warmUp)

  def hsbloomStrings(n: Int, numBytes: Int, seed: Long, warmUp: Boolean): Array[Long] =
    timeStrings(() => new Hsbloom(numBytes), n, seed, warmUp)
}
