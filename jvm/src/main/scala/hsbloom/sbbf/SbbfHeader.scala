package hsbloom.sbbf

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, IOException}

import org.apache.parquet.format.{BloomFilterAlgorithm, BloomFilterCompression, BloomFilterHash, BloomFilterHeader,
  SplitBlockAlgorithm, Uncompressed, Util, XxHash}

/**
 * The Thrift `BloomFilterHeader` in front of an SBBF's bitset, read and
 * written by parquet-java's own format classes (parquet-format-structures,
 * on Spark's classpath), so it is the header every Parquet reader expects:
 * `{1: numBytes, 2: algorithm BLOCK, 3: hash XXHASH, 4: compression
 * UNCOMPRESSED}` in the compact protocol, 16 bytes for typical sizes and 15
 * to 19 in general. Reading validates it against the buffer and names what
 * is wrong.
 */
object SbbfHeader {
  /** Where the bitset starts and how long it is. */
  final case class Header(numBytes: Int, headerLength: Int)

  /** The header of a bitset of `numBytes`. */
  def write(numBytes: Int): Array[Byte] = {
    val header = new BloomFilterHeader(numBytes, BloomFilterAlgorithm.BLOCK(new SplitBlockAlgorithm),
      BloomFilterHash.XXHASH(new XxHash), BloomFilterCompression.UNCOMPRESSED(new Uncompressed))
    val out = new ByteArrayOutputStream(19)
    Util.writeBloomFilterHeader(header, out)
    out.toByteArray
  }

  /** Parses and validates the header at the start of `bytes` (which must hold the whole bitset too). */
  def parse(bytes: Array[Byte]): Header = {
    refuseLegacy(bytes)
    val in = new ByteArrayInputStream(bytes)
    val header = try Util.readBloomFilterHeader(in) catch {
      case e: IOException => throw new SbbfFormatException(describe(e, exhausted = in.available() == 0))
    }
    val headerLength = bytes.length - in.available()
    if (!header.getAlgorithm.isSetBLOCK) unsupported("algorithm", "BLOCK")
    if (!header.getHash.isSetXXHASH) unsupported("hash", "XXHASH")
    if (!header.getCompression.isSetUNCOMPRESSED) unsupported("compression", "UNCOMPRESSED")
    val n = header.getNumBytes
    if (n <= 0) throw new SbbfFormatException(s"corrupt SBBF header: numBytes is $n, must be positive")
    if (n % 32 != 0) throw new SbbfFormatException(s"corrupt SBBF header: numBytes $n is not a multiple of 32 (one block)")
    if (n > Sbbf.MaxBytes) throw new SbbfFormatException(s"corrupt SBBF header: numBytes $n exceeds the 128 MiB maximum")
    val available = bytes.length - headerLength
    if (available < n) {
      throw new SbbfFormatException(s"truncated SBBF: header says $n bytes of bitset, buffer holds $available after the header")
    }
    Header(n, headerLength)
  }

  /** The pre-1.12 parquet-mr format: a 4-byte length, then Murmur3-hashed bits and 8 bytes of hash settings. */
  private def refuseLegacy(bytes: Array[Byte]): Unit =
    if (bytes.length >= 4) {
      val legacyLength = java.nio.ByteBuffer.wrap(bytes, 0, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt
      if (bytes(0) == 0 && legacyLength + 12 == bytes.length) {
        throw new SbbfFormatException(
          "not a Parquet SBBF: this is the deprecated pre-1.12 parquet-mr bloom filter format (Murmur3 hash), " +
            "which the Parquet spec replaced with XXHASH; rewrite the file with a current writer")
      }
    }

  private def unsupported(field: String, expected: String): Nothing =
    throw new SbbfFormatException(s"unsupported SBBF $field: only $expected is defined")

  /** What Thrift's failure to read the header means, in the terms of the header. */
  private def describe(e: IOException, exhausted: Boolean): String = {
    val missing = """Required field '(\w+)'""".r.findFirstMatchIn(String.valueOf(e.getMessage)).map(_.group(1))
    missing match {
      case Some(field) => s"corrupt SBBF header: $field is missing"
      case None if exhausted => "corrupt SBBF header: it runs past the end of the buffer"
      case None => s"corrupt SBBF header: ${Option(e.getCause).getOrElse(e).getMessage}"
    }
  }
}
