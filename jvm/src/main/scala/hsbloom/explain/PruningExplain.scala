package hsbloom.explain

import org.apache.spark.sql.catalyst.expressions.PlanExpression
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper

import hsbloom.catalog.IndexCatalog
import hsbloom.index.GlobalFilterContains
import hsbloom.join.{BroadcastKeysRule, JoinDecisions, JoinPrunedFileIndex}
import hsbloom.pruning.{DeltaScanPruningRule, FilePruningRule, PrunedFileIndex, PruningDecisions}
import hsbloom.shim.PrunedScan
import hsbloom.shim.ClassicDataset
import hsbloom.conf.HsbloomConf

/**
 * What hsbloom does to a query, for `Hyperspace.explainString` and so for
 * `EXPLAIN BLOOMFILTER` and Python's `hs.explain(df)` (hsbloom/hyperspace.py),
 * and for tests: the physical plan with and without hsbloom, the indexes
 * used, the files each scan lists before and after pruning, and what the
 * join rule decided for each join it looked at (`JoinDecisions`).
 */
object PruningExplain extends AdaptiveSparkPlanHelper {

  /** The text `hs.explain(df)` prints. */
  def explain(df: ClassicDataset[_]): String = {
    val (withIndex, (reports, injected, decisions, unpruned)) = withEnabled(df, enabled = true) {
      val ((planned, decisions), unpruned) = PruningDecisions.collecting(JoinDecisions.collecting(plan(df)))
      val scans = collect(planned) { case s: FileSourceScanExec => s }
      (planned, (scans.flatMap { s =>
        s.relation.location match {
          case p: PrunedFileIndex =>
            val (_, report) = p.prune(staticPartitionFilters(s), s.dataFilters)
            Some(s"${p.rootPaths.mkString(", ")}\n  ${report.describe}")
          case j: JoinPrunedFileIndex =>
            val (_, report, joins) = j.prune(staticPartitionFilters(s), s.dataFilters)
            Some((Seq(j.rootPaths.mkString(", "), s"  ${report.describe}") ++ joins.map("  " + _)).mkString("\n"))
          case _ => None
        }
      }, joinFilters(planned), decisions, unpruned))
    }
    val withoutIndex = withEnabled(df, enabled = false)(plan(df))
    val notUsed = indexesNotUsed(df.sparkSession, withoutIndex) ++ unpruned
    val rule = "=" * 72
    Seq(
      rule, "Plan with hsbloom:", rule, withIndex.treeString,
      rule, "Plan without hsbloom:", rule, withoutIndex.treeString,
      rule, "Indexes used:", rule,
      if (reports.isEmpty) "(none: no scan of this query is pruned by an hsbloom index)" else reports.mkString("\n"),
      rule, "Indexes not used:", rule,
      if (notUsed.isEmpty) "(none)" else notUsed.mkString("\n"),
      rule, "Join filters injected:", rule,
      if (injected.isEmpty) "(none)" else injected.mkString("\n"),
      rule, "Joins considered (what each join feature decided, and why):", rule,
      if (decisions.isEmpty) "(none: no join of this query has an indexed key)" else decisions.mkString("\n"),
      "").mkString("\n")
  }

  /** Each index over the files a scan reads that does not cover the scan, with the reason. */
  private def indexesNotUsed(spark: org.apache.spark.sql.SparkSession, plan: SparkPlan): Seq[String] = {
    val scans = collect(plan) { case s: FileSourceScanExec => s }
    scans.flatMap { s =>
      val output = s.output.collect { case a: org.apache.spark.sql.catalyst.expressions.AttributeReference => a }
      IndexCatalog.coverage(spark, s.relation, output).flatMap { c =>
        c.whyNot.map(why =>
          s"${c.index.entry.indexName} on ${s.relation.location.rootPaths.mkString(", ")}: $why")
      }
    }.distinct
  }

  private def staticPartitionFilters(s: FileSourceScanExec) =
    s.partitionFilters.filterNot(_.exists(_.isInstanceOf[PlanExpression[_]]))

  /** Each injected global-filter probe of the plan, once. */
  def joinFilters(plan: SparkPlan): Seq[String] = {
    val found = scala.collection.mutable.LinkedHashSet[String]()
    foreach(plan)(_.expressions.foreach(_.foreach {
      case g: GlobalFilterContains => found += s"${g.child.sql} may be a key of the ${g.ref.describe}" +
        (if (g.keepNulls) " (nulls kept)" else "")
      case _ =>
    }))
    found.toSeq
  }

  /** The physical plan of `df` planned afresh (before adaptive execution wraps it), Delta rule applied as execution would. */
  private def plan(df: ClassicDataset[_]): SparkPlan = {
    val spark = df.sparkSession
    val planned = new DeltaScanPruningRule(spark).apply(spark.sessionState.executePlan(df.queryExecution.logical).sparkPlan)
    new BroadcastKeysRule(spark, planningOnly = true).apply(planned) // which joins' broadcasts will feed a scan
  }

  /** Runs `body` with `spark.hsbloom.enabled` set to `enabled`, then restores the setting. */
  private def withEnabled[T](df: ClassicDataset[_], enabled: Boolean)(body: => T): T = {
    val spark = df.sparkSession
    val key = HsbloomConf.Enabled.key
    val saved = spark.conf.getOption(key)
    spark.conf.set(key, enabled.toString)
    try body
    finally saved match {
      case Some(v) => spark.conf.set(key, v)
      case None => spark.conf.unset(key)
    }
  }

  /** After `df` ran: its file scans' "number of files read" metric, summed (AQE stages included). */
  def filesRead(df: ClassicDataset[_]): Long = filesRead(df.queryExecution.executedPlan)

  def filesRead(plan: SparkPlan): Long = scanMetric(plan, "numFiles")

  /** After a plan ran: hsbloom's metrics on its scans, summed; None when no scan has them. */
  def filesPruned(plan: SparkPlan): Option[Long] = hsbloomMetric(plan, PrunedScan.FilesPruned)
  def filesBeforePruning(plan: SparkPlan): Option[Long] = hsbloomMetric(plan, PrunedScan.FilesBefore)
  /** After a plan ran: the rows its file scans output (their "number of output rows" metric), summed. */
  def rowsScanned(plan: SparkPlan): Long = scanMetric(plan, "numOutputRows")

  /** Row groups of files with zones, before and after hsbloom (None when no scan pruned a row group). */
  def rowGroupsBeforePruning(plan: SparkPlan): Option[Long] =
    hsbloomMetric(plan, PrunedScan.RowGroupsBefore)
  def rowGroupsPruned(plan: SparkPlan): Option[Long] = hsbloomMetric(plan, PrunedScan.RowGroupsPruned)

  private def hsbloomMetric(plan: SparkPlan, name: String): Option[Long] = {
    val found = collect(plan) { case s: FileSourceScanExec => s.metrics.get(name).map(_.value) }.flatten
    if (found.isEmpty) None else Some(found.sum)
  }

  private def scanMetric(plan: SparkPlan, name: String): Long =
    collect(plan) { case s: FileSourceScanExec => s.metrics.get(name).map(_.value).getOrElse(0L) }.sum
}
