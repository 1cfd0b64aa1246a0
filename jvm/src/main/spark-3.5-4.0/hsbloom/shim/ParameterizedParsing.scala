package hsbloom.shim

import org.apache.spark.sql.catalyst.parser.ParserInterface

/**
 * Spark 3.5 and 4.0 have no `parsePlanWithParameters`: a statement with arguments is parsed by `parsePlan` and its
 * parameters bound by the analyzer, so there is nothing to add.
 */
trait ParameterizedParsing extends ParserInterface
