package hsbloom.substring

import java.nio.charset.StandardCharsets.UTF_8

/**
 * The literal runs a string must contain for a LIKE pattern to match it: the
 * pattern's characters between its wildcards, in order.
 *
 * The pattern is read as Spark reads it (`Like`, through
 * `StringUtils.escapeLikeRegex`): `%` stands for any characters, `_` for
 * exactly one, and the escape character makes the `%`, `_` or escape
 * character after it a literal. Spark refuses an escape character before any
 * other character or at the end; so does this reading (None), and a query
 * that Spark refuses prunes nothing.
 *
 * Why runs are enough: a match puts every run, whole, at some place of the
 * string (a wildcard never stands inside a run), so a string without one of
 * the runs cannot match. Nothing else is derived from a pattern: not the runs'
 * order, not the anchoring of the first and last, not a length; a file is
 * ruled out only by a run it cannot hold. A run holding a lone UTF-16
 * surrogate has no UTF-8 form to look for, and makes the whole pattern
 * unusable (None).
 */
object LikeRuns {
  /** Spark's default escape character, `\`. */
  val DefaultEscape: Char = '\\'

  /** The non-empty literal runs of `pattern` with `escape`; None where Spark refuses the pattern or a run has no UTF-8 form. */
  def apply(pattern: String, escape: Char = DefaultEscape): Option[Seq[String]] = {
    val runs = Seq.newBuilder[String]
    val run = new StringBuilder
    def endRun(): Unit = {
      if (run.nonEmpty) runs += run.result()
      run.clear()
    }
    var i = 0
    var refused = false
    while (i < pattern.length && !refused) {
      val c = pattern.charAt(i)
      if (c == escape) {
        if (i + 1 < pattern.length && isEscapable(pattern.charAt(i + 1), escape)) {
          run += pattern.charAt(i + 1)
          i += 2
        } else refused = true
      } else {
        if (c == '%' || c == '_') endRun() else run += c
        i += 1
      }
    }
    endRun()
    if (refused) None else Some(runs.result()).filter(_.forall(hasUtf8Form))
  }

  /** The literal of StartsWith, EndsWith or Contains as its one run (none when empty); None where it has no UTF-8 form. */
  def ofLiteral(literal: String): Option[Seq[String]] =
    if (!hasUtf8Form(literal)) None else Some(if (literal.isEmpty) Nil else Seq(literal))

  private def isEscapable(c: Char, escape: Char): Boolean = c == '%' || c == '_' || c == escape

  /** Whether `s` holds no lone surrogate (which UTF-8 encoding replaces), so its UTF-8 bytes say what it holds. */
  private def hasUtf8Form(s: String): Boolean = new String(s.getBytes(UTF_8), UTF_8) == s
}
