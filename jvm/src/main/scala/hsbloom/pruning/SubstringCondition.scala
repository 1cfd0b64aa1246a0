package hsbloom.pruning

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types.StringType
import org.apache.spark.unsafe.types.UTF8String

import hsbloom.pruning.PredicateTranslation.{AllGrams, AllOf, AnyOf, FilePredicate, MayMatch}
import hsbloom.substring.{Grams, LikeRuns, UpperRuns}

/**
 * The substring conditions a substring filter can answer (docs/substring.md), in the forms Spark's optimizer
 * leaves them in: `StartsWith`, `EndsWith` and `Contains` of a column and a literal (Spark makes them of simple
 * `LIKE` patterns), `Like` with any literal pattern and escape character, and `LikeAll` / `LikeAny`. A match
 * gives the check as a function of the columns with substring filters (name -> n and predicate key): a file may
 * match only if its filter holds every gram of the condition's literal runs. Anything else is not matched, and a
 * condition on a column without a substring filter, or whose runs are all shorter than n bytes, keeps every file.
 *
 * Nothing is read from a pattern but its runs (`LikeRuns`, the way Spark's `Like` reads it). `ILIKE` reaches the
 * scan as `Like(Lower(col), <lower-cased pattern>)`, as does `lower(col) LIKE ...`: a condition on `Lower(col)` is
 * answered by the filter of the lower-cased values, where the index has one, and so is one on `Upper(col)`, from
 * the stretches of its runs that are surely, lower-cased, in every lower-case form (`UpperRuns`). Other functions
 * of the column keep every file.
 */
private[pruning] object SubstringCondition {
  type Check = Map[(String, Boolean), (Int, String)] => FilePredicate

  /** At most this many of a condition's grams are probed: any of them is a proof, and a long literal has many. */
  val MaxProbedGrams = 16

  def unapply(e: Expression): Option[Check] = e match {
    case StartsWith(Column(a), Literal(v: UTF8String, _)) => Some(bytesRun(a, v))
    case EndsWith(Column(a), Literal(v: UTF8String, _)) => Some(bytesRun(a, v))
    case Contains(Column(a), Literal(v: UTF8String, _)) => Some(bytesRun(a, v))
    case Like(Column(a), Literal(p: UTF8String, _), escape) => Some(pattern(a, p, escape))
    case l: LikeAll => l.child match {
      case Column(a) => Some(grams => allOf(l.patterns.map(p => pattern(a, p, LikeRuns.DefaultEscape)(grams))))
      case _ => None
    }
    case l: LikeAny => l.child match {
      case Column(a) => Some(grams => anyOf(l.patterns.map(p => pattern(a, p, LikeRuns.DefaultEscape)(grams))))
      case _ => None
    }
    case _ => None
  }

  /**
   * For `hs.explain`: each substring condition among `filters` that checks nothing, and why (no substring filter
   * of its column, probed or at all; no literal run of n bytes in its pattern).
   */
  def unanswered(filters: Seq[Expression], grams: Map[(String, Boolean), (Int, String)]): Seq[String] =
    filters.flatMap(_.collect { case e @ SubstringCondition(check) if check(grams) == MayMatch =>
      val key = e.children.collectFirst { case Column(k) => k }
      val why = (key, key.flatMap(_.in(grams))) match {
        case (Some(k), Some((n, _))) if k.upper => s"no run of $n bytes that every lower-case form holds (of " +
          "upper(c), only ASCII characters but a-z and AFHIJLNSTWY count)"
        case (_, Some((n, _))) => s"no literal run of $n bytes to look for"
        case _ => s"no probed substring filter of ${key.fold("its column")(k => if (k.lower) s"lower(${k.name})" else k.name)}"
      }
      val sql = e.sql
      s"${if (sql.length > 120) sql.take(117) + "..." else sql} keeps every file: $why"
    }).distinct

  /** A string column as the condition reads it: itself, `lower` or `upper` of it (no cast, no other function). */
  private object Column {
    def unapply(e: Expression): Option[Key] = e match {
      case a: AttributeReference if a.dataType == StringType => Some(Key(a.name, lower = false))
      case Lower(a: AttributeReference) if a.dataType == StringType => Some(Key(a.name, lower = true))
      case Upper(a: AttributeReference) if a.dataType == StringType => Some(Key(a.name, lower = true, upper = true))
      case _ => None
    }
  }

  /**
   * The filter a condition asks for: of column `name`'s values, or of their lower-cased forms (for `lower(c)`, and
   * for `upper(c)`, whose runs are first made runs of the lower-cased values: `runs`).
   */
  private final case class Key(name: String, lower: Boolean, upper: Boolean = false) {
    def in(grams: Map[(String, Boolean), (Int, String)]): Option[(Int, String)] = grams.get(name -> lower)
    def runs(bytes: Seq[Array[Byte]]): Seq[Array[Byte]] = if (upper) bytes.flatMap(UpperRuns.lowered) else bytes
  }

  /**
   * `StartsWith`, `EndsWith`, `Contains`: Spark compares the literal's bytes with the value's, so the literal's
   * bytes, as they are (valid UTF-8 or not), are the one run.
   */
  private def bytesRun(a: Key, literal: UTF8String): Check = grams => a.in(grams) match {
    case Some((n, key)) => allGrams(key, a.runs(Seq(literal.getBytes)).flatMap(Grams.of(_, n)))
    case None => MayMatch
  }

  /** `Like`: the runs of the pattern as Spark reads it (a null pattern, or one Spark refuses, keeps every file). */
  private def pattern(a: Key, pattern: UTF8String, escape: Char): Check = grams =>
    (a.in(grams), Option(pattern).flatMap(p => LikeRuns(p.toString, escape))) match {
      case (Some((n, key)), Some(runs)) =>
        allGrams(key, a.runs(runs.map(_.getBytes(java.nio.charset.StandardCharsets.UTF_8))).flatMap(Grams.of(_, n)))
      case _ => MayMatch
    }

  /** Every one of `hashes`, distinct, in order (at most `MaxProbedGrams`, spread over them) in `key`'s filter; none:
   *  no check. */
  private def allGrams(key: String, hashes: Seq[Long]): FilePredicate = {
    val distinct = hashes.distinct
    if (distinct.isEmpty) return MayMatch
    val probed = if (distinct.size <= MaxProbedGrams) distinct
      else (0 until MaxProbedGrams).map(i => distinct(i * distinct.size / MaxProbedGrams))
    AllGrams(key, probed.toArray)
  }

  private def allOf(ps: Seq[FilePredicate]): FilePredicate = ps.filter(_ != MayMatch) match {
    case Seq() => MayMatch
    case Seq(one) => one
    case many => AllOf(many)
  }

  private def anyOf(ps: Seq[FilePredicate]): FilePredicate =
    if (ps.isEmpty || ps.contains(MayMatch)) MayMatch else if (ps.size == 1) ps.head else AnyOf(ps)
}
