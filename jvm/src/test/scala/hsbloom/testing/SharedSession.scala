package hsbloom.testing

import java.nio.file.{Files, Path}
import java.util.Comparator
import java.util.concurrent.atomic.AtomicInteger

import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.scalatest.{BeforeAndAfterAll, Outcome, TestSuite}

import hsbloom.HsbloomExtension
import hsbloom.catalog.IndexCatalog
import hsbloom.log.LogSteps

/**
 * The one local SparkSession of the Scala tests' JVM (sbt forks one for every suite): local[2], hsbloom's
 * extension and, on a Spark line Delta serves (`withDelta`), Delta's (its catalog as the session catalog, as
 * `hsbloom.configure(builder, delta=True)` sets them in Python), small shuffles and Delta snapshots, no UI. It starts at the first suite that asks for it and stops
 * when the JVM exits, so a suite pays no session start; its temporary directory goes with it.
 */
object SharedSession {
  lazy val root: Path = {
    val dir = Files.createTempDirectory("hsbloom-scala-tests")
    sys.addShutdownHook(deleteTree(dir))
    dir
  }

  /**
   * Whether Delta is on the test classpath: the build sets HSBLOOM_TEST_DELTA for a Spark line that a delta-spark
   * release serves (../hsbloom/spark_lines.tsv); a run without the variable is the primary line's, which has Delta.
   */
  val withDelta: Boolean = sys.env.getOrElse("HSBLOOM_TEST_DELTA", "true").toBoolean

  /** The session's settings, also what suites that need other ones (`isolated`) start from. */
  val settings: Map[String, String] = Map(
    "spark.ui.enabled" -> "false",
    "spark.ui.showConsoleProgress" -> "false",
    "spark.sql.shuffle.partitions" -> "4",
    "spark.default.parallelism" -> "4",
    // HyperspaceSuite's file system that refuses a user some index logs (scheme denied://).
    "spark.hadoop.fs.denied.impl" -> "hsbloom.DeniedLocalFileSystem") ++ (
    if (withDelta) Map(
      "spark.databricks.delta.snapshotPartitions" -> "2",
      "spark.sql.extensions" -> s"${classOf[HsbloomExtension].getName},io.delta.sql.DeltaSparkSessionExtension",
      "spark.sql.catalog.spark_catalog" -> "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    else Map("spark.sql.extensions" -> classOf[HsbloomExtension].getName))

  lazy val spark: SparkSession = {
    val builder = SparkSession.builder().master("local[2]").appName("hsbloom-scala-tests")
      .config("spark.sql.warehouse.dir", root.resolve("warehouse").toString)
      .config("spark.hsbloom.system.path", root.resolve("indexes").toString)
    val session = settings.foldLeft(builder) { case (b, (k, v)) => b.config(k, v) }.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    sys.addShutdownHook(try session.stop() catch { case NonFatal(_) => })
    session
  }

  def deleteTree(dir: Path): Unit = if (Files.exists(dir)) {
    val walk = Files.walk(dir)
    try walk.sorted(Comparator.reverseOrder[Path]()).forEach(p => Files.deleteIfExists(p))
    catch { case NonFatal(_) => }
    finally walk.close()
  }
}

/**
 * A suite on the shared session: `suiteDir`, a temporary directory of its own (removed after the suite), `dir(name)`
 * for a fresh path in it, and for every test a system path of its own (`systemPath`, empty at the start), with the
 * loaded-index caches forgotten. After each test hsbloom is off again (queries of the next test start as Spark's
 * own), no writer is stopped at a step (`LogSteps`), and the session's settings a test changed through `withConf`
 * are back.
 */
trait SharedSession extends TestSuite with BeforeAndAfterAll {
  protected def spark: SparkSession = SharedSession.spark

  protected lazy val suiteDir: Path = Files.createTempDirectory(SharedSession.root, getClass.getSimpleName + "-")

  private val counter = new AtomicInteger()
  @volatile private var currentSystemPath: Option[Path] = None

  /** A path in the suite's directory that does not exist yet (`name` and a number). */
  protected def dir(name: String): String = suiteDir.resolve(s"$name-${counter.incrementAndGet()}").toString

  /** The system path of the test that runs (a directory created by the first operation). */
  protected def systemPath: Path = currentSystemPath.getOrElse(fail("systemPath is set while a test runs"))

  override protected def withFixture(test: NoArgTest): Outcome = {
    val system = Files.createTempDirectory(suiteDir, "system-").resolve("indexes")
    currentSystemPath = Some(system)
    spark.conf.set("spark.hsbloom.system.path", system.toString)
    IndexCatalog.invalidateAll()
    try super.withFixture(test)
    finally {
      LogSteps.clear()
      spark.conf.unset("spark.hsbloom.enabled")
      spark.conf.set("spark.hsbloom.system.path", SharedSession.root.resolve("indexes").toString)
      IndexCatalog.invalidateAll()
      currentSystemPath = None
    }
  }

  /** Runs `body` with the session settings `pairs`, then puts back what was set before (or unsets them). */
  protected def withConf[T](pairs: (String, String)*)(body: => T): T = {
    val saved = pairs.map { case (k, _) => k -> spark.conf.getOption(k) }
    pairs.foreach { case (k, v) => spark.conf.set(k, v) }
    try body
    finally saved.foreach {
      case (k, Some(v)) => spark.conf.set(k, v)
      case (k, None) => spark.conf.unset(k)
    }
  }

  /** hsbloom on or off for the queries that follow (`spark.hsbloom.enabled`; a test ends with it off). */
  protected def useIndexes(enabled: Boolean): Unit = spark.conf.set("spark.hsbloom.enabled", enabled.toString)

  override protected def afterAll(): Unit = try super.afterAll() finally SharedSession.deleteTree(suiteDir)
}
