package hsbloom.shim

import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.connector.read.streaming.SparkDataStream
import org.apache.spark.sql.execution.{FileSourceScanExec, SQLExecution}
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.collection.BitSet

import hsbloom.pruning.{PrunedFileIndex, PruningFileIndex}

/**
 * Spark's file scan with two more driver-side SQL metrics when hsbloom pruned
 * some of its files: "files before hsbloom pruning" and "files pruned by
 * hsbloom" (the scan's own "number of files read" is the count after). When
 * its listing pruned nothing it has no metrics of its own.
 *
 * It is the same node, not a node above it: same arguments, same execution,
 * code generation and columnar output, and it canonicalizes to a plain
 * `FileSourceScanExec`, so exchange reuse and every rule that matches a
 * `FileSourceScanExec` see no difference. A rule that rebuilds the scan with
 * `copy` gets a plain scan back, which only loses the two metrics.
 * `ScanMetricsRule` installs it (docs/pruning.md, "Observability").
 */
class PrunedFileSourceScanExec(
    relation: HadoopFsRelation,
    stream: Option[SparkDataStream],
    output: Seq[Attribute],
    requiredSchema: StructType,
    partitionFilters: Seq[Expression],
    optionalBucketSet: Option[BitSet],
    optionalNumCoalescedBuckets: Option[Int],
    dataFilters: Seq[Expression],
    tableIdentifier: Option[TableIdentifier],
    disableBucketedScan: Boolean)
  extends FileSourceScanExec(relation, stream, output, requiredSchema, partitionFilters, optionalBucketSet,
    optionalNumCoalescedBuckets, dataFilters, tableIdentifier, disableBucketedScan) {
  import PrunedFileSourceScanExec._

  /** What the latest listing of this scan's files did (None on executors, where the relation is not kept). */
  private def report: Option[PrunedFileIndex.Report] = Option(relation).map(_.location).collect {
    case p: PruningFileIndex => p.lastReport
  }.flatten

  /** hsbloom's metrics, present only when the listing made before they are first asked for pruned a file. */
  @transient private lazy val pruningMetrics: Map[String, SQLMetric] =
    if (report.exists(_.filesPruned > 0)) {
      Map(FilesBefore -> SQLMetrics.createMetric(sparkContext, "files before hsbloom pruning"),
        FilesPruned -> SQLMetrics.createMetric(sparkContext, "files pruned by hsbloom"))
    } else Map.empty

  override lazy val metrics: Map[String, SQLMetric] = super.metrics ++ pruningMetrics

  /** Spark calls this once the scan has listed its files; hsbloom's metrics go out with its own. */
  override protected def sendDriverMetrics(): Unit = {
    super.sendDriverMetrics()
    for (r <- report; before <- pruningMetrics.get(FilesBefore); pruned <- pruningMetrics.get(FilesPruned)) {
      before.set(r.filesBefore.toLong)
      pruned.set(r.filesPruned.toLong)
      val executionId = sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY)
      SQLMetrics.postDriverMetricUpdates(sparkContext, executionId, Seq(before, pruned))
    }
  }

  // Not equal to a plain scan of the same arguments (both ways), so plan transforms keep this node.
  override def canEqual(other: Any): Boolean = other.isInstanceOf[PrunedFileSourceScanExec]
  override def equals(other: Any): Boolean = other match {
    case o: PrunedFileSourceScanExec => super.equals(o)
    case _ => false
  }
  override def hashCode(): Int = super.hashCode()
}

object PrunedFileSourceScanExec {
  val FilesBefore = "hsbloomFilesBefore"
  val FilesPruned = "hsbloomFilesPruned"

  /** `scan` as this node, reading `location` (a wrapper equal to the scan's own). */
  def apply(scan: FileSourceScanExec, location: PruningFileIndex): PrunedFileSourceScanExec = {
    val relation = scan.relation.copy(location = location)(scan.relation.sparkSession)
    new PrunedFileSourceScanExec(relation, scan.getStream, scan.output, scan.requiredSchema, scan.partitionFilters,
      scan.optionalBucketSet, scan.optionalNumCoalescedBuckets, scan.dataFilters, scan.tableIdentifier,
      scan.disableBucketedScan)
  }
}
