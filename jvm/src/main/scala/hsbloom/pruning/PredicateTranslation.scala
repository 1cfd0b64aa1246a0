package hsbloom.pruning

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types._

import hsbloom.index.IndexData
import hsbloom.sbbf.ParquetHash

/**
 * What a file must hold for a filter to keep any of its rows, in terms the
 * index can check: Bloom filter probes and null counts.
 *
 * A file may be skipped only when a row of it cannot make the whole filter
 * TRUE. The translation walks the filter's AND/OR structure; a leaf it
 * understands becomes a check, anything else (NOT, functions, comparisons
 * other than equality, non-literal operands, casts that are not exact) becomes
 * `MayMatch`, which keeps every file.
 */
object PredicateTranslation {

  /** A condition on one file's index entries. */
  sealed trait FilePredicate
  /** Nothing known: the file may match. */
  case object MayMatch extends FilePredicate
  /** No row of any file can match (for example `int_col = 5000000000`). */
  case object NoMatch extends FilePredicate
  /** The file may match only if its filter for `column` may hold one of `hashes`. */
  final case class Probe(column: String, hashes: Array[Long]) extends FilePredicate {
    override def toString: String = s"Probe($column, ${hashes.length} hash(es))"
  }
  /**
   * The file may match only if its filter for `column` (a substring filter: `IndexCatalog.gramPredicateKey`) may
   * hold every one of `hashes`, the grams a substring condition needs (docs/substring.md).
   */
  final case class AllGrams(column: String, hashes: Array[Long]) extends FilePredicate {
    override def toString: String = column.split(0.toChar) match {
      case Array(name, n) => s"AllGrams($n($name), ${hashes.length} gram(s))"
      case Array(name, n, lower) => s"AllGrams($n($lower($name)), ${hashes.length} gram(s))"
      case _ => s"AllGrams(${column.replace(0.toChar, ' ')}, ${hashes.length} gram(s))"
    }
  }
  /** The file may match only if `column` has a null in it. */
  final case class HasNulls(column: String) extends FilePredicate
  final case class AllOf(children: Seq[FilePredicate]) extends FilePredicate
  final case class AnyOf(children: Seq[FilePredicate]) extends FilePredicate

  /**
   * Translates the scan's data filters (a conjunction; attribute names are the
   * relation's) for the indexed columns `columns` (name -> type) and the
   * columns with substring filters `grams` ((name, of lower-cased values) -> n and predicate key).
   */
  def translate(filters: Seq[Expression], columns: Map[String, DataType],
      grams: Map[(String, Boolean), (Int, String)] = Map.empty): FilePredicate =
    and(filters.map(f => translate(f, columns, grams)))

  def translate(e: Expression, columns: Map[String, DataType]): FilePredicate = translate(e, columns, Map.empty[(String, Boolean), (Int, String)])

  def translate(e: Expression, columns: Map[String, DataType], grams: Map[(String, Boolean), (Int, String)]): FilePredicate = e match {
    case And(l, r) => and(Seq(translate(l, columns, grams), translate(r, columns, grams)))
    case Or(l, r) => or(Seq(translate(l, columns, grams), translate(r, columns, grams)))
    case SubstringCondition(p) => if (grams.isEmpty) MayMatch else p(grams)
    case EqualTo(ColumnRef(c), Literal(v, _)) => equalTo(c, v, columns)
    case EqualTo(Literal(v, _), ColumnRef(c)) => equalTo(c, v, columns)
    case EqualNullSafe(ColumnRef(c), Literal(v, _)) => equalNullSafe(c, v, columns)
    case EqualNullSafe(Literal(v, _), ColumnRef(c)) => equalNullSafe(c, v, columns)
    case In(ColumnRef(c), list) if list.forall(_.isInstanceOf[Literal]) =>
      oneOf(c, list.map(_.asInstanceOf[Literal].value), columns)
    case InSet(ColumnRef(c), values) => oneOf(c, values, columns)
    case IsNull(ColumnRef(c)) => if (c.isIndexed(columns)) HasNulls(c.attribute.name) else MayMatch
    case _ => MayMatch
  }

  /**
   * A column as a comparison sees it: an attribute, possibly under casts that
   * `ExactCast` can invert (so `cast(c) = x` can be answered about `c`).
   */
  final case class Column(attribute: AttributeReference, casts: List[Cast]) {
    /** The type the comparison uses. */
    def comparedType: DataType = casts.headOption.map(_.dataType).getOrElse(attribute.dataType)
    def isIndexed(columns: Map[String, DataType]): Boolean =
      columns.get(attribute.name).contains(attribute.dataType) && ParquetHash.isSupported(attribute.dataType)

    /**
     * The column values equal (as compared) to a non-null `value` of the compared
     * type; None when unknown.
     */
    def valuesEqualTo(value: Any): Option[Seq[Any]] = casts.foldLeft(Option(Seq(value))) {
      case (None, _) => None
      case (Some(values), cast) =>
        val inner = cast.child.dataType
        val mapped = values.map(v => ExactCast.inverse(v, cast.dataType, inner, cast.timeZoneId))
        if (mapped.exists(_.isEmpty)) None else Some(mapped.flatMap(_.get))
    }
  }

  /** Matches an attribute under zero or more exact, one-to-one casts. */
  object ColumnRef {
    def unapply(e: Expression): Option[Column] = e match {
      case a: AttributeReference => Some(Column(a, Nil))
      case c @ Cast(child, to, _, _) if ExactCast.isInvertible(child.dataType, to) =>
        unapply(child).map(col => col.copy(casts = c :: col.casts))
      case _ => None
    }
  }

  private def equalTo(c: Column, value: Any, columns: Map[String, DataType]): FilePredicate =
    if (value == null) NoMatch // `c = NULL` is never TRUE
    else oneOf(c, Seq(value), columns)

  /** `c <=> NULL` holds for null rows; `c <=> v` for a non-null v is `c = v`. */
  private def equalNullSafe(c: Column, value: Any, columns: Map[String, DataType]): FilePredicate =
    if (value != null) oneOf(c, Seq(value), columns)
    else if (c.isIndexed(columns)) HasNulls(c.attribute.name)
    else MayMatch

  /**
   * `c` equal to one of `values` (literals of the compared type; nulls never
   * match). A join's run-time keys come here as an IN of up to 100,000
   * values, so the hashes are gathered in one loop into a sorted array
   * without duplicates: a few milliseconds for 100,000 keys.
   */
  private def oneOf(c: Column, values: Iterable[Any], columns: Map[String, DataType]): FilePredicate = {
    if (!c.isIndexed(columns)) return MayMatch
    val dt = c.attribute.dataType
    val hashes = new scala.collection.mutable.ArrayBuilder.ofLong
    val it = values.iterator
    while (it.hasNext) {
      val value = it.next()
      if (value != null) {
        if (c.casts.isEmpty) {
          if (!addHashes(value, dt, hashes)) return MayMatch
        } else c.valuesEqualTo(value) match {
          case None => return MayMatch
          case Some(columnValues) => if (!columnValues.forall(addHashes(_, dt, hashes))) return MayMatch
        }
      }
    }
    val distinct = sortedDistinct(hashes.result())
    if (distinct.isEmpty) NoMatch else Probe(c.attribute.name, distinct)
  }

  /** `hashes` sorted, each once. */
  private def sortedDistinct(hashes: Array[Long]): Array[Long] = {
    java.util.Arrays.sort(hashes)
    var kept = 0
    var i = 0
    while (i < hashes.length) {
      if (kept == 0 || hashes(kept - 1) != hashes(i)) { hashes(kept) = hashes(i); kept += 1 }
      i += 1
    }
    java.util.Arrays.copyOf(hashes, kept)
  }

  /**
   * Adds to `out` the hashes to probe for one column value: for a zero
   * float/double both +0.0 and -0.0 (they compare equal but hash
   * differently); decimals are brought to the column's scale exactly, or match
   * nothing (no hash). False when the value cannot be probed: NaN (it has many
   * bit patterns and Spark treats NaN = NaN as true), or a value of another type.
   */
  private def addHashes(value: Any, dt: DataType, out: scala.collection.mutable.ArrayBuilder.ofLong): Boolean =
    (value, dt) match {
      case (f: Float, FloatType) =>
        if (f.isNaN) false
        else if (f == 0.0f) { out += ParquetHash.hashFloat(0.0f); out += ParquetHash.hashFloat(-0.0f); true }
        else { out += ParquetHash.hashFloat(f); true }
      case (d: Double, DoubleType) =>
        if (d.isNaN) false
        else if (d == 0.0) { out += ParquetHash.hashDouble(0.0); out += ParquetHash.hashDouble(-0.0); true }
        else { out += ParquetHash.hashDouble(d); true }
      case (d: Decimal, t: DecimalType) =>
        val exact = d.clone()
        if (exact.changePrecision(t.precision, t.scale) && exact.compare(d) == 0) {
          out += ParquetHash.hashDecimal(exact, t.precision)
        }
        true
      case _ =>
        try { out += ParquetHash.hashValue(value, dt); true } catch { case _: IllegalArgumentException => false }
    }

  private def and(children: Seq[FilePredicate]): FilePredicate =
    combine(children, neutral = MayMatch, absorbing = NoMatch, { case AllOf(cs) => cs }, AllOf(_))

  private def or(children: Seq[FilePredicate]): FilePredicate =
    combine(children, neutral = NoMatch, absorbing = MayMatch, { case AnyOf(cs) => cs }, AnyOf(_))

  /** Flattens nested nodes of the same kind, drops `neutral`, and collapses on `absorbing`. */
  private def combine(children: Seq[FilePredicate], neutral: FilePredicate, absorbing: FilePredicate,
      nested: PartialFunction[FilePredicate, Seq[FilePredicate]], node: Seq[FilePredicate] => FilePredicate)
      : FilePredicate = {
    val flat = children.flatMap(c => nested.applyOrElse(c, (p: FilePredicate) => Seq(p))).filter(_ != neutral)
    if (flat.contains(absorbing)) absorbing
    else flat match {
      case Seq() => neutral
      case Seq(one) => one
      case many => node(many)
    }
  }

  /** The columns a predicate checks. */
  def columnsOf(p: FilePredicate): Set[String] = p match {
    case Probe(c, _) => Set(c)
    case AllGrams(c, _) => Set(c)
    case HasNulls(c) => Set(c)
    case AllOf(cs) => cs.flatMap(columnsOf).toSet
    case AnyOf(cs) => cs.flatMap(columnsOf).toSet
    case _ => Set.empty
  }

  /**
   * `p` for the row groups of one file: each probe keeps only the hashes the
   * file's own entries may hold (no entry: all of them), and a probe left
   * with none is `NoMatch`. A value in a row group is in its file, so a hash
   * the file's filter rules out can match none of its row groups: an IN of
   * `n` values then probes a file's zones with the few values the file may
   * hold, not all `n`, and a zone's false positives come from those alone
   * (docs/design/zones.md).
   */
  def narrowedTo(p: FilePredicate, fileEntries: String => Seq[IndexData.ColumnEntry]): FilePredicate = p match {
    case Probe(c, hashes) =>
      val entries = fileEntries(c)
      val left = if (entries.isEmpty) hashes else hashes.filter(h => entries.forall(_.mightContainAny(Array(h))))
      if (left.isEmpty) NoMatch else if (left.length == hashes.length) p else Probe(c, left)
    case AllGrams(_, _) => if (mayMatch(p, fileEntries)) p else NoMatch
    case AllOf(cs) => and(cs.map(narrowedTo(_, fileEntries)))
    case AnyOf(cs) => or(cs.map(narrowedTo(_, fileEntries)))
    case other => other
  }

  /**
   * Whether a file may match, given the index entries for its columns (from
   * every index covering the column; each is a proof on its own, so a check
   * fails when any entry says so; no entry means unknown, so it holds).
   */
  def mayMatch(p: FilePredicate, entries: String => Seq[IndexData.ColumnEntry]): Boolean = p match {
    case MayMatch => true
    case NoMatch => false
    case Probe(c, hashes) => entries(c).forall(_.mightContainAny(hashes))
    case AllGrams(c, hashes) => hashes.forall(h => entries(c).forall(_.mightContainAny(Array(h))))
    case HasNulls(c) => entries(c).forall(_.mayHoldNulls)
    case AllOf(cs) => cs.forall(mayMatch(_, entries))
    case AnyOf(cs) => cs.exists(mayMatch(_, entries))
  }
}
