package hsbloom.shim

import org.apache.spark.sql.catalyst.catalog.CatalogTable
import org.apache.spark.sql.catalyst.expressions.UnaryExpression
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.LogicalRDD
import org.apache.spark.sql.execution.datasources.{FileFormat, FileIndex, HadoopFsRelation}
import org.apache.spark.sql.types.StructType

/**
 * Delta's classes as hsbloom recognizes them. The jar is compiled without
 * Delta (an optional dependency), so they are matched by class name and read
 * by reflection, here only. The methods read are those of delta-spark 3.x and
 * 4.x; a failure surfaces as the exception of the reflective call, which the
 * caller turns into an error naming the unsupported delta-spark version.
 */
object Delta {
  private val Package = "org.apache.spark.sql.delta."

  /** Delta's file indexes that read one pinned snapshot. */
  private val PinnedIndexes = Set(
    "org.apache.spark.sql.delta.stats.PreparedDeltaFileIndex",
    "org.apache.spark.sql.delta.files.TahoeLogFileIndex")

  /** Whether `obj` is an instance of one of Delta's classes. */
  def isDeltaClass(obj: AnyRef): Boolean = obj.getClass.getName.startsWith(Package)

  /** A Delta table: its file index or file format is Delta's. */
  def isDelta(fs: HadoopFsRelation): Boolean = isDeltaClass(fs.location) || isDeltaClass(fs.fileFormat)

  /** Whether `index` is one of Delta's file indexes that read one pinned snapshot. */
  def isPinnedIndex(index: FileIndex): Boolean = PinnedIndexes.contains(index.getClass.getName)

  /**
   * Whether `index` is `TahoeBatchFileIndex` itself (not a subclass such as
   * the change-data feed's): a fixed list of one snapshot's files, which
   * Delta's DELETE, UPDATE and MERGE scan to find and rewrite the files they
   * touch (docs/design/dml.md).
   */
  def isBatchIndex(index: FileIndex): Boolean =
    index.getClass.getName == "org.apache.spark.sql.delta.files.TahoeBatchFileIndex"

  /**
   * `plan` without Delta's row-counting expressions (`IncrementMetric`, which
   * returns its child's value and adds one to a command metric per row): a
   * second read of a MERGE source for its keys must not count its rows again.
   */
  def withoutRowCounters(plan: LogicalPlan): LogicalPlan = plan.transformAllExpressions {
    case e: UnaryExpression if e.getClass.getName == "org.apache.spark.sql.delta.metric.IncrementMetric" => e.child
  }

  /**
   * Whether `plan` is a MERGE source Delta materialized: Delta reads a source
   * that is not only Delta tables through `localCheckpoint` (a `LogicalRDD`
   * over a checkpointed RDD), so every read of it gives the same rows.
   */
  def isMaterializedSource(plan: LogicalPlan): Boolean = plan match {
    case r: LogicalRDD => !r.isStreaming && r.rdd.isCheckpointed
    case _ => false
  }

  /** Whether `index` is `TahoeLogFileIndex`, the index of a table read at its latest or a time-travel version. */
  def isLogFileIndex(index: FileIndex): Boolean = index.getClass.getName.endsWith(".TahoeLogFileIndex")

  /**
   * Of a `TahoeLogFileIndex`: the snapshot version the scan reads (`version()`,
   * from `SnapshotDescriptor`), the table's root (`path()`) and its catalog
   * table (`catalogTableOpt()`, None where this Delta has none: 3.3). Throws when
   * this Delta lacks the first two.
   */
  def logFileIndexSnapshot(index: FileIndex): (Long, String, Option[CatalogTable]) = {
    val version = index.getClass.getMethod("version").invoke(index).asInstanceOf[Long]
    val path = index.getClass.getMethod("path").invoke(index).toString
    // Delta 3.3 (Spark 3.5) has no catalogTableOpt: its scans name no catalog table.
    val table = index.getClass.getMethods.find(m => m.getName == "catalogTableOpt" && m.getParameterCount == 0)
      .map(_.invoke(index).asInstanceOf[Option[CatalogTable]]).getOrElse(None)
    (version, path, table)
  }

  /**
   * Of `DeltaParquetFileFormat`: the column mapping mode (`columnMappingMode()`)
   * and the schema whose field metadata holds each column's physical name and id
   * (`referenceSchema()`). Throws when this Delta lacks them.
   */
  def columnMapping(format: FileFormat): (String, StructType) =
    (format.getClass.getMethod("columnMappingMode").invoke(format).toString,
      format.getClass.getMethod("referenceSchema").invoke(format).asInstanceOf[StructType])

  /** The name Delta's files store a column under with column mapping (its own name without a physical one). */
  def physicalName(field: org.apache.spark.sql.types.StructField): String =
    if (field.metadata.contains(PhysicalNameKey)) field.metadata.getString(PhysicalNameKey) else field.name

  private val PhysicalNameKey = "delta.columnMapping.physicalName"
}
