package hsbloom.substring

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random
import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.expressions.{Contains, EndsWith, Expression, Like, Literal, Lower, StartsWith}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/**
 * The runs and grams of a pattern against Spark's own matching, evaluated by
 * Spark's expressions on this line's Spark: whatever Spark matches holds every
 * run and every required gram (no false negative), and a pattern is refused
 * only where Spark refuses it.
 */
class LikeRunsSuite extends AnyFunSuite {
  test("a pattern's runs are its literal characters between wildcards, escapes read as Spark reads them") {
    assert(LikeRuns("abc") == Some(Seq("abc")))
    assert(LikeRuns("%abc%") == Some(Seq("abc")))
    assert(LikeRuns("a_c%de") == Some(Seq("a", "c", "de")))
    assert(LikeRuns("""a\%b\_c\\d""") == Some(Seq("""a%b_c\d""")))
    assert(LikeRuns("a!%b!!c%", '!') == Some(Seq("a%b!c")))
    assert(LikeRuns("""a\%b""", '!') == Some(Seq("""a\""", "b")))  // '\' is no escape when another is given
    assert(LikeRuns("") == Some(Nil))
    assert(LikeRuns("%_%") == Some(Nil))
    assert(LikeRuns("""ab\""") == None)  // ends with the escape character
    assert(LikeRuns("""a\bc""") == None)  // the escape before a character it cannot escape
    assert(LikeRuns("a\ud800b") == None)  // a lone surrogate: no UTF-8 form
    assert(LikeRuns("\ud83d\ude00%") == Some(Seq("\ud83d\ude00")))
  }

  test("a literal of StartsWith, EndsWith or Contains is its one run") {
    assert(LikeRuns.ofLiteral("ab%_") == Some(Seq("ab%_")))
    assert(LikeRuns.ofLiteral("") == Some(Nil))
    assert(LikeRuns.ofLiteral("\udc00") == None)
  }

  test("the required grams are every n bytes of each run long enough, and none when no run is") {
    val hashOf = (s: String) => hsbloom.sbbf.ParquetHash.hashBytes(s.getBytes(UTF_8))
    assert(Grams.required(Seq("abcd", "x"), 3) == Some(Set("abc", "bcd").map(hashOf)))
    assert(Grams.required(Seq("ab", "x"), 3) == None)
    assert(Grams.required(Nil, 3) == None)
    assert(Grams.required(Seq("\u00e9\u00e9"), 4) == Some(Set(hashOf("\u00e9\u00e9"))))  // two 2-byte characters
    assert(Grams.count(2, 3) == 0 && Grams.count(3, 3) == 1 && Grams.count(10, 3) == 8)
    intercept[IllegalArgumentException](Grams.required(Seq("abc"), 1))
  }

  /** Pieces of values and patterns that break a substring filter: wildcards, escapes, multi-byte and 4-byte
   * characters, a combining accent, characters whose lower case is longer (U+0130) or differs in bytes (U+212A). */
  private val Pieces = Seq("a", "b", "ab", "A", "%", "_", "\\", "!", "\u00e9", "e\u0301", "\u4e2d", "\ud83d\ude00",
    "\u0130", "\u212a", "k", "\u00df", "SS", " ")

  /** The default escape, another character, and a wildcard as the escape. */
  private val Escapes = Seq('\\', '!', '%')

  private def randomString(rnd: Random, maxPieces: Int): String =
    Seq.fill(rnd.nextInt(maxPieces + 1))(Pieces(rnd.nextInt(Pieces.size))).mkString

  /** `s` as a Spark string holds it (a lone surrogate, from cutting a pair, becomes '?'): what a rule reads. */
  private def asSpark(s: String): String = UTF8String.fromString(s).toString

  /** A random piece of `value`, cut anywhere (in a surrogate pair too). */
  private def cut(rnd: Random, value: String): String = {
    val from = rnd.nextInt(value.length + 1)
    asSpark(value.substring(from, from + rnd.nextInt(value.length - from + 1)))
  }

  /** Spark's answer for `e` on this line: Some(matched) or None when Spark refuses it. */
  private def spark(e: Expression): Option[Boolean] =
    try Option(e.eval()).map(_.asInstanceOf[Boolean]) catch { case NonFatal(_) => None }

  private def lower(s: String): String = Lower(Literal(s)).eval().asInstanceOf[UTF8String].toString

  private def grams(s: String, n: Int): Set[Long] = {
    val bytes = s.getBytes(UTF_8)
    val out = new Array[Long](Grams.count(bytes.length, n))
    Grams.hashes(bytes, 0, bytes.length, n, out)
    out.toSet
  }

  /** What a match needs of `value`: it holds every run, and every gram the runs require. */
  private def assertHolds(value: String, runs: Seq[String], what: => String): Unit = {
    runs.foreach(run => assert(value.contains(run), s"$what: the run '$run' is not in '$value'"))
    (2 to 4).foreach { n =>
      Grams.required(runs, n).foreach(required => assert(required.subsetOf(grams(value, n)), s"$what: n=$n"))
    }
  }

  test("whatever Spark's LIKE and ILIKE match holds every run and gram of the pattern, whatever the escape") {
    val rnd = new Random(54)
    var matched = 0
    (0 until 20000).foreach { _ =>
      val value = randomString(rnd, 6)
      val escape = Escapes(rnd.nextInt(Escapes.size))
      // Half the patterns are cut from the value, so that many match.
      val pattern =
        if (rnd.nextBoolean()) randomString(rnd, 4) else "%" + cut(rnd, value) + Seq("%", "_", "").apply(rnd.nextInt(3))
      val what = s"'$value' LIKE '$pattern' ESCAPE '$escape'"
      val runs = LikeRuns(pattern, escape)
      spark(Like(Literal(value), Literal(pattern), escape)) match {
        case Some(true) =>
          matched += 1
          assert(runs.isDefined, s"$what: Spark matches a pattern read as refused")
          assertHolds(value, runs.get, what)
        case Some(false) => assert(runs.isDefined, s"$what: Spark reads a pattern read as refused")
        case None => assert(runs.isEmpty, s"$what: Spark refuses a pattern read as $runs")
      }
      // ILIKE is LIKE of the lower-cased value and pattern (Spark's ILike): a filter of lower-cased values serves it.
      if (spark(Like(Lower(Literal(value)), Lower(Literal(pattern)), escape)).contains(true)) {
        LikeRuns(lower(pattern), escape).foreach(lowerRuns => assertHolds(lower(value), lowerRuns, s"ILIKE of $what"))
        assert(LikeRuns(lower(pattern), escape).isDefined, s"ILIKE of $what: Spark matches a pattern read as refused")
      }
    }
    assert(matched > 3000)
  }

  test("whatever Spark's StartsWith, EndsWith and Contains match holds the literal and its grams") {
    val rnd = new Random(55)
    var matched = 0
    (0 until 20000).foreach { _ =>
      val value = randomString(rnd, 6)
      val literal = if (rnd.nextInt(4) == 0) randomString(rnd, 2) else cut(rnd, value)
      Seq(StartsWith(Literal(value), Literal(literal)), EndsWith(Literal(value), Literal(literal)),
          Contains(Literal(value), Literal(literal))).foreach { e =>
        if (spark(e).contains(true)) {
          matched += 1
          assertHolds(value, LikeRuns.ofLiteral(literal).get, s"$e")
        }
      }
    }
    assert(matched > 10000)
  }
}
