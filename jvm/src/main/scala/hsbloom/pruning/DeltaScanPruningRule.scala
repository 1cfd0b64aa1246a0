package hsbloom.pruning

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.AttributeReference
import org.apache.spark.sql.execution.{ColumnarRule, FileSourceScanExec, SparkPlan}

import hsbloom.catalog.IndexCatalog
import hsbloom.conf.HsbloomConf
import hsbloom.rules.{GuardedRule, Nondeterminism}
import hsbloom.shim.Delta

/**
 * File pruning for Delta tables, on the physical plan.
 *
 * Delta prepares its scans by recognizing its own file index classes: data
 * skipping pins a snapshot (`PreparedDeltaFileIndex`) and the deletion-vector
 * rewrite adds a row filter only for a `TahoeFileIndex`. So the logical rule
 * (`FilePruningRule`) leaves Delta alone, and this rule runs on the physical
 * plan just before it executes, when all of that is done: it wraps the scan's already prepared Delta index
 * in a `PrunedFileIndex`. The wrapper keeps the listed files' own metadata,
 * which is where Delta passes each file's deletion vector to the reader.
 *
 * A Delta index row describes every row stored in its file, deleted by a
 * deletion vector or not (the build reads files whole, `BuildInput`). Delta
 * never rewrites a data file in place, so at every table version that lists a
 * file with the same path, size and modification time its live rows are a
 * subset of what the filter holds: scans are pruned at any version, latest or
 * time travel, and files the index does not hold are read (docs/refresh.md).
 * A query's scan below a nondeterministic operator of its stage is left whole
 * (`Nondeterminism`); above a shuffle, Spark's own row order is not fixed.
 * The scans Delta's DML commands run over a fixed list of files are pruned
 * the same way, by their own filters (docs/design/dml.md).
 */
class DeltaScanPruningRule(session: SparkSession) extends GuardedRule[SparkPlan] {
  override protected def enabled: Boolean = HsbloomConf.isEnabled(session)
  override protected def failing: String = "Delta file pruning"

  override protected def rewritePlan(plan: SparkPlan): SparkPlan = {
    val nondeterministic = Nondeterminism.physicalScans(plan)
    plan.transformUp {
      case scan: FileSourceScanExec if DeltaScanPruningRule.isPinnedDeltaScan(scan) =>
        // A query's scan below a nondeterministic operator is left whole. A DML command's scan (a batch index) is
        // below Delta's own row bookkeeping, which MergeTargetRule checks (docs/design/dml.md).
        nondeterministic.find(_._1 eq scan).filterNot(_ => Delta.isBatchIndex(scan.relation.location)) match {
          case Some((_, why)) =>
            PruningDecisions.record(Nondeterminism.notPruned(scan.relation.location.rootPaths.mkString(", "), why))
            scan
          case None => prune(scan)
        }
    }
  }

  private def prune(scan: FileSourceScanExec): SparkPlan = {
    val fs = scan.relation
    val output = scan.output.collect { case a: AttributeReference => a }
    val covered = IndexCatalog.coveredForFilters(session, fs, output)
    if (covered.isEmpty) scan
    else scan.copy(relation = fs.copy(location = new PrunedFileIndex(session, fs.location, covered))(fs.sparkSession))
  }
}

object DeltaScanPruningRule {
  /** Registered as a "pre columnar transitions" step: it runs on every physical plan about to execute. */
  def asColumnarRule(session: SparkSession): ColumnarRule =
    GuardedRule.beforeColumnarTransitions(new DeltaScanPruningRule(session))

  /**
   * A scan of one Delta snapshot as Delta prepared it: a query's (pinned
   * snapshot) or one a DELETE, UPDATE or MERGE runs over a fixed list of the
   * snapshot's files to find and rewrite the rows it changes (docs/design/dml.md).
   */
  def isPinnedDeltaScan(scan: FileSourceScanExec): Boolean = {
    val location = scan.relation.location
    (Delta.isPinnedIndex(location) || Delta.isBatchIndex(location)) && Delta.isDelta(scan.relation)
  }

}
