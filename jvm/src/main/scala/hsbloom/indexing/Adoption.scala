package hsbloom.indexing

import scala.reflect.ClassTag
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.DataType
import org.apache.spark.util.SerializableConfiguration

import hsbloom.conf.HsbloomConf
import hsbloom.format.{SourceFile, TableSchemas}
import hsbloom.index.{IndexTables, ZoneTable}
import hsbloom.shim.CollectionConverters._
import hsbloom.shim.{Delta, FileRelation}

/**
 * The build's first step when source files may carry Parquet-native SBBFs:
 * one pass over the listed files reads each file's footer and filters once
 * (`NativeFilters`), decides, and stores the adopted files' filters
 * (`AdoptionReads`); the build then writes their rows with the hashed files'
 * rows, in one write per table, and scans only the files not adopted, or
 * nothing when all are (docs/design/adoption.md). Each row records how its
 * filter was made in the file table's `filter_source` column.
 */
object Adoption {
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)

  /**
   * What the adoption step did: the adopted files' ids and statistics, per reason how many files
   * were hashed, and the adopted files' rows of the file and zone tables, already stored (their
   * filters in `blocks/`), for the tables' one write.
   */
  final case class Outcome(adopted: Set[Long], stats: Seq[FileStats], hashedWhy: Map[String, Int],
      fileRows: Seq[Row] = Nil, zoneRows: Seq[Row] = Nil) {
    /** The adopted files' stored file-table rows, one partition (one file of the table; None: no file adopted). */
    def fileTable(spark: SparkSession): Option[DataFrame] =
      if (fileRows.isEmpty) None
      else Some(spark.createDataFrame(fileRows.asJava, TableSchemas.StoredFileTable).coalesce(1))

    /** The adopted files' stored zone rows, one partition (None: no zone adopted). */
    def zoneTable(spark: SparkSession): Option[DataFrame] =
      if (zoneRows.isEmpty) None
      else Some(spark.createDataFrame(zoneRows.asJava, TableSchemas.StoredZoneTable).coalesce(1))
  }

  object Outcome {
    /** No file adopted, all `files` for one reason, nothing written. */
    def none(why: String, files: Int): Outcome = Outcome(Set.empty, Nil, Map(why -> files))
  }

  /**
   * Up to this many files are read on the driver, more in one Spark job of one task per core. The driver reads
   * files one after another; a job reads them in parallel after a fixed cost (35 to 75 ms for a job of two tasks
   * in local mode on a loaded machine, more on a cluster). A file costs a few milliseconds (local disk, filters
   * sized for a row group) to a second (an object store, 16 filters of some MiB): one file gains nothing from a
   * job, two gain about as much as the job costs, more gain from the job whenever reads are slow, which is when
   * it matters (docs/design/adoption.md#the-build).
   */
  val OnDriverMaxFiles = 2

  /** Why the build hashes every file because of its global filter. */
  val GlobalFilterReason = "the index has a global filter"

  /**
   * The adoption step of a build of `request` over `df` (`columns`: the indexed columns as `df` resolves
   * them, `types` their types): `run` where adoption is possible, else every file hashed for the reason.
   */
  def of(df: DataFrame, request: BuildRequest, columns: Seq[String], types: Seq[DataType]): Outcome =
    unavailable(df, request).map(Left(_)).getOrElse(physicalNames(df, columns)) match {
      case Right(physical) => run(df, request, physical, types)
      case Left(GlobalFilterReason) if request.files.nonEmpty => globalFilterOnly(df, request, columns)
      case Left(why) => Outcome.none(why, request.files.size)
    }

  /**
   * Why this build cannot adopt any file (None: it may). Adoption needs a Parquet or Delta
   * source, file filters sized from the data, and no global filter (whose buckets are
   * filled from the hashes of every value), and can be switched off.
   */
  def unavailable(df: DataFrame, request: BuildRequest): Option[String] = {
    val format = df.queryExecution.analyzed.collectFirst { case FileRelation(_, fs, _, _) => fs.fileFormat }
    if (!HsbloomConf.BuildAdoptNativeFilters.get(df.sparkSession)) Some(s"${HsbloomConf.BuildAdoptNativeFilters.key} is false")
    else if (!format.exists(_.isInstanceOf[ParquetFileFormat])) Some("the source is not Parquet or Delta")
    else if (request.expectedNumItems.isDefined) Some("expected_num_items fixes the filters' size")
    else if (request.globalFilter) Some(GlobalFilterReason)
    else if (request.sealing.isDefined) Some("an indexed column is encrypted (its rows are sealed: SealedTable)")
    else if (request.grams.nonEmpty) Some("the index has substring filters, which are built from the values")
    else None
  }

  /**
   * Every file hashed because of the global filter alone. When the first listed file carries native
   * filters of every indexed column (one footer read, on the driver), the reason says so, with the fix,
   * and a warning is logged: such a source could be indexed without a scan (docs/indexes.md#adopted-native-filters).
   */
  private def globalFilterOnly(df: DataFrame, request: BuildRequest, columns: Seq[String]): Outcome = {
    val carried = physicalNames(df, columns).toOption.exists { physical =>
      NativeFilters.carried(request.files.head, physical, df.sparkSession.sessionState.newHadoopConf())
    }
    if (!carried) return Outcome.none(GlobalFilterReason, request.files.size)
    val why = s"$GlobalFilterReason, and files carry Parquet Bloom filters of the indexed columns: " +
      "global_filter=False would adopt them instead of scanning"
    log.warn(s"${request.description}: ${request.files.size} files hashed: $why (docs/indexes.md#adopted-native-filters)")
    Outcome.none(why, request.files.size)
  }

  /**
   * Per indexed column (resolved names), the name its Parquet files store it under: the Delta
   * physical name with column-mapping mode name, the column's own name without column mapping;
   * Left(why) when it cannot be known (id mapping matches columns by field id).
   */
  def physicalNames(df: DataFrame, columns: Seq[String]): Either[String, Seq[String]] = {
    val format = df.queryExecution.analyzed.collectFirst { case FileRelation(_, fs, _, _) => fs.fileFormat }.get
    if (!Delta.isDeltaClass(format)) return Right(columns)
    val (mode, schema) = try Delta.columnMapping(format) catch {
      case NonFatal(e) => return Left(s"Delta column mapping not readable (${e.getClass.getSimpleName})")
    }
    mode match {
      case "NoMapping" => Right(columns)
      case "NameMapping" => Right(columns.map { c =>
        val field = schema.fields.find(_.name == c).getOrElse(return Left(s"column '$c' not in Delta's schema"))
        Delta.physicalName(field)
      })
      case other => Left(s"Delta column mapping mode $other")
    }
  }

  /**
   * Reads every listed file's footer and native filters once, on the driver for up to
   * `OnDriverMaxFiles` files, else in one job; stores the adopted files' filters into
   * `request.dataPath`'s `blocks/` and returns their rows, to be written with the others.
   */
  def run(df: DataFrame, request: BuildRequest, physical: Seq[String], types: Seq[DataType]): Outcome = {
    val spark = df.sparkSession
    val reads = new AdoptionReads(request.columns, physical, types, request.fileFpp, request.sharedFpp, request.zones,
      HsbloomConf.BuildAdoptRowGroupSizedFilters.get(spark), request.maxBufferedHashes.toLong, request.dataPath)
    val parts = inParts(spark, request.files, spark.sessionState.newHadoopConf())(reads(_, _))
    val hashedWhy = parts.flatMap(_.hashed).groupBy(_._2).map { case (why, fs) => why -> fs.size }
    Outcome(parts.flatMap(_.adopted).toSet, parts.flatMap(_.stats), hashedWhy, parts.flatMap(_.fileRows),
      parts.flatMap(_.zoneRows))
  }

  /**
   * `read` over all of `files`, in parts: one part on the driver for up to `OnDriverMaxFiles` files, else one part
   * per task of one job of a task per core; the parts' results in order. `read` runs with `conf`.
   */
  def inParts[T: ClassTag](spark: SparkSession, files: Seq[SourceFile], conf: Configuration)(
      read: (Iterator[SourceFile], Configuration) => T): Seq[T] = {
    if (files.size <= OnDriverMaxFiles) return Seq(read(files.iterator, conf))
    val sc = spark.sparkContext
    val shared = sc.broadcast(new SerializableConfiguration(conf))
    val tasks = math.max(1, math.min(files.size, sc.defaultParallelism))
    sc.parallelize(files, tasks).mapPartitions(part => Iterator(read(part, shared.value.value))).collect().toSeq
  }

  /** `filter_source` of a file filter taken from the file's native filters. */
  val Adopted = "adopted"
}
