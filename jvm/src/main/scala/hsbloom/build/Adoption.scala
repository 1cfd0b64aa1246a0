package hsbloom.build

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.{DataType, StringType}
import org.apache.spark.storage.StorageLevel
import org.apache.spark.util.SerializableConfiguration

import hsbloom.conf.HsbloomConf
import hsbloom.index.{IndexTables, ZoneTable}
import hsbloom.shim.{Delta, FileRelation}

/**
 * The build's first step when source files may carry Parquet-native SBBFs:
 * a job that reads each file's footer and filters (`NativeFilters`) and writes
 * the file-table rows of the files it adopts; the rest are hashed by the scan
 * as usual (docs/design/adoption.md). Each row records how its filter was
 * made in the file table's `filter_source` column.
 */
object Adoption {
  /**
   * What the adoption step did: whether it wrote the file table's first rows, the adopted
   * files' ids and statistics, and per reason how many files were hashed.
   */
  final case class Outcome(wroteTable: Boolean, adopted: Set[Long], stats: Seq[FileStats], hashedWhy: Map[String, Int],
      wroteZones: Boolean = false)

  object Outcome {
    /** No file adopted, all `files` for one reason, nothing written. */
    def none(why: String, files: Int): Outcome = Outcome(wroteTable = false, Set.empty, Nil, Map(why -> files))
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
    else if (request.globalFilter) Some("the index has a global filter")
    else if (request.expectedNumItems.isDefined) Some("expected_num_items fixes the filters' size")
    else None
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
   * Decides, in a first job, which listed files' native filters can be
   * adopted (reading footers and filters, keeping only the decision); when
   * some can, a second job reads those files' filters again and writes their
   * file-table rows into `request.dataPath` (the table's first write). So a
   * source without adoptable filters costs one footer read per file and no
   * write. With zones, the adopted files' zones are written too (the zone
   * table's first write), from the same read. A file decided adoptable that no longer is (changed meanwhile)
   * fails the build: it would otherwise be in neither part of the table.
   */
  def run(df: DataFrame, request: BuildRequest, physical: Seq[String], types: Seq[DataType]): Outcome = {
    val columns = request.columns
    val spark = df.sparkSession
    val sc = spark.sparkContext
    val conf = sc.broadcast(new SerializableConfiguration(spark.sessionState.newHadoopConf()))
    val fpp = request.fpp
    val zoneFpp = if (request.zones) Some(request.sharedFpp) else None
    val weak = HsbloomConf.BuildAdoptRowGroupSizedFilters.get(spark)
    def read(file: ListedFile, conf: Configuration) = NativeFilters.read(file, physical, types, fpp, zoneFpp, weak, conf)
    def partitions(n: Int) = math.max(1, math.min(n, 4 * sc.defaultParallelism))
    val decided = sc.parallelize(request.files, partitions(request.files.size)).map { file =>
      file.fileId -> read(file, conf.value.value).left.toOption
    }.collect().toSeq
    val adoptable = decided.collect { case (id, None) => id }.toSet
    val hashedWhy = decided.flatMap(_._2).groupBy(identity).map { case (why, fs) => why -> fs.size }
    if (adoptable.isEmpty) return Outcome(wroteTable = false, Set.empty, Nil, hashedWhy)

    val stats = sc.collectionAccumulator[FileStats]("hsbloom adopted file statistics")
    val files = request.files.filter(f => adoptable(f.fileId))
    // Read once, kept for the file table's write and the zone table's.
    val adopted = sc.parallelize(files, partitions(files.size)).map { file =>
      file -> read(file, conf.value.value).fold(why => throw new IllegalStateException(
        s"source file ${file.path} changed during the index build ($why); build the index again"), identity)
    }.persist(StorageLevel.MEMORY_AND_DISK_SER)
    try {
      val rows = adopted.flatMap { case (file, a) =>
        columns.zip(a.columns).map { case (c, col) =>
          stats.add(FileStats(file.fileId, c, col.rows, col.nulls, col.ndv, col.filter.length))
          Row(file.fileId, file.path, file.size, file.mtime, c, col.rows, col.nulls, col.ndv, col.filter, Adopted)
        }
      }
      val schema = IndexTables.FileTableSchema.add(IndexTables.FilterSource, StringType, nullable = true)
      IndexTables.writeFileTable(spark.createDataFrame(rows, schema), request.dataPath, "errorifexists")
      if (request.zones) {
        val zoneRows = adopted.flatMap { case (file, a) =>
          for (z <- a.zones; (c, col) <- columns.zip(z.columns)) yield Row(file.fileId, file.path, file.size,
            file.mtime, c, col.rows, col.nulls, col.ndv, col.filter, z.group.ordinal, z.rowGroups, z.group.start,
            z.group.length)
        }
        ZoneTable.write(spark.createDataFrame(zoneRows, ZoneTable.InputSchema), request.dataPath, "errorifexists")
      }
    } finally adopted.unpersist(blocking = false)
    Outcome(wroteTable = true, adoptable, stats.value.asScala.toSeq, hashedWhy, wroteZones = request.zones)
  }

  /** `filter_source` of a file filter taken from the file's native filters. */
  val Adopted = "adopted"
}
