package hsbloom.substring

import java.nio.charset.StandardCharsets.UTF_8

import hsbloom.sbbf.ParquetHash

/**
 * Byte n-grams of strings, as a substring filter holds them: every `n`
 * consecutive bytes of a value's UTF-8 form, each hashed as Parquet hashes a
 * BYTE_ARRAY value (XXH64, seed 0, over the gram's bytes), so a substring
 * filter is a Parquet-spec SBBF whose values are the grams, and any SBBF
 * reader (the Python readers included) can probe it.
 *
 * Why bytes, not characters: a string contains a run exactly when its UTF-8
 * bytes contain the run's UTF-8 bytes (UTF-8 is self-synchronizing: no
 * character's bytes appear inside another's), and byte grams need no
 * decoding, neither at build time nor in a reader without Spark. A value
 * shorter than `n` bytes has no gram; a run shorter than `n` bytes rules
 * nothing out.
 */
object Grams {
  /** The gram lengths a filter may use: a shorter gram discriminates too little, a longer one needs longer patterns. */
  val MinN = 2
  val MaxN = 8

  /** The hashes of the `n`-byte grams of `bytes[from, until)`, repeats included, into `out`; returns how many. */
  def hashes(bytes: Array[Byte], from: Int, until: Int, n: Int, out: Array[Long]): Int = {
    checkN(n)
    var count = 0
    var start = from
    while (start + n <= until) {
      out(count) = ParquetHash.hashBytes(bytes, start, n)
      count += 1
      start += 1
    }
    count
  }

  /** The hashes of the `n`-byte grams of `bytes`, in order, repeats included (none when shorter than `n`). */
  def of(bytes: Array[Byte], n: Int): Array[Long] = {
    val out = new Array[Long](count(bytes.length, n))
    hashes(bytes, 0, bytes.length, n, out)
    out
  }

  /** How many `n`-byte grams a value of `length` bytes has. */
  def count(length: Int, n: Int): Int = math.max(length - n + 1, 0)

  /**
   * The distinct gram hashes every string holding all of `runs` holds; None when no run has `n` bytes, so there
   * is nothing to probe and every file is kept.
   */
  def required(runs: Seq[String], n: Int): Option[Set[Long]] = {
    checkN(n)
    val found = runs.iterator.flatMap(r => of(r.getBytes(UTF_8), n).iterator).toSet
    Some(found).filter(_.nonEmpty)
  }

  private def checkN(n: Int): Unit =
    require(n >= MinN && n <= MaxN, s"a gram is $MinN to $MaxN bytes, got $n")
}
