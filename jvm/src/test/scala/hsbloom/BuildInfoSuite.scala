package hsbloom

import org.scalatest.funsuite.AnyFunSuite

import hsbloom.functions.SqlFunctions

class BuildInfoSuite extends AnyFunSuite {
  test("the jar records the Spark it was compiled against, which is the one on the classpath") {
    assert(BuildInfo.sparkVersion == org.apache.spark.SPARK_VERSION)
    BuildInfo.checkSparkVersion(org.apache.spark.SPARK_VERSION)
  }

  test("a different running Spark is refused with both versions named") {
    val e = intercept[IllegalStateException](BuildInfo.checkSparkVersion("3.5.0"))
    assert(e.getMessage.contains(s"built for Spark ${BuildInfo.sparkVersion}"))
    assert(e.getMessage.contains("runs Spark 3.5.0"))
  }

  test("hsbloom_version() evaluates to the jar version and takes no arguments") {
    val (_, _, builder) = SqlFunctions.version
    assert(builder(Nil).eval().toString == BuildInfo.version)
    val e = intercept[IllegalArgumentException](builder(Seq(org.apache.spark.sql.catalyst.expressions.Literal(1))))
    assert(e.getMessage.contains("takes 0 argument(s), got 1"))
  }
}
