package hsbloom.shim

import org.apache.spark.sql.catalyst.parser.ParserInterface

/**
 * Spark 4.0 has no `parsePlanWithParameters`: a statement with arguments is parsed by `parsePlan` and its
 * parameters bound by the analyzer, so there is nothing to add.
 */
trait ParameterizedParsing extends ParserInterface
