package hsbloom.sbbf

import org.apache.spark.sql.catalyst.expressions.XXH64
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatchRow}
import org.apache.spark.unsafe.types.UTF8String

/**
 * The hash the Parquet spec gives a value: XXH64 with seed 0 over the value's
 * PLAIN encoding for the physical type Spark's Parquet writer uses for the
 * column's type.
 *
 *  - byte, short, int, date: INT32 (4 bytes little-endian; byte and short widened)
 *  - long, timestamp, timestamp_ntz: INT64 (timestamps in microseconds)
 *  - float, double: the raw IEEE bits (as parquet-java's ByteBuffer.putFloat/putDouble)
 *  - string, binary: the bytes, without the 4-byte length prefix
 *  - decimal: INT32 unscaled for precision <= 9, INT64 for <= 18, above that the
 *    big-endian two's complement unscaled value in Spark's fixed length
 *
 * XXH64 itself is Spark's (`catalyst.expressions.XXH64`, seed 0), which the
 * shared test vectors tie to parquet-java's and to our Python implementation.
 */
object ParquetHash {
  private val Seed = 0L

  def hashInt(v: Int): Long = XXH64.hashInt(v, Seed)
  def hashLong(v: Long): Long = XXH64.hashLong(v, Seed)
  def hashFloat(v: Float): Long = hashInt(java.lang.Float.floatToRawIntBits(v))
  def hashDouble(v: Double): Long = hashLong(java.lang.Double.doubleToRawLongBits(v))
  def hashBytes(b: Array[Byte]): Long = hashBytes(b, 0, b.length)
  /** The hash of `length` bytes of `b` from `offset`: a BYTE_ARRAY value that is part of a larger array. */
  def hashBytes(b: Array[Byte], offset: Int, length: Int): Long =
    XXH64.hashUnsafeBytes(b, org.apache.spark.unsafe.Platform.BYTE_ARRAY_OFFSET.toLong + offset, length, Seed)
  /** The hash of `length` bytes at `offset` of `base` (Spark's unsafe addressing: an array or off-heap memory). */
  def hashUnsafe(base: AnyRef, offset: Long, length: Int): Long = XXH64.hashUnsafeBytes(base, offset, length, Seed)
  def hashUTF8(s: UTF8String): Long = XXH64.hashUnsafeBytes(s.getBaseObject, s.getBaseOffset, s.numBytes, Seed)

  /** Bytes Spark's Parquet writer uses for a decimal of this precision stored as FIXED_LEN_BYTE_ARRAY. */
  def decimalByteLength(precision: Int): Int = Decimal.minBytesForPrecision(precision)

  def hashDecimal(d: Decimal, precision: Int): Long = {
    if (precision <= Decimal.MAX_INT_DIGITS) hashInt(d.toUnscaledLong.toInt)
    else if (precision <= Decimal.MAX_LONG_DIGITS) hashLong(d.toUnscaledLong)
    else {
      val unscaled = d.toJavaBigDecimal.unscaledValue.toByteArray
      val length = decimalByteLength(precision)
      if (unscaled.length == length) hashBytes(unscaled)
      else {
        val fixed = new Array[Byte](length)
        val sign: Byte = if (unscaled(0) < 0) -1 else 0
        java.util.Arrays.fill(fixed, 0, length - unscaled.length, sign)
        System.arraycopy(unscaled, 0, fixed, length - unscaled.length, unscaled.length)
        hashBytes(fixed)
      }
    }
  }

  /**
   * Whether values of `dt` can be indexed and probed. Strings must compare by
   * their bytes: a collation such as UTF8_LCASE makes unequal bytes equal, which
   * a hash of the bytes cannot see.
   */
  def isSupported(dt: DataType): Boolean = dt match {
    case ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType | DateType |
         TimestampType | TimestampNTZType | BinaryType | _: DecimalType => true
    case s: StringType => s == StringType // the default UTF8_BINARY collation, no char/varchar constraint
    case _ => false
  }

  /** Hashes the value at `ordinal` of a row (or array) of Catalyst values; the value must not be null. */
  trait Hasher extends Serializable {
    def hash(row: SpecializedGetters, ordinal: Int): Long
  }

  /** The hasher for a column type, or None where the type is not supported. */
  def hasherFor(dt: DataType): Option[Hasher] = {
    if (!isSupported(dt)) None
    else Some(dt match {
      case ByteType => (r: SpecializedGetters, i: Int) => hashInt(r.getByte(i).toInt)
      case ShortType => (r: SpecializedGetters, i: Int) => hashInt(r.getShort(i).toInt)
      case IntegerType | DateType => (r: SpecializedGetters, i: Int) => hashInt(r.getInt(i))
      case LongType | TimestampType | TimestampNTZType => (r: SpecializedGetters, i: Int) => hashLong(r.getLong(i))
      case FloatType => (r: SpecializedGetters, i: Int) => hashFloat(r.getFloat(i))
      case DoubleType => (r: SpecializedGetters, i: Int) => hashDouble(r.getDouble(i))
      case _: StringType => (r: SpecializedGetters, i: Int) => hashUTF8(r.getUTF8String(i))
      case BinaryType => (r: SpecializedGetters, i: Int) => hashBytes(r.getBinary(i))
      case d: DecimalType => (r: SpecializedGetters, i: Int) => hashDecimal(r.getDecimal(i, d.precision, d.scale), d.precision)
    })
  }

  /**
   * Hashes a whole column vector at once (the index build's columnar path):
   * the non-null values of rows `0 until n`, in row order, into `out`;
   * returns how many. One tight loop per physical type, so the JIT sees a
   * single accessor and a single hash function in each.
   */
  trait VectorHasher {
    def hashAll(v: ColumnVector, n: Int, out: Array[Long]): Int
  }

  def vectorHasherFor(dt: DataType): Option[VectorHasher] = hasherFor(dt).map { rowHasher =>
    dt match {
      case IntegerType | DateType => new VectorHasher {
        def hashAll(v: ColumnVector, n: Int, out: Array[Long]): Int = {
          var (i, k) = (0, 0)
          val nulls = v.hasNull
          while (i < n) {
            if (!nulls || !v.isNullAt(i)) { out(k) = hashInt(v.getInt(i)); k += 1 }
            i += 1
          }
          k
        }
      }
      case LongType | TimestampType | TimestampNTZType => new VectorHasher {
        def hashAll(v: ColumnVector, n: Int, out: Array[Long]): Int = {
          var (i, k) = (0, 0)
          val nulls = v.hasNull
          while (i < n) {
            if (!nulls || !v.isNullAt(i)) { out(k) = hashLong(v.getLong(i)); k += 1 }
            i += 1
          }
          k
        }
      }
      case _: StringType => new VectorHasher {
        def hashAll(v: ColumnVector, n: Int, out: Array[Long]): Int = {
          var (i, k) = (0, 0)
          val nulls = v.hasNull
          while (i < n) {
            if (!nulls || !v.isNullAt(i)) { out(k) = hashUTF8(v.getUTF8String(i)); k += 1 }
            i += 1
          }
          k
        }
      }
      case _ => new VectorHasher { // every other type through a one-column row view
        def hashAll(v: ColumnVector, n: Int, out: Array[Long]): Int = {
          val row = new ColumnarBatchRow(Array(v))
          var (i, k) = (0, 0)
          while (i < n) {
            if (!v.isNullAt(i)) { row.rowId = i; out(k) = rowHasher.hash(row, 0); k += 1 }
            i += 1
          }
          k
        }
      }
    }
  }

  /** Hash of one non-null Catalyst value (the internal representation: UTF8String, Decimal, Int days, ...). */
  def hashValue(value: Any, dt: DataType): Long = (value, dt) match {
    case (v: Byte, ByteType) => hashInt(v.toInt)
    case (v: Short, ShortType) => hashInt(v.toInt)
    case (v: Int, IntegerType | DateType) => hashInt(v)
    case (v: Long, LongType | TimestampType | TimestampNTZType) => hashLong(v)
    case (v: Float, FloatType) => hashFloat(v)
    case (v: Double, DoubleType) => hashDouble(v)
    case (v: UTF8String, s: StringType) if s == StringType => hashUTF8(v)
    case (v: Array[Byte], BinaryType) => hashBytes(v)
    case (v: Decimal, d: DecimalType) => hashDecimal(v, d.precision)
    case _ => throw new IllegalArgumentException(
      s"cannot hash ${if (value == null) "null" else value.getClass.getSimpleName} as $dt")
  }
}
