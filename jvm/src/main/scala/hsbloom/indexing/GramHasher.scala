package hsbloom.indexing

import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

import hsbloom.sbbf.ParquetHash
import hsbloom.shim.CaseMappings

/**
 * The hashes a substring filter holds for one string column of the build's chunks: every `n`-byte gram of each
 * non-null value (`hsbloom.substring.Grams`, docs/substring.md), repeats included, into `out` (grown as needed).
 *
 * A value whose bytes are not valid UTF-8 also gives the grams of its decoded form (bad bytes as U+FFFD): Spark's
 * `Like` matches the decoded string, `Contains` and the others the raw bytes, and the filter must hold what
 * either finds.
 *
 * With `lower`, the grams are of the value's lower-case forms instead (a filter for `ILIKE` and `lower(c)`): the
 * ASCII lower case of an ASCII value, else each form Spark's `Lower` may give it (`CaseMappings`).
 */
final class GramHasher(ordinal: Int, n: Int, lower: Boolean = false) {
  private val caseMappings = if (lower) new CaseMappings else null

  /** The last chunk's hashes: `out(0 until count)`. */
  var out = new Array[Long](4096)
  /** The last chunk's non-null values. */
  var nonNull = 0

  /** Hashes column `ordinal` of `chunk`; returns how many hashes are in `out`. */
  def hashChunk(chunk: ScanInput.Chunk): Int = hashRows(chunk, 0, chunk.numRows)

  /** Hashes column `ordinal` of rows `from until to` of `chunk` (a zone's share of it); returns how many. */
  def hashRows(chunk: ScanInput.Chunk, from: Int, to: Int): Int = {
    nonNull = 0
    var count = 0
    val vector = if (chunk.columns != null) chunk.columns.column(ordinal) else null
    var i = from
    while (i < to) {
      val value = if (vector != null) { if (vector.isNullAt(i)) null else vector.getUTF8String(i) }
        else { val row = chunk.row(i); if (row.isNullAt(ordinal)) null else row.getUTF8String(ordinal) }
      if (value != null) {
        nonNull += 1
        count = if (!lower) add(value, count) else addLower(value, count)
      }
      i += 1
    }
    count
  }

  private def add(value: UTF8String, count: Int): Int = {
    val (base, offset, length) = (value.getBaseObject, value.getBaseOffset, value.numBytes)
    var k = addGrams(base, offset, length, count)
    if (!isAscii(base, offset, length)) {
      // Invalid UTF-8 decodes with U+FFFD in place of its bad bytes: a string that differs.
      val decoded = UTF8String.fromString(value.toString)
      if (decoded != value) k = addGrams(decoded.getBaseObject, decoded.getBaseOffset, decoded.numBytes, k)
    }
    k
  }

  private def addLower(value: UTF8String, count: Int): Int =
    if (isAscii(value.getBaseObject, value.getBaseOffset, value.numBytes)) add(asciiLower(value), count)
    else caseMappings.lowerForms(value).foldLeft(count)((k, form) => add(form, k))

  /** An ASCII string in lower case, as every mapping gives it. */
  private def asciiLower(value: UTF8String): UTF8String = {
    val bytes = value.getBytes.clone() // getBytes may hand out the batch's own array
    var i = 0
    while (i < bytes.length) { if (bytes(i) >= 'A' && bytes(i) <= 'Z') bytes(i) = (bytes(i) + 32).toByte; i += 1 }
    UTF8String.fromBytes(bytes)
  }

  private def addGrams(base: AnyRef, offset: Long, length: Int, count: Int): Int = {
    val grams = math.max(length - n + 1, 0)
    if (count + grams > out.length) out = java.util.Arrays.copyOf(out, math.max(out.length * 2, count + grams))
    var k = count
    var start = 0
    while (start + n <= length) {
      out(k) = ParquetHash.hashUnsafe(base, offset + start, n)
      k += 1
      start += 1
    }
    k
  }

  private def isAscii(base: AnyRef, offset: Long, length: Int): Boolean = {
    var i = 0
    while (i < length) { if (Platform.getByte(base, offset + i) < 0) return false; i += 1 }
    true
  }
}
