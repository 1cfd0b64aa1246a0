package hsbloom.substring

/**
 * What a run of `upper(c)` tells about `lower(c)`, so that the filter of lower-cased values answers `upper(c)`
 * conditions: a run `R` that `upper(v)` holds gives the runs `lower(v)` surely holds.
 *
 * A character of `upper(v)` is not always one character of `v`: `ß` becomes `SS`, `ﬁ` `FI`, `ŉ` `ʼN`, `ẖ` `H̱`,
 * and `ı` and `ſ` become `I` and `S`; the lower case of those (`ss`, `fi`, `i`, `s`) is not in `lower(v)`, which
 * holds `ß`, `ﬁ`, `ı`, `ſ`. Every expansion of Unicode's case mapping to a string holding an ASCII letter holds
 * one of A, F, H, I, J, L, N, S, T, W, Y or a character outside ASCII (SpecialCasing.txt, and the JVM's and ICU's
 * mappings in every locale), and those two are the only characters outside ASCII whose upper case is ASCII. So
 * each of the other ASCII characters of `upper(v)` (B C D E G K M O P Q R U V X Z, digits, punctuation, space)
 * is one character of `v`, `x` or `X` for a letter `X`, whose lower case is `x` in every locale and mapping, and
 * no case rule (final sigma, Turkish and Lithuanian i) changes or separates them: a stretch of them in
 * `upper(v)` is, lower-cased, a stretch of every lower-case form of `v`.
 *
 * An ASCII lower-case letter is never in `upper(v)` (a run holding one matches nothing), but it too only
 * separates the stretches here: no run is derived from what Spark's own matching would reject.
 */
object UpperRuns {
  private val Unsafe: Set[Char] = "AFHIJLNSTWY".toSet

  /** Whether byte `b` of an `upper(c)` run is one character of the value, the same in every lower-case form. */
  private def safe(b: Byte): Boolean =
    b >= 0x20 && b < 0x7f && !(b >= 'a' && b <= 'z') && !Unsafe.contains(b.toChar)

  /** The stretches of safe bytes of `run` (UTF-8 bytes of an `upper(c)` run), lower-cased: runs of `lower(c)`. */
  def lowered(run: Array[Byte]): Seq[Array[Byte]] = {
    val out = Seq.newBuilder[Array[Byte]]
    var start = 0
    while (start < run.length) {
      while (start < run.length && !safe(run(start))) start += 1
      var end = start
      while (end < run.length && safe(run(end))) end += 1
      if (end > start) out += run.slice(start, end).map(b => if (b >= 'A' && b <= 'Z') (b + 32).toByte else b)
      start = end
    }
    out.result()
  }
}
