package hsbloom.shim

import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.types.StructType

/** Spark 4's parser parses a routine's parameters (`parseRoutineParam`): the wrapped parser's, unchanged. */
trait RoutineParsing extends ParserInterface {
  protected def delegate: ParserInterface

  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
}
