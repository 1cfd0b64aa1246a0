package hsbloom.functions

import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types.{BinaryType, BooleanType, DataType, LongType}

import hsbloom.sbbf.{ParquetHash, Sbbf}

/**
 * `hsbloom_might_contain(filter, value)`: whether a serialized Parquet SBBF
 * (header + bitset) may contain `value`, hashed the Parquet way for the
 * value's type. NULL for a NULL filter or value. A corrupt filter raises an
 * error naming the problem.
 */
case class MightContain(filter: Expression, value: Expression)
  extends BinaryExpression with CodegenFallback {

  override def left: Expression = filter
  override def right: Expression = value
  override def dataType: DataType = BooleanType
  override def nullable: Boolean = true
  override def prettyName: String = "hsbloom_might_contain"

  override def checkInputDataTypes(): TypeCheckResult = {
    if (filter.dataType != BinaryType) {
      TypeCheckResult.TypeCheckFailure(s"hsbloom_might_contain needs a BINARY filter, got ${filter.dataType.sql}")
    } else if (!ParquetHash.isSupported(value.dataType)) {
      TypeCheckResult.TypeCheckFailure(s"hsbloom_might_contain cannot hash values of type ${value.dataType.sql}")
    } else TypeCheckResult.TypeCheckSuccess
  }

  @transient private lazy val valueType = value.dataType

  override protected def nullSafeEval(filterBytes: Any, v: Any): Any =
    Sbbf.probeSerialized(filterBytes.asInstanceOf[Array[Byte]], ParquetHash.hashValue(v, valueType))

  override protected def withNewChildrenInternal(newLeft: Expression, newRight: Expression): MightContain =
    copy(filter = newLeft, value = newRight)
}

/** `hsbloom_hash(value)`: the Parquet SBBF hash (XXH64, seed 0, of the PLAIN encoding) of `value`. */
case class ParquetHashOf(child: Expression) extends UnaryExpression with CodegenFallback {
  override def dataType: DataType = LongType
  override def prettyName: String = "hsbloom_hash"

  override def checkInputDataTypes(): TypeCheckResult = {
    if (!ParquetHash.isSupported(child.dataType)) {
      TypeCheckResult.TypeCheckFailure(s"hsbloom_hash cannot hash values of type ${child.dataType.sql}")
    } else TypeCheckResult.TypeCheckSuccess
  }

  @transient private lazy val childType = child.dataType
  override protected def nullSafeEval(v: Any): Any = ParquetHash.hashValue(v, childType)
  override protected def withNewChildInternal(newChild: Expression): ParquetHashOf = copy(child = newChild)
}
