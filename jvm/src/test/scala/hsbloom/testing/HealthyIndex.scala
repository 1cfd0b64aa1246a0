package hsbloom.testing

import java.nio.file.{Files, Path, StandardCopyOption}

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.{col, concat, lit}

import hsbloom.{BFIndexConfig, Hyperspace}
import hsbloom.catalog.IndexCatalog

/**
 * The dataset and healthy index the operation suites share (as tests/healthy_index.py is in Python), built once per
 * test JVM: `NumFiles` Parquet files of `RowsPerFile` ids each (id, s = "k<id>"), and under a system path of its
 * own an index `Name` on both columns with a global filter, so every table an index can have is there. Tests never
 * change them: they work on a copy of the index in their own system path (`copyInto`), and a test that appends
 * to the source removes the file afterwards (`withAppendedFile`).
 */
object HealthyIndex {
  val Name = "idx"
  val NumFiles = 6
  val RowsPerFile = 300
  /** One id in every file and two absent ones: a file pruned wrongly loses a row of the answer. */
  val Lookup: Seq[Long] = (0 until NumFiles).map(f => f.toLong * RowsPerFile + 7) ++ Seq(1000000000L, -5L)

  private def spark: SparkSession = SharedSession.spark

  lazy val source: String = {
    val dir = SharedSession.root.resolve("healthy-source").toString
    spark.range(0, NumFiles.toLong * RowsPerFile, 1, NumFiles)
      .select(col("id"), concat(lit("k"), col("id").cast("string")).as("s")).write.parquet(dir)
    dir
  }

  /** The system path holding the healthy index. */
  lazy val healthy: Path = {
    val system = SharedSession.root.resolve("healthy-system")
    val saved = spark.conf.getOption("spark.hsbloom.system.path")
    spark.conf.set("spark.hsbloom.system.path", system.toString)
    try new Hyperspace(spark).createIndex(spark.read.parquet(source), BFIndexConfig(Name, Seq("id", "s"), globalFilter = true))
    finally {
      saved.fold(spark.conf.unset("spark.hsbloom.system.path"))(spark.conf.set("spark.hsbloom.system.path", _))
      IndexCatalog.invalidateAll()
    }
    system
  }

  /** The lookup's rows (ids and strings of `Lookup`, and "k7" and an absent string), sorted. */
  def lookupRows(spark: SparkSession): Seq[String] = {
    val df: DataFrame = spark.read.parquet(source)
    df.where(col("id").isin(Lookup: _*) || col("s").isin("k7", "nope")).collect()
      .map(r => s"${r.getLong(0)}|${r.getString(1)}").sorted.toSeq
  }

  /** The expected lookup rows, with hsbloom off. */
  lazy val expected: Seq[String] = {
    val session = spark.newSession()
    session.conf.set("spark.hsbloom.enabled", "false")
    lookupRows(session)
  }

  /** Copies the healthy index into the (empty) system path `target`, without Hadoop's .crc files. */
  def copyInto(target: Path): Unit = {
    val from = healthy
    val walk = Files.walk(from)
    try walk.forEach { p =>
      val to = target.resolve(from.relativize(p).toString)
      if (Files.isDirectory(p)) Files.createDirectories(to)
      else if (!p.getFileName.toString.endsWith(".crc")) Files.copy(p, to, StandardCopyOption.COPY_ATTRIBUTES)
    } finally walk.close()
    IndexCatalog.invalidateAll()
  }

  /** Runs `body` with a file appended to the source holding ids the other files lack (10^9, 5000, 5001). */
  def withAppendedFile[T](body: => T): T = {
    val staging = SharedSession.root.resolve(s"appended-${System.nanoTime()}").toString
    spark.createDataFrame(Seq((1000000000L, "k1000000000"), (5000L, "k5000"), (5001L, "k5001"))).toDF("id", "s")
      .coalesce(1).write.parquet(staging)
    val part = Files.list(Path.of(staging)).filter(_.getFileName.toString.startsWith("part-")).findFirst().get
    val appended = Path.of(source).resolve("part-99999-appended.parquet")
    Files.copy(part, appended)
    try body finally { Files.delete(appended); SharedSession.deleteTree(Path.of(staging)) }
  }
}
