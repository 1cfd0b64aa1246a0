package hsbloom.indexing

import org.apache.parquet.schema.{LogicalTypeAnnotation, Type}
import org.apache.parquet.schema.LogicalTypeAnnotation.{DecimalLogicalTypeAnnotation, IntLogicalTypeAnnotation,
  StringLogicalTypeAnnotation}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._
import org.apache.spark.sql.types._

import hsbloom.sbbf.ParquetHash

/**
 * Whether a Parquet column's native Bloom filter holds exactly the hashes
 * hsbloom computes for the values Spark reads from it (docs/design/adoption.md).
 *
 * A writer hashes the PLAIN encoding of the column's physical type; hsbloom
 * hashes the Spark value as `ParquetHash` says (docs/design/sbbf.md). The two
 * agree only when the file stores the Spark type the way Spark writes it:
 * the same physical type and an annotation that makes the reader hand the
 * stored value over unchanged. Anything else (a widened type such as INT32
 * read as long, a decimal of another precision or stored as bytes, unsigned
 * integers) is hashed from the data. Dates and timestamps are always hashed:
 * a reader may rebase old values (Spark's legacy calendar modes), so the
 * value read can differ from the value stored.
 */
object NativeTypes {
  /** None when a filter of `stored` holds hsbloom's hashes of `sparkType`; else why not. */
  def mismatch(stored: Type, sparkType: DataType): Option[String] = {
    if (!stored.isPrimitive || stored.isRepetition(Type.Repetition.REPEATED)) {
      return Some(s"column stored as $stored, not a plain value")
    }
    val primitive = stored.asPrimitiveType
    val physical = primitive.getPrimitiveTypeName
    val logical = primitive.getLogicalTypeAnnotation
    val agrees = sparkType match {
      case ByteType => physical == INT32 && signedInt(logical, 8)
      case ShortType => physical == INT32 && signedInt(logical, 16)
      case IntegerType => physical == INT32 && (logical == null || signedInt(logical, 32))
      case LongType => physical == INT64 && (logical == null || signedInt(logical, 64))
      case FloatType => physical == FLOAT && logical == null
      case DoubleType => physical == DOUBLE && logical == null
      case _: StringType => physical == BINARY && (logical == null || logical.isInstanceOf[StringLogicalTypeAnnotation])
      case BinaryType => physical == BINARY && logical == null
      case d: DecimalType => logical match {
        case a: DecimalLogicalTypeAnnotation if a.getPrecision == d.precision && a.getScale == d.scale =>
          physical == decimalPhysical(d.precision) &&
            (physical != FIXED_LEN_BYTE_ARRAY || primitive.getTypeLength == ParquetHash.decimalByteLength(d.precision))
        case _ => false
      }
      case _ => false
    }
    if (agrees) None else Some(s"stored as ${primitive.toString.trim}, hashed by hsbloom as ${sparkType.simpleString}")
  }

  private def signedInt(logical: LogicalTypeAnnotation, bits: Int): Boolean = logical match {
    case i: IntLogicalTypeAnnotation => i.isSigned && i.getBitWidth == bits
    case _ => false
  }

  /** The physical type hsbloom hashes a decimal of `precision` as (Spark's non-legacy writer's). */
  private def decimalPhysical(precision: Int): PrimitiveTypeName =
    if (precision <= 9) INT32 else if (precision <= 18) INT64 else FIXED_LEN_BYTE_ARRAY
}
