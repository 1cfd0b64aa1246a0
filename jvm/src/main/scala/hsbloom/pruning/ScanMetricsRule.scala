package hsbloom.pruning

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Expression, PlanExpression}
import org.apache.spark.sql.execution.{ColumnarRule, FileSourceScanExec, SparkPlan}

import hsbloom.conf.HsbloomConf
import hsbloom.rules.GuardedRule
import hsbloom.shim.{PrunedFileSourceScanExec, PrunedScan}

/**
 * Shows on each scan hsbloom pruned how many files it pruned: replaces the
 * scan by a `PrunedFileSourceScanExec`, the same scan with two more SQL metrics.
 *
 * Whether a scan prunes anything is known only once its files are listed,
 * so the rule lists them here, through a wrapper of its own for the scan
 * (`PruningFileIndex.prepare`), which hands the scan this listing when it
 * asks, so pruning runs once. When nothing was pruned the node has no
 * metrics of its own (it is kept for the listing it holds), and when hsbloom
 * is off nothing is touched. Runs on the
 * physical plan just before it executes (with adaptive execution: per query
 * stage, when the stage is created), after `DeltaScanPruningRule`, so Delta
 * scans are covered too. A failure for one scan leaves that scan as it was;
 * any other leaves the plan as it was (`GuardedRule`).
 */
class ScanMetricsRule(session: SparkSession) extends GuardedRule[SparkPlan] {
  override protected def enabled: Boolean = HsbloomConf.isEnabled(session)
  override protected def failing: String = "scan metrics rule"

  override protected def rewritePlan(plan: SparkPlan): SparkPlan = plan.transformUp {
    case scan: FileSourceScanExec if !scan.isInstanceOf[PrunedScan] =>
      scan.relation.location match {
        case wrapper: PruningFileIndex =>
          unchangedOnFailure[SparkPlan](scan, s"no pruning metrics for a scan of ${wrapper.rootPaths.mkString(", ")}") {
            withMetrics(scan, wrapper)
          }
        case _ => scan
      }
  }

  private def withMetrics(scan: FileSourceScanExec, wrapper: PruningFileIndex): SparkPlan = {
    val location = wrapper.forOneScan()
    // The filters the scan lists with (FileSourceScanLike.selectedPartitions): without runtime subqueries.
    val static = (_: Seq[Expression]).filterNot(_.exists(_.isInstanceOf[PlanExpression[_]]))
    val report = location.prepare(static(scan.partitionFilters), static(scan.dataFilters))
    val withLocation = PrunedFileSourceScanExec(scan, location)
    withLocation.metrics // fixes its metrics while the report is there: none of hsbloom's if nothing was pruned
    withLocation
  }
}

object ScanMetricsRule {
  /** Registered as a "pre columnar transitions" step, after `DeltaScanPruningRule`'s. */
  def asColumnarRule(session: SparkSession): ColumnarRule =
    GuardedRule.beforeColumnarTransitions(new ScanMetricsRule(session))
}
