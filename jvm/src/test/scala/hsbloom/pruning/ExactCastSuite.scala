package hsbloom.pruning

import scala.util.Random

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.pruning.PredicateTranslation._
import hsbloom.sbbf.ParquetHash

/**
 * The exact-type rules: which column values make `cast(column) = literal`
 * true, checked against Spark's own Cast evaluation over many values.
 */
class ExactCastSuite extends AnyFunSuite {
  private val utc = Some("UTC")

  /** Every `v` in `candidates` with cast(v as target) == literal must be in the answer (when known). */
  private def checkAgainstSpark(column: DataType, target: DataType, literal: Any, candidates: Seq[Any]): Unit = {
    val answer = ExactCast.inverse(literal, target, column, utc)
    val ordering = org.apache.spark.sql.catalyst.util.TypeUtils.getInterpretedOrdering(target)
    candidates.foreach { v =>
      val cast = Cast(Literal.create(v, column), target, utc, EvalMode.TRY).eval()
      if (cast != null && ordering.equiv(cast, literal)) {
        assert(answer.isEmpty || answer.get.exists(a => TypeUtilsEquiv(column, a, v)),
          s"cast($v as $target) = $literal but the answer $answer misses it")
      }
    }
  }

  private def TypeUtilsEquiv(dt: DataType, a: Any, b: Any): Boolean =
    org.apache.spark.sql.catalyst.util.TypeUtils.getInterpretedOrdering(dt).equiv(a, b)

  test("integer widening: in-range literals have one answer, out-of-range none") {
    assert(ExactCast.inverse(5L, LongType, IntegerType, utc) == Some(Seq(5)))
    assert(ExactCast.inverse(5000000000L, LongType, IntegerType, utc) == Some(Nil))
    assert(ExactCast.inverse(300, IntegerType, ByteType, utc) == Some(Nil))
    assert(ExactCast.inverse(-128, IntegerType, ByteType, utc) == Some(Seq(-128.toByte)))
    val rnd = new Random(1)
    (0 until 200).foreach { _ =>
      val lit = rnd.nextLong() >> rnd.nextInt(63)
      checkAgainstSpark(IntegerType, LongType, lit, Seq(lit.toInt, 0, -1))
    }
  }

  test("integers compared as doubles: exact below 2^53, unknown above") {
    assert(ExactCast.inverse(5.0, DoubleType, LongType, utc) == Some(Seq(5L)))
    assert(ExactCast.inverse(5.5, DoubleType, LongType, utc) == Some(Nil))
    assert(ExactCast.inverse(-0.0, DoubleType, IntegerType, utc) == Some(Seq(0)))
    assert(ExactCast.inverse(math.pow(2, 60), DoubleType, LongType, utc).isEmpty)
    assert(ExactCast.inverse(math.pow(2, 60), DoubleType, IntegerType, utc) == Some(Nil))
    assert(ExactCast.inverse(Double.NaN, DoubleType, LongType, utc).isEmpty)
    assert(ExactCast.inverse(16777217.0f, FloatType, IntegerType, utc).isEmpty) // 2^24 + 1 rounds in float
    assert(ExactCast.inverse(3.0e9, DoubleType, IntegerType, utc) == Some(Nil))
  }

  test("decimals: widening is exact, extra digits match nothing") {
    val col = DecimalType(5, 2)
    val wide = DecimalType(10, 4)
    assert(ExactCast.inverse(Decimal("1.2500"), wide, col, utc).map(_.map(_.toString)) == Some(Seq("1.25")))
    assert(ExactCast.inverse(Decimal("1.2501"), wide, col, utc) == Some(Nil))
    assert(ExactCast.inverse(Decimal("123456.0000"), wide, col, utc) == Some(Nil))
    assert(ExactCast.inverse(Decimal(7), DecimalType(11, 1), IntegerType, utc) == Some(Seq(7)))
    assert(ExactCast.inverse(Decimal("7.5"), DecimalType(11, 1), IntegerType, utc) == Some(Nil))
    assert(!ExactCast.isExactOneToOne(DecimalType(20, 2), DoubleType))
  }

  test("float to double, date to timestamp; strings and ntz are never inverted") {
    assert(ExactCast.inverse(0.5, DoubleType, FloatType, utc) == Some(Seq(0.5f)))
    assert(ExactCast.inverse(0.1, DoubleType, FloatType, utc) == Some(Nil)) // 0.1 is no float
    assert(ExactCast.inverse(86400L * 1000000 * 3, TimestampType, DateType, utc) == Some(Seq(3)))
    assert(ExactCast.inverse(86400L * 1000000 * 3 + 1, TimestampType, DateType, utc) == Some(Nil))
    assert(ExactCast.inverse(5, IntegerType, StringType, utc).isEmpty)
    assert(!ExactCast.isInvertible(TimestampNTZType, TimestampType))
    assert(!ExactCast.isInvertible(StringType, IntegerType))
  }

  test("numbers and dates as strings: the canonical text has one answer, any other spelling none") {
    def str(x: String) = UTF8String.fromString(x)
    assert(ExactCast.inverse(str("205"), StringType, IntegerType, utc) == Some(Seq(205)))
    assert(ExactCast.inverse(str("-7"), StringType, ByteType, utc) == Some(Seq(-7.toByte)))
    Seq("0205", " 205", "205 ", "+205", "205.0", "2e2", "", "x", "99999999999").foreach { lit =>
      assert(ExactCast.inverse(str(lit), StringType, IntegerType, utc) == Some(Nil), lit)
    }
    assert(ExactCast.inverse(str("2020-07-24"), StringType, DateType, utc) == Some(Seq(18467)))
    Seq("2020-7-24", "2020-07-24 ", "2020-07-24T00:00:00", "20200724", "2020-07-24 00:00:00").foreach { lit =>
      assert(ExactCast.inverse(str(lit), StringType, DateType, utc) == Some(Nil), lit)
    }
    assert(!ExactCast.isInvertible(TimestampType, StringType))
    assert(!ExactCast.isInvertible(DoubleType, StringType))
    val rnd = new Random(2)
    (0 until 300).foreach { _ =>
      val v = rnd.nextInt() >> rnd.nextInt(31)
      Seq(v.toString, "0" + v, " " + v, s"$v.0", s"+$v").foreach { lit =>
        checkAgainstSpark(IntegerType, StringType, str(lit), Seq(v, v + 1, -v))
        checkAgainstSpark(LongType, StringType, str(lit), Seq(v.toLong, v.toLong << 20))
      }
      val day = rnd.nextInt(4000000) - 1000000
      val text = Cast(Literal.create(day, DateType), StringType, utc).eval().toString
      assert(ExactCast.inverse(str(text), StringType, DateType, utc) == Some(Seq(day)), text)
      Seq(text, text + " ", text.replaceFirst("-0", "-")).foreach { lit =>
        checkAgainstSpark(DateType, StringType, str(lit), Seq(day, day + 1))
      }
    }
  }

  test("decimals of at most 15 digits as doubles: the double rounded to the scale, or none") {
    val col = DecimalType(12, 2)
    assert(ExactCast.inverse(205.25, DoubleType, col, utc) == Some(Seq(Decimal("205.25"))))
    assert(ExactCast.inverse(205.251, DoubleType, col, utc) == Some(Nil))
    assert(ExactCast.inverse(1e300, DoubleType, col, utc) == Some(Nil))
    assert(ExactCast.inverse(Double.PositiveInfinity, DoubleType, col, utc) == Some(Nil))
    assert(ExactCast.inverse(Double.NaN, DoubleType, col, utc).isEmpty)
    assert(ExactCast.inverse(-0.0, DoubleType, col, utc) == Some(Seq(Decimal("0.00"))))
    assert(!ExactCast.isInvertible(DecimalType(16, 2), DoubleType))
    val rnd = new Random(3)
    Seq(DecimalType(15, 3), DecimalType(5, 2), DecimalType(15, 0), DecimalType(15, 15), DecimalType(9, 4)).foreach { t =>
      (0 until 300).foreach { _ =>
        val unscaled = (rnd.nextLong() % math.pow(10, t.precision).toLong) >> rnd.nextInt(40)
        val v = Decimal(unscaled, t.precision, t.scale)
        val l = Cast(Literal.create(v, t), DoubleType, utc).eval().asInstanceOf[Double]
        assert(ExactCast.inverse(l, DoubleType, t, utc) == Some(Seq(v)), s"$v as $t")
        val step = Decimal(1L, t.precision, t.scale)
        val neighbours = Seq(v + step, v - step).filter(_.changePrecision(t.precision, t.scale))
        Seq(l, Math.nextUp(l), l + 0.4 * math.pow(10, -t.scale)).foreach { lit =>
          checkAgainstSpark(t, DoubleType, lit, v +: neighbours)
        }
      }
    }
  }

  private val k = AttributeReference("k", LongType)()
  private val s = AttributeReference("s", StringType)()
  private val d = AttributeReference("d", DoubleType)()
  private val columns = Map("k" -> (LongType: DataType), "s" -> (StringType: DataType), "d" -> (DoubleType: DataType))

  test("translation follows AND/OR and leaves the rest as may-match") {
    val eq = EqualTo(k, Literal(5L))
    assert(translate(eq, columns).isInstanceOf[Probe])
    assert(translate(EqualTo(Literal(5L), k), columns).isInstanceOf[Probe])
    assert(translate(Not(eq), columns) == MayMatch)
    assert(translate(GreaterThan(k, Literal(5L)), columns) == MayMatch)
    assert(translate(And(eq, GreaterThan(k, Literal(5L))), columns).isInstanceOf[Probe])
    assert(translate(Or(eq, GreaterThan(k, Literal(5L))), columns) == MayMatch)
    assert(translate(EqualNullSafe(k, Literal(null, LongType)), columns) == HasNulls("k"))
    assert(translate(IsNull(k), columns) == HasNulls("k"))
    assert(translate(EqualTo(k, Literal(null, LongType)), columns) == NoMatch)
    val unindexed = AttributeReference("x", LongType)()
    assert(translate(EqualTo(unindexed, Literal(5L)), columns) == MayMatch)
    val cast = Cast(s, IntegerType, utc)
    assert(translate(EqualTo(cast, Literal(5)), columns) == MayMatch)
  }

  test("IN lists: every value probed, nulls dropped, InSet too") {
    val in = In(k, Seq(Literal(1L), Literal(2L), Literal(null, LongType)))
    assert(translate(in, columns).asInstanceOf[Probe].hashes.length == 2)
    val inset = InSet(s, Set(UTF8String.fromString("a"), UTF8String.fromString("b"), null))
    assert(translate(inset, columns).asInstanceOf[Probe].hashes.length == 2)
    assert(translate(In(k, Seq(Literal(null, LongType))), columns) == NoMatch)
  }

  test("doubles: zero probes both signs, NaN never prunes") {
    val zero = translate(EqualTo(d, Literal(-0.0)), columns).asInstanceOf[Probe]
    assert(zero.hashes.toSet == Set(ParquetHash.hashDouble(0.0), ParquetHash.hashDouble(-0.0)))
    assert(translate(EqualTo(d, Literal(Double.NaN)), columns) == MayMatch)
    assert(translate(In(d, Seq(Literal(1.0), Literal(Double.NaN))), columns) == MayMatch)
  }
}
