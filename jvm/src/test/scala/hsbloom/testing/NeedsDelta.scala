package hsbloom.testing

import org.scalatest.Tag

/**
 * A test that reads or writes Delta tables. On a Spark line no delta-spark release serves (a `-` in the delta
 * column of ../hsbloom/spark_lines.tsv) the build leaves these tests out, and the shared session has no Delta
 * (`SharedSession.withDelta`): the line's support is Parquet and catalog tables, as the docs' support table says.
 */
object NeedsDelta extends Tag("hsbloom.testing.NeedsDelta")
