package hsbloom.sbbf

/**
 * The Parquet Split Block Bloom Filter (SBBF), exactly as the Apache Parquet
 * spec defines it, so that parquet-java, Arrow and DuckDB read what we write.
 *
 * The bitset is `z` blocks of 256 bits, each block eight little-endian 32-bit
 * words. A 64-bit hash `h` picks a block by its upper half,
 * `block = ((h >>> 32) * z) >>> 32` (a multiply-shift instead of a modulo), and
 * its lower half `x` sets one bit in each of the block's eight words: bit
 * `(x * SALT(i)) >>> 27` of word `i`. A value may be present when all eight
 * bits are set. The bits within a block: `Block`.
 *
 * Sizing: for `ndv` distinct values and a false-positive probability `fpp`,
 * `m = -8 * ndv / ln(1 - fpp^(1/8))` bits, rounded up to a power of two bytes
 * and clamped to [32 B, 128 MiB]. Because the block index takes the top bits of
 * `h >>> 32`, halving `z` maps block `i` to block `i / 2`: OR-ing adjacent block
 * pairs ("folding") gives exactly the filter a fresh build at half the size
 * would give.
 *
 * Serialized form: a Thrift-compact `BloomFilterHeader` (numBytes, algorithm
 * BLOCK, hash XXHASH, compression UNCOMPRESSED) followed by the bitset.
 */
final class Sbbf private (private val words: Array[Int]) extends Serializable {
  import Sbbf._

  def numBlocks: Int = words.length >>> 3
  def numBytes: Int = words.length * 4

  def insertHash(h: Long): Unit = Block.insert(words, blockIndex(h, numBlocks) << 3, h)

  def mightContainHash(h: Long): Boolean = Block.contains(words, blockIndex(h, numBlocks) << 3, h)

  /** ORs `other` into this filter; both must have the same size. */
  def union(other: Sbbf): this.type = {
    if (other.numBytes != numBytes) {
      throw new IllegalArgumentException(s"cannot union SBBFs of different sizes: $numBytes and ${other.numBytes} bytes")
    }
    var i = 0
    while (i < words.length) { words(i) |= other.words(i); i += 1 }
    this
  }

  def popcount: Long = {
    var count = 0L
    var i = 0
    while (i < words.length) { count += Integer.bitCount(words(i)); i += 1 }
    count
  }

  /**
   * The false-positive probability implied by how full the filter is: a probe
   * sets one bit per word, so it passes word `i` with probability equal to that
   * word's fill ratio; averaged over blocks, the product over the eight words.
   */
  def estimatedFpp: Double = {
    var sum = 0.0
    var b = 0
    while (b < numBlocks) {
      var p = 1.0
      var i = 0
      while (i < 8) { p *= Integer.bitCount(words((b << 3) + i)) / 32.0; i += 1 }
      sum += p
      b += 1
    }
    sum / numBlocks
  }

  /** The filter at `targetBytes` (a smaller power of two): adjacent blocks OR-ed together, repeatedly. */
  def foldTo(targetBytes: Int): Sbbf = {
    checkSize(targetBytes)
    if (targetBytes > numBytes) throw new IllegalArgumentException(s"cannot fold $numBytes bytes up to $targetBytes")
    var current = words
    while (current.length * 4 > targetBytes) {
      val half = new Array[Int](current.length / 2)
      var b = 0
      while (b < half.length / 8) {
        var i = 0
        while (i < 8) {
          half((b << 3) + i) = current((b << 4) + i) | current((b << 4) + 8 + i)
          i += 1
        }
        b += 1
      }
      current = half
    }
    new Sbbf(if (current eq words) words.clone() else current)
  }

  /**
   * How many distinct values were inserted, judged from the fill. Inserts
   * spread over blocks as a Poisson process: with `n` values in `z` blocks, a
   * block takes `k ~ Poisson(n / z)` of them and each sets one of 32 bits in
   * every word, so a bit stays clear with probability `exp(-n / (32 z))`.
   * Solving for `n` from the clear fraction (linear counting, per bit).
   */
  def estimatedNdv: Long = {
    val bits = numBlocks.toLong * 256
    val set = popcount
    if (set == 0) 0L
    else if (set >= bits) Long.MaxValue
    else math.round(-32.0 * numBlocks * math.log(1.0 - set.toDouble / bits))
  }

  /** The smallest fold of this filter whose estimated false-positive probability stays within `fpp`. */
  def foldToTargetFpp(fpp: Double): Sbbf = {
    var best = this
    var done = false
    while (!done && best.numBytes > MinBytes) {
      val smaller = best.foldTo(best.numBytes / 2)
      if (smaller.estimatedFpp <= fpp) best = smaller else done = true
    }
    if (best eq this) new Sbbf(words.clone()) else best
  }

  /** The bitset: little-endian 32-bit words. */
  def bitset: Array[Byte] = Sbbf.littleEndian(words)

  /** The Parquet serialization: Thrift-compact header, then the bitset (written once, into one array). */
  def toBytes: Array[Byte] = {
    val head = header(numBytes)
    val out = java.util.Arrays.copyOf(head, head.length + numBytes)
    java.nio.ByteBuffer.wrap(out, head.length, numBytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).asIntBuffer().put(words)
    out
  }

  override def equals(other: Any): Boolean = other match {
    case that: Sbbf => java.util.Arrays.equals(words, that.words)
    case _ => false
  }
  override def hashCode: Int = java.util.Arrays.hashCode(words)
  override def toString: String = s"Sbbf($numBytes bytes, popcount $popcount)"
}

/** A serialized filter that failed validation; the message says what is wrong. */
class SbbfFormatException(message: String) extends IllegalArgumentException(message)

object Sbbf {
  val MinBytes: Int = 32
  val MaxBytes: Int = 128 * 1024 * 1024

  @inline def blockIndex(h: Long, numBlocks: Int): Int = (((h >>> 32) * numBlocks) >>> 32).toInt

  /** Bits needed for `ndv` values at false-positive probability `fpp`: the spec's formula, truncated as parquet-java and arrow-rs do. */
  def optimalNumBits(ndv: Long, fpp: Double): Long = {
    require(fpp > 0 && fpp < 1, s"fpp must be in (0, 1), got $fpp")
    require(ndv >= 0, s"ndv must be >= 0, got $ndv")
    (-8.0 * ndv / math.log(1 - math.pow(fpp, 1.0 / 8))).toLong
  }

  /** A filter size from a wanted number of bytes: the next power of two, clamped to [32 B, 128 MiB]. */
  def optimalNumBytes(numBytes: Long): Int = {
    if (numBytes >= MaxBytes) MaxBytes
    else if (numBytes <= MinBytes) MinBytes
    else (java.lang.Long.highestOneBit(numBytes - 1) << 1).toInt
  }

  def ofBytes(numBytes: Int): Sbbf = {
    checkSize(numBytes)
    new Sbbf(new Array[Int](numBytes / 4))
  }

  /** Words as little-endian bytes: the bitset layout. */
  def littleEndian(words: Array[Int]): Array[Byte] = {
    val out = new Array[Byte](words.length * 4)
    java.nio.ByteBuffer.wrap(out).order(java.nio.ByteOrder.LITTLE_ENDIAN).asIntBuffer().put(words)
    out
  }

  /** A filter over existing words (no copy); the length must be a valid size. */
  private[hsbloom] def wrap(words: Array[Int]): Sbbf = {
    checkSize(words.length * 4)
    new Sbbf(words)
  }

  /**
   * Inserts `h` into a slice of a filter of `totalBlocks` blocks: `slice` holds
   * the words of blocks `firstBlock` until `firstBlock + slice.length / 8`. Lets
   * a large filter be built in parallel, one block range per task.
   */
  def insertHashIntoSlice(slice: Array[Int], firstBlock: Int, totalBlocks: Int, h: Long): Unit =
    Block.insert(slice, (blockIndex(h, totalBlocks) - firstBlock) << 3, h)

  def forNdv(ndv: Long, fpp: Double): Sbbf = ofBytes(optimalNumBytes(optimalNumBits(ndv, fpp) / 8))

  /** Wraps a raw bitset (no header) of a valid size. */
  def fromBitset(bytes: Array[Byte], offset: Int, length: Int): Sbbf = {
    checkSize(length, new SbbfFormatException(_))
    val words = new Array[Int](length / 4)
    java.nio.ByteBuffer.wrap(bytes, offset, length).order(java.nio.ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(words)
    new Sbbf(words)
  }

  def fromBitset(bytes: Array[Byte]): Sbbf = fromBitset(bytes, 0, bytes.length)

  /** Reads the Parquet serialization back, validating the header against the buffer. */
  def fromBytes(bytes: Array[Byte]): Sbbf = {
    val h = parseHeader(bytes)
    fromBitset(bytes, h.headerLength, h.numBytes)
  }

  /**
   * Tests a hash directly against a serialized filter, reading only the one
   * block it needs: what query planning does for every candidate file.
   */
  def probeSerialized(serialized: Array[Byte], h: Long): Boolean = {
    val hdr = parseHeader(serialized)
    mightContainHashInBitset(serialized, hdr.headerLength, hdr.numBytes, h)
  }

  /** Probe of a bitset that starts at `offset` in `bytes` and is `numBytes` long. */
  def mightContainHashInBitset(bytes: Array[Byte], offset: Int, numBytes: Int, h: Long): Boolean =
    Block.contains(bytes, offset + blockIndex(h, numBytes >>> 5) * Block.Bytes, h)

  private def checkSize(numBytes: Int, error: String => Exception = new IllegalArgumentException(_)): Unit = {
    if (numBytes < MinBytes || numBytes > MaxBytes || Integer.bitCount(numBytes) != 1) {
      throw error(s"SBBF size must be a power of two between $MinBytes and $MaxBytes bytes, got $numBytes")
    }
  }

  // --- The header (SbbfHeader) ------------------------------------------

  /** Where the bitset starts and how long it is. */
  type Header = SbbfHeader.Header
  val Header: SbbfHeader.Header.type = SbbfHeader.Header

  /** The Thrift `BloomFilterHeader` of a bitset of `numBytes`. */
  def header(numBytes: Int): Array[Byte] = SbbfHeader.write(numBytes)

  /** Parses and validates the header at the start of `bytes` (which must hold the whole bitset too). */
  def parseHeader(bytes: Array[Byte]): Header = SbbfHeader.parse(bytes)
}
