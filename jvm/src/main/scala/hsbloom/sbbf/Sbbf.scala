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
 * bits are set.
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

  def insertHash(h: Long): Unit = setBlockBits(words, blockIndex(h, numBlocks) << 3, h.toInt)

  def mightContainHash(h: Long): Boolean = {
    val base = blockIndex(h, numBlocks) << 3
    val x = h.toInt
    var i = 0
    while (i < 8) {
      if ((words(base + i) & (1 << ((x * Salts(i)) >>> 27))) == 0) return false
      i += 1
    }
    true
  }

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

  /** The Parquet serialization: Thrift-compact header, then the bitset. */
  def toBytes: Array[Byte] = header(numBytes) ++ bitset

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
  private[hsbloom] val Salts: Array[Int] = Array(
    0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31)

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
    setBlockBits(slice, (blockIndex(h, totalBlocks) - firstBlock) << 3, h.toInt)

  /**
   * Sets the eight bits of the mask of `x` in the block of `words` starting at
   * word `base`: word i gets bit `(x * Salts(i)) >>> 27`. Written out with the
   * salts as constants: inserting is the build's innermost loop, and this form
   * runs markedly faster than a loop over `Salts` (bench: MapSideBench).
   */
  @inline def setBlockBits(words: Array[Int], base: Int, x: Int): Unit = {
    words(base) |= 1 << ((x * 0x47b6137b) >>> 27)
    words(base + 1) |= 1 << ((x * 0x44974d91) >>> 27)
    words(base + 2) |= 1 << ((x * 0x8824ad5b) >>> 27)
    words(base + 3) |= 1 << ((x * 0xa2b7289d) >>> 27)
    words(base + 4) |= 1 << ((x * 0x705495c7) >>> 27)
    words(base + 5) |= 1 << ((x * 0x2df1424b) >>> 27)
    words(base + 6) |= 1 << ((x * 0x9efc4947) >>> 27)
    words(base + 7) |= 1 << ((x * 0x5c6bfb31) >>> 27)
  }

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
    mightContainHashInBlock(bytes, offset + blockIndex(h, numBytes >>> 5) * 32, h)

  /** Probe of the one 32-byte block (little-endian words) at `base` in `bytes` that `h` maps to. */
  def mightContainHashInBlock(bytes: Array[Byte], base: Int, h: Long): Boolean = {
    val x = h.toInt
    var i = 0
    while (i < 8) {
      val p = base + 4 * i
      val word = (bytes(p) & 0xff) | ((bytes(p + 1) & 0xff) << 8) | ((bytes(p + 2) & 0xff) << 16) | ((bytes(p + 3) & 0xff) << 24)
      if ((word & (1 << ((x * Salts(i)) >>> 27))) == 0) return false
      i += 1
    }
    true
  }

  private def checkSize(numBytes: Int, error: String => Exception = new IllegalArgumentException(_)): Unit = {
    if (numBytes < MinBytes || numBytes > MaxBytes || Integer.bitCount(numBytes) != 1) {
      throw error(s"SBBF size must be a power of two between $MinBytes and $MaxBytes bytes, got $numBytes")
    }
  }

  // --- The Thrift-compact BloomFilterHeader --------------------------------

  /** Where the bitset starts and how long it is. */
  final case class Header(numBytes: Int, headerLength: Int)

  /**
   * `BloomFilterHeader{1: i32 numBytes, 2: union algorithm {1: BLOCK},
   * 3: union hash {1: XXHASH}, 4: union compression {1: UNCOMPRESSED}}` in the
   * compact protocol: 16 bytes for typical sizes, 15 to 19 in general.
   */
  def header(numBytes: Int): Array[Byte] = {
    val out = new java.io.ByteArrayOutputStream(19)
    out.write(0x15) // field 1, i32
    var v = (numBytes << 1) ^ (numBytes >> 31) // zigzag
    while ((v & ~0x7f) != 0) { out.write((v & 0x7f) | 0x80); v >>>= 7 }
    out.write(v)
    // fields 2, 3 and 4: a union holding field 1, an empty struct; then the stops.
    for (_ <- 0 until 3) out.write(Array[Byte](0x1c, 0x1c, 0x00, 0x00))
    out.write(0x00)
    out.toByteArray
  }

  /** Parses and validates the header at the start of `bytes` (which must hold the whole bitset too). */
  def parseHeader(bytes: Array[Byte]): Header = {
    if (bytes.length >= 4) {
      val legacyLength = java.nio.ByteBuffer.wrap(bytes, 0, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt
      if (bytes(0) == 0 && legacyLength + 12 == bytes.length) {
        throw new SbbfFormatException(
          "not a Parquet SBBF: this is the deprecated pre-1.12 parquet-mr bloom filter format (Murmur3 hash), " +
            "which the Parquet spec replaced with XXHASH; rewrite the file with a current writer")
      }
    }
    val reader = new CompactReader(bytes)
    var numBytes: Option[Int] = None
    var algorithm, hash, compression: Option[Int] = None
    var fieldId = 0
    var done = false
    while (!done) {
      val (id, tpe) = reader.fieldHeader(fieldId)
      if (tpe == CompactReader.Stop) done = true
      else {
        fieldId = id
        (id, tpe) match {
          case (1, CompactReader.I32) => numBytes = Some(reader.zigzagInt())
          case (2, CompactReader.Struct) => algorithm = Some(reader.unionMember("algorithm"))
          case (3, CompactReader.Struct) => hash = Some(reader.unionMember("hash"))
          case (4, CompactReader.Struct) => compression = Some(reader.unionMember("compression"))
          case _ => reader.skip(tpe)
        }
      }
    }
    val n = numBytes.getOrElse(throw new SbbfFormatException("corrupt SBBF header: numBytes is missing"))
    def require(value: Option[Int], name: String, expected: String): Unit = value match {
      case Some(1) =>
      case Some(other) => throw new SbbfFormatException(s"unsupported SBBF $name: union member $other, only $expected is defined")
      case None => throw new SbbfFormatException(s"corrupt SBBF header: $name is missing")
    }
    require(algorithm, "algorithm", "BLOCK")
    require(hash, "hash", "XXHASH")
    require(compression, "compression", "UNCOMPRESSED")
    if (n <= 0) throw new SbbfFormatException(s"corrupt SBBF header: numBytes is $n, must be positive")
    if (n % 32 != 0) throw new SbbfFormatException(s"corrupt SBBF header: numBytes $n is not a multiple of 32 (one block)")
    if (n > MaxBytes) throw new SbbfFormatException(s"corrupt SBBF header: numBytes $n exceeds the 128 MiB maximum")
    val available = bytes.length - reader.position
    if (available < n) {
      throw new SbbfFormatException(s"truncated SBBF: header says $n bytes of bitset, buffer holds $available after the header")
    }
    Header(n, reader.position)
  }

  /** Just enough of Thrift's compact protocol to read (and skip within) one header. */
  private final class CompactReader(bytes: Array[Byte]) {
    var position = 0

    private def byte(): Int = {
      if (position >= bytes.length) throw new SbbfFormatException("corrupt SBBF header: it runs past the end of the buffer")
      val b = bytes(position) & 0xff
      position += 1
      b
    }

    def varint(): Long = {
      var result = 0L
      var shift = 0
      var b = 0
      do {
        if (shift > 63) throw new SbbfFormatException("corrupt SBBF header: varint too long")
        b = byte()
        result |= (b & 0x7fL) << shift
        shift += 7
      } while ((b & 0x80) != 0)
      result
    }

    def zigzagInt(): Int = {
      val v = varint()
      if (v > 0xffffffffL) throw new SbbfFormatException("corrupt SBBF header: i32 out of range")
      ((v >>> 1) ^ -(v & 1)).toInt
    }

    /** (field id, type) of the next field; a short delta is relative to the previous id. */
    def fieldHeader(previousId: Int): (Int, Int) = {
      val b = byte()
      val tpe = b & 0x0f
      if (tpe == CompactReader.Stop) return (0, tpe)
      val delta = b >>> 4
      val id = if (delta != 0) previousId + delta else {
        val v = varint(); ((v >>> 1) ^ -(v & 1)).toInt
      }
      (id, tpe)
    }

    /** Reads a union of empty structs and returns the id of the member that is set. */
    def unionMember(name: String): Int = {
      var member: Option[Int] = None
      var fieldId = 0
      var done = false
      while (!done) {
        val (id, tpe) = fieldHeader(fieldId)
        if (tpe == CompactReader.Stop) done = true
        else {
          fieldId = id
          if (member.isDefined) throw new SbbfFormatException(s"corrupt SBBF header: $name union has two members")
          member = Some(id)
          skip(tpe)
        }
      }
      member.getOrElse(throw new SbbfFormatException(s"corrupt SBBF header: $name union is empty"))
    }

    def skip(tpe: Int): Unit = tpe match {
      case CompactReader.True | CompactReader.False =>
      case 3 => byte()
      case 4 | 5 | 6 => varint()
      case 7 => position += 8
      case 8 => position += varint().toInt
      case 9 | 10 =>
        val head = byte()
        val size = if ((head >>> 4) == 15) varint().toInt else head >>> 4
        (0 until size).foreach(_ => skip(head & 0x0f))
      case 11 =>
        val size = varint().toInt
        if (size > 0) { val kv = byte(); (0 until size).foreach { _ => skip(kv >>> 4); skip(kv & 0x0f) } }
      case CompactReader.Struct =>
        var fieldId = 0
        var done = false
        while (!done) {
          val (id, t) = fieldHeader(fieldId)
          if (t == CompactReader.Stop) done = true else { fieldId = id; skip(t) }
        }
      case other => throw new SbbfFormatException(s"corrupt SBBF header: unknown Thrift compact type $other")
    }
  }

  private object CompactReader {
    val Stop = 0
    val True = 1
    val False = 2
    val I32 = 5
    val Struct = 12
  }
}
