package hsbloom

import org.scalatest.funsuite.AnyFunSuite

import hsbloom.functions.SqlFunctions

class BuildInfoSuite extends AnyFunSuite {
  test("the jar records the Spark line it was compiled for, the one on the classpath") {
    assert(BuildInfo.sparkLine == BuildInfo.lineOf(org.apache.spark.SPARK_VERSION))
    // The release it compiled against; the suite may run on a newer patch (spark_lines.tsv's suite column).
    assert(BuildInfo.lineOf(BuildInfo.sparkVersion) == BuildInfo.sparkLine)
    BuildInfo.checkSparkVersion(org.apache.spark.SPARK_VERSION)
  }

  test("every patch release of the line is accepted") {
    Seq(".0", ".1", ".9", ".17").foreach(patch => BuildInfo.checkSparkVersion(BuildInfo.sparkLine + patch))
  }

  test("another line's Spark is refused with both named") {
    val e = intercept[IllegalStateException](BuildInfo.checkSparkVersion("3.4.1"))
    assert(e.getMessage.contains(s"built for Spark ${BuildInfo.sparkLine}"))
    assert(e.getMessage.contains("runs Spark 3.4.1"))
    assert(e.getMessage.contains("jar for Spark 3.4"))
  }

  test("hsbloom_version() evaluates to the jar version and takes no arguments") {
    val (_, _, builder) = SqlFunctions.version
    assert(builder(Nil).eval().toString == BuildInfo.version)
    val e = intercept[IllegalArgumentException](builder(Seq(org.apache.spark.sql.catalyst.expressions.Literal(1))))
    assert(e.getMessage.contains("takes 0 argument(s), got 1"))
  }
}
