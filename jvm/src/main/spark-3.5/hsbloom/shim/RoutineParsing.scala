package hsbloom.shim

import org.apache.spark.sql.catalyst.parser.ParserInterface

/** Spark 3.5's parser has no `parseRoutineParam` (4.0's): nothing to add. */
trait RoutineParsing extends ParserInterface
