package hsbloom.shim

import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.trees.Origin

/** A `ParseException` of an error class, as Spark 3.5 and 4.0 build one: with a stop position (the start, here). */
object ParseErrors {
  def apply(command: String, start: Origin, errorClass: String, parameters: Map[String, String]): ParseException =
    new ParseException(Some(command), start, start, errorClass, parameters)
}
