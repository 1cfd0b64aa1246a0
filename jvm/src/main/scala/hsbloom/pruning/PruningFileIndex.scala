package hsbloom.pruning

import java.util.concurrent.atomic.AtomicReference

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.datasources.PartitionDirectory

import hsbloom.conf.HsbloomConf
import hsbloom.shim.{DelegatingFileIndex, PrunedListing}

/**
 * A wrapper that prunes files when Spark lists them (`PrunedFileIndex`,
 * `JoinPrunedFileIndex`). It remembers what its latest listing did, so the
 * scan that listed can show it as SQL metrics (`PrunedFileSourceScanExec`),
 * and a listing can be made ahead, when the plan is prepared (`prepare`).
 */
trait PruningFileIndex extends DelegatingFileIndex with PrunedListing {
  import PruningFileIndex._

  @transient private lazy val latest = new AtomicReference[Option[Report]](None)
  @transient private lazy val prepared = new AtomicReference[Option[Prepared]](None)
  /** Whether this wrapper serves one scan (it was `prepare`d): it then keeps its latest listing for that scan. */
  @transient private lazy val forScan = new java.util.concurrent.atomic.AtomicBoolean(false)

  /** The files kept for these filters and what pruning did; keeps every file when hsbloom is off. */
  protected def pruneWithReport(partitionFilters: Seq[Expression], dataFilters: Seq[Expression])
      : (Seq[PartitionDirectory], Report)

  /** The session whose settings turn pruning on and off (null where the plan was deserialized). */
  protected def session: SparkSession

  /** Whether hsbloom is on in this wrapper's session (checked again at each listing). */
  protected final def enabled: Boolean = session == null || HsbloomConf.isEnabled(session)

  /** What the latest listing (or `prepare`) of this instance did (None before the first). */
  def lastReport: Option[Report] = latest.get()

  override def lastPruned: Option[PrunedListing.Pruned] = lastReport

  /** An equal wrapper that has not listed yet, for one physical scan (`ScanMetricsRule`). */
  def forOneScan(): PruningFileIndex

  /**
   * Lists now, for the listing the scan will ask for with these same filters:
   * that one returns this result instead of pruning again (while hsbloom is
   * on). Meant for a wrapper of one scan (`forOneScan`): Spark keeps a scan's
   * listing for the scan's life, and this keeps it no longer than that.
   */
  def prepare(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Report = {
    val (listed, report) = pruneWithReport(partitionFilters, dataFilters)
    prepared.set(Some(Prepared(partitionFilters, dataFilters, listed, report)))
    forScan.set(true)
    latest.set(Some(report))
    report
  }

  final override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression])
      : Seq[PartitionDirectory] = {
    val (listed, report) = prepared.get() match {
      case Some(p) if p.partitionFilters == partitionFilters && p.dataFilters == dataFilters && enabled =>
        (p.listed, p.report)
      case _ =>
        val (listed, report) = pruneWithReport(partitionFilters, dataFilters)
        // The scan lists twice (Spark's own listing and hsbloom's node, `PrunedFileSourceScanExec`): after a
        // `dropPrepared` (run-time keys arrived), the first prunes with them and the second takes its result.
        if (forScan.get() && enabled) prepared.set(Some(Prepared(partitionFilters, dataFilters, listed, report)))
        (listed, report)
    }
    latest.set(Some(report))
    listed
  }

  /** Forgets the listing made ahead (`prepare`): the next listing prunes again. */
  protected final def dropPrepared(): Unit = prepared.set(None)

  override def refresh(): Unit = {
    prepared.set(None)
    super.refresh()
  }
}

object PruningFileIndex {
  type Report = PrunedFileIndex.Report

  private final case class Prepared(partitionFilters: Seq[Expression], dataFilters: Seq[Expression],
      listed: Seq[PartitionDirectory], report: Report)
}
