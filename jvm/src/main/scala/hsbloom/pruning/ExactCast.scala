package hsbloom.pruning

import org.apache.spark.sql.catalyst.expressions.{Cast, EvalMode, Literal}
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.types._

import hsbloom.shim.Collations

/**
 * Which values of a column can make `cast(column as S) = literal` true.
 *
 * The analyzer and optimizer leave casts on columns where a comparison mixes
 * types (for example `cast(long_col as double) = 5.0`). A file may be pruned
 * only if we know every column value that compares equal, so this answers:
 *
 *  - `Some(values)`: exactly these column values (in the column's type) cast to
 *    the literal; `Some(Nil)` means no column value can, which is a proof too;
 *  - `None`: unknown (the cast is not known to be exact and one-to-one, such
 *    as string to number, where '5', '05' and ' 5' all equal 5): no pruning.
 *
 * Only casts that map distinct column values to distinct results and never
 * fail are accepted. For those, when some value `v` casts to the literal `l`,
 * the reverse cast of `l` (Spark's own, in TRY mode) gives back `v`; so the
 * reverse cast followed by the forward cast either returns `l` (then `v` is the
 * only answer) or not (then there is none).
 */
object ExactCast {
  /** Values of `column` type whose cast to `target` equals `literal` (a non-null value of `target`). */
  def inverse(literal: Any, target: DataType, column: DataType, timeZoneId: Option[String]): Option[Seq[Any]] = {
    (column, target) match {
      case (c, t) if c == t => Some(Seq(literal))
      case (c @ Integral(), t @ (FloatType | DoubleType)) =>
        integralFromFloating(literal, t, c)
      case (c: DecimalType, DoubleType) if c.precision <= DecimalDigitsExactInDouble =>
        decimalFromDouble(literal, c, timeZoneId)
      case _ if isExactOneToOne(column, target) =>
        val back = Cast(Literal.create(literal, target), column, timeZoneId, EvalMode.TRY).eval()
        if (back == null) Some(Nil)
        else {
          val forth = Cast(Literal.create(back, column), target, timeZoneId, EvalMode.TRY).eval()
          if (forth != null && TypeUtils.getInterpretedOrdering(target).equiv(forth, literal)) Some(Seq(back))
          else Some(Nil)
        }
      case _ => None
    }
  }

  /**
   * Casts `inverse` can answer for: the exact one-to-one ones, and integers to
   * float/double (exact for small magnitudes). None of them fails or turns a
   * non-null value into null, so `cast(c) IS NULL` is `c IS NULL`.
   */
  def isInvertible(column: DataType, target: DataType): Boolean = (column, target) match {
    case (Integral(), FloatType | DoubleType) => true
    case (c: DecimalType, DoubleType) => c.precision <= DecimalDigitsExactInDouble
    case _ => isExactOneToOne(column, target)
  }

  /** Casts from `column` to `target` that never fail and never map two values to one. */
  def isExactOneToOne(column: DataType, target: DataType): Boolean = (column, target) match {
    case (c @ Integral(), t @ Integral()) => width(c) <= width(t)
    case (c @ Integral(), t: DecimalType) => holdsAll(t, integralDigits(c), 0)
    case (c: DecimalType, t: DecimalType) => holdsAll(t, c.precision - c.scale, c.scale)
    case (FloatType, DoubleType) => true
    case (DateType, TimestampType | TimestampNTZType) => true
    // Each number or date has one canonical text ('205', '2020-07-24'); other spellings ('0205', ' 205',
    // '2020-7-24') are no value's cast, which `inverse`'s round trip finds (docs/design/exact-types.md).
    case (Integral() | DateType, s: StringType) => Collations.isBinary(s)
    case (c @ Integral(), t @ (FloatType | DoubleType)) => maxMagnitude(c) < (1L << mantissaBits(t))
    case _ => false
  }

  /** byte, short, int and long (Spark's own IntegralType is internal to Spark). */
  private object Integral {
    def unapply(t: DataType): Boolean = t == ByteType || t == ShortType || t == IntegerType || t == LongType
  }

  /** Whether decimal `t` holds every number with `intDigits` digits before the point and `scale` after. */
  private def holdsAll(t: DecimalType, intDigits: Int, scale: Int): Boolean =
    t.precision - t.scale >= intDigits && t.scale >= scale

  private def integralDigits(t: DataType): Int = t match {
    case ByteType => 3
    case ShortType => 5
    case IntegerType => 10
    case _ => 19
  }

  private def width(t: DataType): Int = t match {
    case ByteType => 1
    case ShortType => 2
    case IntegerType => 4
    case _ => 8
  }

  private def maxMagnitude(t: DataType): Long = t match {
    case ByteType => 128L
    case ShortType => 32768L
    case IntegerType => 1L << 31
    case _ => Long.MaxValue
  }

  private def mantissaBits(t: DataType): Int = if (t == FloatType) 24 else 53

  /**
   * Decimals of at most 15 digits: Spark's cast to double lands within 1.5 ulp of the number, less than half a
   * step of the decimal's scale, so the one decimal that can cast to `l` is `l` rounded to that scale.
   */
  private val DecimalDigitsExactInDouble = 15

  /**
   * `cast(decimal_col as double) = l`: `l` rounded to the column's scale when Spark's own cast of that decimal
   * gives `l` back, else none (NaN: unknown; infinities: none).
   */
  private def decimalFromDouble(literal: Any, column: DecimalType, timeZoneId: Option[String]): Option[Seq[Any]] =
    literal match {
      case l: Double if l.isNaN => None
      case l: Double if l.isInfinite => Some(Nil)
      case l: Double =>
        val rounded = Decimal(BigDecimal(l).setScale(column.scale, BigDecimal.RoundingMode.HALF_UP))
        if (!rounded.changePrecision(column.precision, column.scale)) Some(Nil)
        else {
          val forth = Cast(Literal.create(rounded, column), DoubleType, timeZoneId, EvalMode.TRY).eval()
          if (forth != null && TypeUtils.getInterpretedOrdering(DoubleType).equiv(forth, l)) Some(Seq(rounded))
          else Some(Nil)
        }
      case _ => None
    }

  /**
   * `cast(integral as float/double) = l`. Integers of magnitude below 2^24
   * (float) or 2^53 (double) convert exactly and nothing else lands there, so
   * for such an `l` the answer is `l` itself when it is a whole number in the
   * column's range, else none. Larger `l` are reached by several integers
   * (rounding): unknown, unless the column's range cannot get there at all.
   * NaN is never pruned on.
   */
  private def integralFromFloating(literal: Any, target: DataType, column: DataType): Option[Seq[Any]] = {
    val l = literal match {
      case f: Float => f.toDouble
      case d: Double => d
      case _ => return None
    }
    if (l.isNaN) None
    else if (math.abs(l) < math.pow(2, mantissaBits(target))) {
      if (l != math.floor(l) || math.abs(l) > maxMagnitude(column) ||
        l >= maxMagnitude(column).toDouble) Some(Nil) // whole numbers only, within [-max, max - 1]
      else Some(Seq(column match {
        case ByteType => l.toByte
        case ShortType => l.toShort
        case IntegerType => l.toInt
        case _ => l.toLong
      }))
    } else if (maxMagnitude(column) < (1L << mantissaBits(target))) Some(Nil)
    else None
  }
}
