package hsbloom.shim

import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.trees.Origin

/** A `ParseException` of an error class, as Spark 4.1 and later build one (a start position only). */
object ParseErrors {
  def apply(command: String, start: Origin, errorClass: String, parameters: Map[String, String]): ParseException =
    new ParseException(Some(command), start, errorClass, parameters)
}
