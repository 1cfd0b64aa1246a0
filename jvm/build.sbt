// The hsbloom Spark jars: Catalyst rules, the SBBF probe and SQL functions, one jar per Spark line.
//
// The lines are the rows of ../hsbloom/spark_lines.tsv (Spark minor and Scala version; the first row is the
// primary line). Each is a project compiling the same sources (src/main/scala) plus the version-specific folders of
// the shim that serve it (src/main/spark-X.Y or src/main/spark-X.Y-A.B: lines X.Y to A.B), against its Spark as a
// provided dependency: resolved by sbt from the package registry, or, where the registry serves no release of the
// line, read from a pyspark release's jars/ folder that build-jar.sh fetched with pip. The primary line is the root
// project (its tests are the whole Scala suite); the others are `spark<line>_<scala>` (spark41_213, ...).

import java.util.Properties
import scala.util.matching.Regex

/** hsbloom's version comes from the Python package, the single source. */
val hsbloomVersion: String = {
  val text = IO.read(file("..") / "hsbloom" / "version.py")
  """__version__\s*=\s*"([^"]+)"""".r.findFirstMatchIn(text).map(_.group(1))
    .getOrElse(sys.error("no __version__ in ../hsbloom/version.py"))
}

val sparkLines: Seq[SparkLine] = SparkLine.readTable(file("..") / "hsbloom" / "spark_lines.tsv")
val primaryLine: SparkLine = sparkLines.head

/** The version-specific source folders of `kind` (main or test) that serve `line`. */
def versionFolders(kind: String, line: SparkLine): Seq[File] =
  Option((file("src") / kind).getAbsoluteFile.listFiles).toSeq.flatten
    .filter(d => d.isDirectory && line.servedBy(d.getName)).sortBy(_.getName)

/**
 * Delta for the Scala tests only (the jar recognizes Delta's classes by name: hsbloom/shim/Delta.scala), the
 * release spark_lines.tsv names for the line. Spark and what Spark brings are Spark's: Delta's own dependencies on
 * them are excluded, so no second Spark, Hadoop, Parquet or Jackson reaches the test classpath.
 */
def deltaForTests(line: SparkLine): Seq[ModuleID] = line.delta.toSeq.map { release =>
  val artifact = if (line.line.startsWith("3.")) s"delta-spark_${line.scalaBinary}" else s"delta-spark_${line.line}_${line.scalaBinary}"
  ("io.delta" % artifact % release % Test).excludeAll(
    Seq("org.apache.spark", "org.apache.hadoop", "org.apache.parquet", "com.fasterxml.jackson.core",
      "com.fasterxml.jackson.datatype", "com.fasterxml.jackson.module", "org.apache.logging.log4j", "org.slf4j",
      "org.scala-lang", "org.scala-lang.modules", "com.github.luben", "commons-logging", "commons-pool",
      "io.airlift", "com.google.code.findbugs", "javax.annotation", "org.antlr", "org.roaringbitmap").map(ExclusionRule(_)): _*)
}

/** What every project compiled against a Spark line shares: its Scala, its Spark (provided) and the sources. */
def compiledAgainst(line: SparkLine) = Seq(
  organization := "io.github.hsbloom",
  version := hsbloomVersion,
  scalaVersion := line.scala,
  scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", "17"),
  javacOptions ++= Seq("--release", "17"),
  libraryDependencies ++= (if (line.fromMaven) Seq("org.apache.spark" %% "spark-sql" % line.sparkRelease % Provided) else Nil),
  // A pyspark line: Spark and its dependencies as that pyspark ships them; the Scala library comes from
  // scalaVersion, which equals the one in that folder.
  Compile / unmanagedJars ++= {
    if (line.fromMaven) Seq.empty[Attributed[File]]
    else {
      val dir = line.pysparkJars.getAbsoluteFile
      if (!dir.isDirectory) sys.error(s"$dir is missing: build through ../dev.sh or build-jar.sh, which fetch pyspark ${line.sparkRelease} for Spark ${line.line}")
      val scalaOwn = Set("scala-library", "scala-reflect", "scala-compiler")
      Attributed.blankSeq((dir * "*.jar").get.filterNot(f => scalaOwn.exists(p => f.getName.startsWith(p + "-"))))
    }
  }
)

/**
 * Spark itself, of the release a line's Scala suite runs against (spark-sql and all it depends on: no Hive, whose
 * spark-sql shell the registry here does not serve), resolved only when asked: for a Python environment whose
 * pyspark ships another Scala than the line's (pyspark 3.5 ships Scala 2.12, so the 3.5 / 2.13 line's compatibility
 * run swaps its jars/ for these; ../dev.sh compat).
 */
val exportSparkRuntime = inputKey[Unit]("copy the jars of the line's Spark (its suite release) into the folder given")

/** A Spark line's jar and its Scala tests, from the one source tree. */
def lineProject(line: SparkLine, base: File): Project = Project(if (line == primaryLine) "root" else line.id, base)
  .dependsOn(testKms % "test->compile")
  .settings(
    compiledAgainst(line),
    name := s"hsbloom-spark${line.line}_${line.scalaBinary}",
    Compile / sourceDirectory := (ThisBuild / baseDirectory).value / "src" / "main",
    Test / sourceDirectory := (ThisBuild / baseDirectory).value / "src" / "test",
    Compile / unmanagedSourceDirectories ++= versionFolders("main", line),
    Test / unmanagedSourceDirectories ++= versionFolders("test", line),
    libraryDependencies ++= Seq("org.scalatest" %% "scalatest" % "3.2.19" % Test) ++ deltaForTests(line),
    exportSparkRuntime := {
      val target = file(complete.DefaultParsers.spaceDelimited("<folder>").parsed.headOption
        .getOrElse(sys.error("exportSparkRuntime: give the folder to copy Spark's jars into")))
      if (!line.fromMaven) sys.error(s"Spark ${line.line}'s release ${line.suite} is not in the registry: use its pyspark")
      val log = streams.value.log
      val spark = "org.apache.spark" %% "spark-sql" % line.suite
      IO.withTemporaryDirectory { fetched =>
        val jars = dependencyResolution.value.retrieve(spark, scalaModuleInfo.value, fetched, log)
          .fold(w => throw w.resolveException, identity).filter(_.getName.endsWith(".jar")).distinct
        IO.delete(target)
        IO.copy(jars.map(j => j -> target / j.getName))
        log.info(s"${jars.size} jars of Spark ${line.suite} (Scala ${line.scalaBinary}) in $target")
      }
    },
    // The Scala suite's Spark, where it is a newer patch than the one the jar compiles against (the suite column).
    libraryDependencies ++= (if (line.suite == line.sparkRelease) Nil
      else Seq("org.apache.spark" %% "spark-sql" % line.suite % Test)),
    // A resource that says which Spark line and Scala the jar was built for; the extension compares it with
    // the running Spark at session start.
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "hsbloom-build.properties"
      val props = new Properties()
      props.setProperty("hsbloom.version", version.value)
      props.setProperty("spark.line", line.line)
      props.setProperty("spark.version", line.sparkRelease)
      props.setProperty("scala.version", scalaVersion.value)
      // The fingerprint of the sources (build-jar.sh computes it), by which a built jar is proven current.
      sys.env.get("HSBLOOM_SOURCES_SHA256").foreach(props.setProperty("sources.sha256", _))
      IO.write(props, "hsbloom build information", out)
      Seq(out)
    }.taskValue,
    // The jar lands where the Python package finds it at run time and where the
    // wheel build picks it up as package data.
    Compile / packageBin / artifactPath := (file("..") / "hsbloom" / "jars" / line.jarName).getAbsoluteFile,
    Test / fork := true,
    Test / javaOptions ++= Seq(
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      // Spark 3.5's (4.0 and later open it themselves).
      "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
      "-Xmx2g"
    ),
    Test / envVars ++= Map(
      // The files the Python tests read too (a line's project runs in lines/<id>, so paths are absolute).
      "HSBLOOM_VECTORS" -> ((ThisBuild / baseDirectory).value / ".." / "tests" / "vectors").getCanonicalPath,
      "HSBLOOM_GOLDEN" -> ((ThisBuild / baseDirectory).value / ".." / "tests" / "golden").getCanonicalPath,
      // Whether the tests' shared session configures Delta (hsbloom/testing/SharedSession.scala).
      "HSBLOOM_TEST_DELTA" -> line.delta.isDefined.toString),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    // Where no delta-spark serves the line, its Delta tests are left out (hsbloom/testing/NeedsDelta.scala).
    Test / testOptions ++= (if (line.delta.isEmpty) Seq(Tests.Argument(TestFrameworks.ScalaTest, "-l", "hsbloom.testing.NeedsDelta")) else Nil)
  )

/** The row of spark_lines.tsv for a Spark minor and Scala version (a project for a line the table lacks is an error). */
def sparkLine(line: String, scalaBinary: String): SparkLine =
  sparkLines.find(l => l.line == line && l.scalaBinary == scalaBinary)
    .getOrElse(sys.error(s"../hsbloom/spark_lines.tsv has no row for Spark $line with Scala $scalaBinary"))

/** The primary line: the root project, whose tests are the whole Scala suite. */
lazy val root = lineProject(primaryLine, file("."))

// The other lines, one project each (built in lines/<id>, their target folders): a row of the table without its
// project here fails the build at load (below), so the two cannot drift apart.
lazy val spark43_213 = lineProject(sparkLine("4.3", "2.13"), file("lines") / "spark43_213")
lazy val spark41_213 = lineProject(sparkLine("4.1", "2.13"), file("lines") / "spark41_213")
lazy val spark40_213 = lineProject(sparkLine("4.0", "2.13"), file("lines") / "spark40_213")
lazy val spark35_212 = lineProject(sparkLine("3.5", "2.12"), file("lines") / "spark35_212")
lazy val spark35_213 = lineProject(sparkLine("3.5", "2.13"), file("lines") / "spark35_213")

val declaredLines: Unit = {
  val declared = Seq(root, spark43_213, spark41_213, spark40_213, spark35_212, spark35_213).map(_.id).toSet
  val missing = sparkLines.map(l => if (l == primaryLine) "root" else l.id).filterNot(declared)
  if (missing.nonEmpty) sys.error(s"spark_lines.tsv has lines without a project in build.sbt: ${missing.mkString(", ")}")
}

/** For the benchmarks and the test jars: the primary line's Scala and Spark. */
lazy val compiledAgainstSpark = compiledAgainst(primaryLine)

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
    // Java only, without Scala's library: the Scala tests of every line use it, Scala 2.12's and 2.13's alike.
    crossPaths := false,
    autoScalaLibrary := false,
    Compile / packageBin / artifactPath := file("target") / "hsbloom-test-kms.jar"
  )
