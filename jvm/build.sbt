// The hsbloom Spark jar: Catalyst rules, the SBBF probe and SQL functions.
//
// It compiles against the Spark that the pinned pyspark ships (its jars/ folder,
// passed in as SPARK_JARS_DIR by ../dev.sh), so Spark is never downloaded twice
// and the jar always matches the Spark it runs in. The Scala version is read off
// that folder's scala-library jar for the same reason.

import java.util.Properties
import scala.util.matching.Regex

val sparkJarsDir: File = {
  val dir = sys.env.get("SPARK_JARS_DIR").map(file).getOrElse(
    sys.error("SPARK_JARS_DIR is not set: run the build through ../dev.sh, which points it at pyspark's jars/"))
  if (!dir.isDirectory) sys.error(s"SPARK_JARS_DIR=$dir is not a directory")
  dir
}

def versionFromJar(prefix: String): String = {
  val pattern = (Regex.quote(prefix) + """(\d+\.\d+\.\d+)\.jar""").r
  val found = Option(sparkJarsDir.listFiles).toSeq.flatten.map(_.getName).collectFirst { case pattern(v) => v }
  found.getOrElse(sys.error(s"no $prefix<version>.jar in $sparkJarsDir"))
}

val sparkVersion = versionFromJar("spark-core_2.13-")
val sparkScalaVersion = versionFromJar("scala-library-")

/**
 * The delta-spark release the Python package pins (its `delta` extra in ../pyproject.toml), so the Scala tests
 * read and write Delta tables with the Delta the Python tests and users run.
 */
val deltaVersion: String = {
  val text = IO.read(file("..") / "pyproject.toml")
  """"delta-spark==([^"]+)"""".r.findFirstMatchIn(text).map(_.group(1))
    .getOrElse(sys.error("no delta-spark==<version> pin in ../pyproject.toml"))
}

/**
 * Delta for the Scala tests only (the jar recognizes Delta's classes by name: hsbloom/shim/Delta.scala), built for
 * this Spark's major.minor. Spark and what pyspark's jars/ folder already holds come from that folder alone:
 * Delta's own dependencies on them are excluded, so no second Spark, Hadoop, Parquet or Jackson reaches the test
 * classpath.
 */
lazy val deltaForTests: ModuleID = {
  val sparkLine = sparkVersion.split('.').take(2).mkString(".")
  ("io.delta" % s"delta-spark_${sparkLine}_2.13" % deltaVersion % Test).excludeAll(
    Seq("org.apache.spark", "org.apache.hadoop", "org.apache.parquet", "com.fasterxml.jackson.core",
      "com.fasterxml.jackson.datatype", "com.fasterxml.jackson.module", "org.apache.logging.log4j", "org.slf4j",
      "org.scala-lang", "org.scala-lang.modules", "com.github.luben", "commons-logging", "commons-pool",
      "io.airlift", "com.google.code.findbugs", "javax.annotation", "org.antlr", "org.roaringbitmap").map(ExclusionRule(_)): _*)
}

/** hsbloom's version comes from the Python package, the single source. */
val hsbloomVersion: String = {
  val text = IO.read(file("..") / "hsbloom" / "version.py")
  """__version__\s*=\s*"([^"]+)"""".r.findFirstMatchIn(text).map(_.group(1))
    .getOrElse(sys.error("no __version__ in ../hsbloom/version.py"))
}

/** What the jar and the benchmarks share: Scala from pyspark, Spark's jars to compile against. */
lazy val compiledAgainstSpark = Seq(
  organization := "io.github.hsbloom",
  version := hsbloomVersion,
  scalaVersion := sparkScalaVersion,
  scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", "17"),
  javacOptions ++= Seq("--release", "17"),
  // Spark and its dependencies, as pyspark ships them; the Scala library itself
  // comes from scalaVersion, which equals the one in that folder.
  Compile / unmanagedJars ++= {
    val scalaOwn = Set("scala-library", "scala-reflect", "scala-compiler")
    (sparkJarsDir * "*.jar").get
      .filterNot(f => scalaOwn.exists(p => f.getName.startsWith(p + "-")))
      .classpath
  }
)

lazy val root = (project in file("."))
  .dependsOn(testKms % "test->compile")
  .settings(
    compiledAgainstSpark,
    name := "hsbloom",
    libraryDependencies ++= Seq("org.scalatest" %% "scalatest" % "3.2.19" % Test, deltaForTests),
    // A resource that says which Spark and Scala the jar was built for; the
    // extension compares it with the running Spark at session start.
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "hsbloom-build.properties"
      val props = new Properties()
      props.setProperty("hsbloom.version", version.value)
      props.setProperty("spark.version", sparkVersion)
      props.setProperty("scala.version", scalaVersion.value)
      // The fingerprint of the sources (build-jar.sh computes it), by which a built jar is proven current.
      sys.env.get("HSBLOOM_SOURCES_SHA256").foreach(props.setProperty("sources.sha256", _))
      IO.write(props, "hsbloom build information", out)
      Seq(out)
    }.taskValue,
    // The jar lands where the Python package finds it at run time and where the
    // wheel build picks it up as package data.
    Compile / packageBin / artifactPath := file("..") / "hsbloom" / "jars" / "hsbloom.jar",
    Test / fork := true,
    Test / javaOptions ++= Seq(
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "-Xmx2g"
    ),
    Test / envVars += "HSBLOOM_VECTORS" -> ((file("..") / "tests" / "vectors").getAbsolutePath),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD")
  )


// Benchmarks of the jar's inner loops (SbbfBench, MapSideBench), kept out of the
// shipped jar: ../dev.sh bench builds target/hsbloom-bench.jar for bench/*.py.
lazy val bench = (project in file("bench"))
  .dependsOn(root)
  .settings(
    compiledAgainstSpark,
    name := "hsbloom-bench",
    Compile / packageBin / artifactPath := file("target") / "hsbloom-bench.jar",
    run / fork := true,
    run / javaOptions ++= Seq("--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "-Xmx2g")
  )

// The Python tests' entry points into the jar's internals (hsbloom.testkit.JsonBuild: a build of one data directory
// from a JSON request, without an operation around it), kept out of the shipped jar: target/hsbloom-testkit.jar
// (../dev.sh test builds it) on the classpath of the Python tests' sessions (tests/conftest.py). A sibling of
// testKms, not part of it: testKms is on the Scala tests' classpath, so it cannot depend on the jar (sbt allows no
// cycle of projects), and these classes are made of the jar's.
lazy val testKit = (project in file("testkit"))
  .dependsOn(root)
  .settings(
    compiledAgainstSpark,
    name := "hsbloom-testkit",
    Compile / packageBin / artifactPath := file("target") / "hsbloom-testkit.jar"
  )

// A KMS client for tests that write encrypted Parquet (hsbloom.testkms.TestKmsClient), kept out of the shipped
// jar: on the Scala tests' classpath, and as target/hsbloom-test-kms.jar (../dev.sh test builds it) on the
// classpath of the Python tests' sessions (tests/conftest.py).
lazy val testKms = (project in file("testkms"))
  .settings(
    compiledAgainstSpark,
    name := "hsbloom-test-kms",
    Compile / packageBin / artifactPath := file("target") / "hsbloom-test-kms.jar"
  )
