package hsbloom

import java.util.Properties

/** What this jar was built for, read from the resource that the sbt build writes. */
object BuildInfo {
  private lazy val props: Properties = {
    val p = new Properties()
    val in = getClass.getResourceAsStream("/hsbloom-build.properties")
    if (in == null) throw new IllegalStateException("hsbloom jar is incomplete: hsbloom-build.properties is missing")
    try p.load(in) finally in.close()
    p
  }

  def version: String = props.getProperty("hsbloom.version")
  def sparkVersion: String = props.getProperty("spark.version")
  def scalaVersion: String = props.getProperty("scala.version")

  /** Fails with a message naming both versions when the running Spark is not the one the jar was built for. */
  def checkSparkVersion(runningSparkVersion: String): Unit = {
    if (runningSparkVersion != sparkVersion) {
      throw new IllegalStateException(
        s"hsbloom jar $version was built for Spark $sparkVersion but this session runs Spark " +
          s"$runningSparkVersion; rebuild the jar against Spark $runningSparkVersion (./dev.sh build) " +
          "or install the matching pyspark")
    }
  }
}
