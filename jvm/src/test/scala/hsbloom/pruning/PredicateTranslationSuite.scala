package hsbloom.pruning

import org.apache.spark.sql.catalyst.expressions.{AttributeReference, In, InSet, Literal}
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.pruning.PredicateTranslation._
import hsbloom.sbbf.ParquetHash

/**
 * An IN list or set becomes one probe of each distinct hash of its non-null
 * values (a join's run-time keys come as a set of up to 100,000): zeros as
 * both zeros, NaN as unknown, a decimal beyond the column's scale as no value.
 */
class PredicateTranslationSuite extends AnyFunSuite {
  private def column(dt: DataType) = AttributeReference("c", dt)()
  private def translated(e: org.apache.spark.sql.catalyst.expressions.Expression, dt: DataType): FilePredicate =
    translate(e, Map("c" -> dt))
  private def hashes(p: FilePredicate): Seq[Long] = p match {
    case Probe("c", h) => h.toSeq
    case other => fail(s"not a probe: $other")
  }

  test("an IN with duplicates and nulls probes each distinct value's hash once, sorted") {
    val c = column(LongType)
    val p = translated(In(c, Seq(3L, 1L, 3L, null, 2L).map(v => Literal.create(v, LongType))), LongType)
    assert(hashes(p) == Seq(1L, 2L, 3L).map(ParquetHash.hashLong).sorted)
    val set = translated(InSet(c, Set[Any](1L, 2L, 3L, null)), LongType)
    assert(hashes(set) == hashes(p))
  }

  test("100,000 keys: one hash each") {
    val p = translated(InSet(column(LongType), (0L until 100000L).toSet[Any]), LongType)
    val h = hashes(p)
    assert(h.size == 100000 && h == h.sorted && h.toSet == (0L until 100000L).map(ParquetHash.hashLong).toSet)
  }

  test("a zero is probed as both zeros; NaN anywhere in the list keeps every file") {
    val c = column(DoubleType)
    assert(hashes(translated(InSet(c, Set[Any](0.0, 1.5)), DoubleType)).toSet ==
      Seq(0.0, -0.0, 1.5).map(ParquetHash.hashDouble).toSet) // (a Set of doubles would hold one zero)
    assert(translated(InSet(c, Set[Any](1.5, Double.NaN)), DoubleType) == MayMatch)
    val f = column(FloatType)
    assert(hashes(translated(InSet(f, Set[Any](-0.0f)), FloatType)).toSet == Seq(0.0f, -0.0f).map(ParquetHash.hashFloat).toSet)
  }

  test("only nulls, or decimals the column cannot hold, match nothing") {
    assert(translated(InSet(column(LongType), Set[Any](null)), LongType) == NoMatch)
    val dt = DecimalType(6, 2)
    val d = column(dt)
    val beyondScale = Decimal(BigDecimal("1.005"))
    assert(translated(InSet(d, Set[Any](beyondScale)), dt) == NoMatch)
    val exact = Decimal(BigDecimal("1.50"))
    assert(hashes(translated(InSet(d, Set[Any](beyondScale, exact)), dt)) == Seq(ParquetHash.hashDecimal(exact, 6)))
  }

  test("a value of another type keeps every file") {
    assert(translated(InSet(column(LongType), Set[Any]("1")), LongType) == MayMatch)
  }
}
