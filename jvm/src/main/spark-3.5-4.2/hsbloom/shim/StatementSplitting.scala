package hsbloom.shim

import org.apache.spark.sql.catalyst.parser.ParserInterface

/** Before Spark 4.3 the parser splits no scripts (`splitStatements` is 4.3's): nothing to add. */
trait StatementSplitting extends ParserInterface
