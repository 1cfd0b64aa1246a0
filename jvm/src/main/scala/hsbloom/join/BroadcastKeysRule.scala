package hsbloom.join

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Attribute, ExprId, Expression}
import org.apache.spark.sql.execution.{ColumnarRule, FileSourceScanExec, FilterExec, ProjectExec, SparkPlan}

import hsbloom.conf.HsbloomConf
import hsbloom.rules.GuardedRule
import hsbloom.shim.BroadcastKeys

/**
 * Join file pruning from the keys Spark broadcasts anyway (docs/design/joins.md,
 * step (4)). For a broadcast hash join that drops unmatched rows of its
 * streamed side, where that side reaches a file scan through deterministic
 * Projects and Filters and other broadcast joins' streamed sides (`reach`),
 * and the scan's listing is a `JoinPrunedFileIndex`
 * holding this join's `=` key, the scan gets the keys of the join's own
 * broadcast (`BroadcastKeys.subquery`), so a build side that is a join or an
 * aggregate is computed once, as Spark's dynamic partition pruning reuses a
 * broadcast; its `JoinPrunedFileIndex` then takes those keys, never a job of
 * its own. A scan whose join is not broadcast keeps the planning-time
 * decision (`JoinFilterRule`).
 *
 * Registered as a "pre columnar transitions" step, before `ScanMetricsRule`;
 * with adaptive execution it runs per query stage, once the broadcast is
 * materialized. Any failure leaves the plan as it was (`GuardedRule`).
 */
class BroadcastKeysRule(session: SparkSession, planningOnly: Boolean = false) extends GuardedRule[SparkPlan] {
  override protected def enabled: Boolean = HsbloomConf.isJoinEnabled(session)
  override protected def failing: String = "broadcast keys rule"

  override protected def rewritePlan(plan: SparkPlan): SparkPlan = {
    val fed = scala.collection.mutable.LinkedHashMap[FileSourceScanExec, Seq[(ExprId, String, Option[Expression])]]()
    plan.foreach {
      case BroadcastKeys(j) => j.streamedKeys.zipWithIndex.foreach { case (key, i) =>
        for {
          attribute <- BroadcastKeys.keyAttribute(key)
          scan <- reach(j.streamed, attribute)
          index <- Option(scan.relation.location).collect { case p: JoinPrunedFileIndex => p }
          if index.joins.exists(k => k.attribute.exprId == attribute.exprId && !k.nullSafe && k.broadcast.isEmpty)
        } {
          val name = s"${BroadcastKeys.Prefix}_${attribute.name}#${attribute.exprId.id}"
          if (planningOnly) fed(scan) = fed.getOrElse(scan, Nil) :+ ((attribute.exprId, JoinPrunedFileIndex.PlannedBroadcast, None))
          else BroadcastKeys.subquery(session, j, i, attribute, name) match {
            case Right(filter) => fed(scan) = fed.getOrElse(scan, Nil) :+ ((attribute.exprId, name, Some(filter)))
            case Left(why) => JoinDecisions.record(s"join on ${attribute.name}: its broadcast not reused: $why")
          }
        }
      }
      case _ =>
    }
    if (fed.isEmpty) return plan
    plan.transformUp {
      case scan: FileSourceScanExec if fed.contains(scan) =>
        val feeds = fed(scan).groupBy(_._1).map(_._2.head).toSeq // one broadcast per column
        val location = scan.relation.location.asInstanceOf[JoinPrunedFileIndex].withBroadcasts(feeds.map(f => f._1 -> f._2).toMap)
        val relation = scan.relation.copy(location = location)(scan.relation.sparkSession)
        BroadcastKeys.withDataFilters(scan, feeds.flatMap(_._3), relation)
    }
  }

  /**
   * The file scan `plan` reads `attribute` from, through operators that make
   * each output row from one input row alone and pass `attribute` on as it
   * is, so that a row the scan leaves out only takes out the rows made from
   * it: deterministic Projects and Filters, and the streamed side of another
   * broadcast hash join (of any type: its rows come from one streamed row and
   * the whole broadcast; TPC-H Q16's part keys reach partsupp through a
   * `NOT IN` join on ps_suppkey).
   */
  private def reach(plan: SparkPlan, attribute: Attribute): Option[FileSourceScanExec] = plan match {
    case scan: FileSourceScanExec if scan.output.exists(_.exprId == attribute.exprId) => Some(scan)
    case ProjectExec(list, child) if list.forall(_.deterministic) &&
        list.exists { case a: Attribute => a.exprId == attribute.exprId; case _ => false } => reach(child, attribute)
    case FilterExec(condition, child) if condition.deterministic => reach(child, attribute)
    case BroadcastKeys.Streaming(streamed, condition) if condition.forall(_.deterministic) &&
        streamed.output.exists(_.exprId == attribute.exprId) => reach(streamed, attribute)
    case _ => None
  }
}

object BroadcastKeysRule {
  /** Registered as a "pre columnar transitions" step, after `DeltaScanPruningRule`'s, before `ScanMetricsRule`'s. */
  def asColumnarRule(session: SparkSession): ColumnarRule = GuardedRule.beforeColumnarTransitions(new BroadcastKeysRule(session))
}
