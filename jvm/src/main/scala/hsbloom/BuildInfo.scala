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
  /** The Spark line (major.minor) the jar serves: every patch release of it. */
  def sparkLine: String = props.getProperty("spark.line")
  /** The Spark release the jar was compiled against, one of its line. */
  def sparkVersion: String = props.getProperty("spark.version")
  def scalaVersion: String = props.getProperty("scala.version")

  /** The major.minor of a Spark release (4.2.1 -> 4.2, 4.3.0-preview -> 4.3). */
  def lineOf(sparkRelease: String): String = sparkRelease.split('.').take(2).mkString(".")

  /**
   * Fails with a message naming both when the running Spark is not of the line the jar was built for. A jar
   * serves every patch release of its line (the Spark-private API a patch release changed is the shim's to
   * handle); another line's classes differ, so its jar is another file of the Python package.
   */
  def checkSparkVersion(runningSparkVersion: String): Unit = {
    if (lineOf(runningSparkVersion) != sparkLine) {
      throw new IllegalStateException(
        s"hsbloom jar $version was built for Spark $sparkLine (compiled against $sparkVersion) but this session " +
          s"runs Spark $runningSparkVersion; use hsbloom's jar for Spark ${lineOf(runningSparkVersion)} " +
          "(hsbloom.configure picks it for the running pyspark; docs/deploy.md lists the jars)")
    }
  }
}
