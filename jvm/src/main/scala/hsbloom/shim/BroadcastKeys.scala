package hsbloom.shim

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, KnownFloatingPointNormalized, NamedExpression}
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight, NormalizeNaNAndZero}
import org.apache.spark.sql.catalyst.plans.{Inner, LeftSemi}
import org.apache.spark.sql.execution.{FileSourceScanExec, InSubqueryExec, QueryExecution, SparkPlan, SubqueryBroadcastExec}
import org.apache.spark.sql.execution.adaptive.BroadcastQueryStageExec
import org.apache.spark.sql.execution.exchange.BroadcastExchangeExec
import org.apache.spark.sql.execution.joins.BroadcastHashJoinExec

/**
 * The keys of a broadcast hash join's build side, handed to a file scan of
 * its probe side without computing the build side again: as Spark's dynamic
 * partition pruning does (`PlanDynamicPruningFilters`,
 * `PlanAdaptiveDynamicPruningFilters`), an `InSubqueryExec` over a
 * `SubqueryBroadcastExec` of the join's own broadcast, among the scan's data
 * filters. Spark runs a plan's subqueries before the plan executes
 * (`waitForSubqueries`), so the values are there when the scan lists its
 * files (`PrunedFileSourceScanExec`); a scan's static listing leaves such a
 * filter out, and it is no row filter (the join keeps the rows it matches).
 *
 * With adaptive execution the join's build side is a materialized broadcast
 * query stage when its stage is prepared: the subquery reads it. Without, it
 * is the planned exchange: the subquery gets a prepared copy of it, which
 * Spark's exchange reuse (`ReuseExchangeAndSubquery`) makes the one broadcast.
 */
object BroadcastKeys {
  /** Names of hsbloom's subqueries start with this. */
  val Prefix = "hsbloom_broadcast_keys"

  /** A broadcast hash join as the file pruning sees it: probe key i of `streamed` against its build side. */
  final case class Join(join: BroadcastHashJoinExec, streamed: SparkPlan, streamedKeys: Seq[Expression],
      build: SparkPlan, buildKeys: Seq[Expression])

  /** `plan` as a broadcast hash join whose unmatched streamed rows are dropped (inner; left semi building right). */
  def unapply(plan: SparkPlan): Option[Join] = plan match {
    case j: BroadcastHashJoinExec if !j.isNullAwareAntiJoin => (j.joinType, j.buildSide) match {
      case (Inner, BuildRight) | (LeftSemi, BuildRight) => Some(Join(j, j.left, j.leftKeys, j.right, j.rightKeys))
      case (Inner, BuildLeft) => Some(Join(j, j.right, j.rightKeys, j.left, j.leftKeys))
      case _ => None
    }
    case _ => None
  }

  /** Any broadcast hash join, as its streamed side and its condition beyond the keys. */
  object Streaming {
    def unapply(plan: SparkPlan): Option[(SparkPlan, Option[Expression])] = plan match {
      case j: BroadcastHashJoinExec => Some((if (j.buildSide == BuildRight) j.left else j.right, j.condition))
      case _ => None
    }
  }

  /** The attribute a join key reads, seen through Spark's normalization of float and double keys. */
  def keyAttribute(key: Expression): Option[Attribute] = key match {
    case KnownFloatingPointNormalized(NormalizeNaNAndZero(child)) => keyAttribute(child)
    case a: Attribute => Some(a)
    case _ => None
  }

  /**
   * `probe IN (key i of the join's broadcast)` as a run-time subquery named
   * `name`, or why the broadcast cannot be reused here (Left).
   */
  def subquery(session: SparkSession, j: Join, index: Int, probe: Attribute, name: String)
      : Either[String, Expression] = {
    val conf = session.sessionState.conf
    val buildKeys = j.buildKeys
    if (buildKeys(index).dataType != probe.dataType) return Left("the join's key types differ from the column's")
    val broadcast = j.build match {
      case stage: BroadcastQueryStageExec => Right(stage) // adaptive: materialized already
      case exchange: BroadcastExchangeExec if !conf.adaptiveExecutionEnabled && conf.exchangeReuseEnabled =>
        Right(QueryExecution.prepareExecutedPlan(Classic.session(session), exchange))
      case other => Left(s"the join's broadcast (${other.nodeName}) cannot be reused here")
    }
    broadcast.map { plan =>
      InSubqueryExec(probe, BroadcastSubquery(name, index, buildKeys, plan), NamedExpression.newExprId)
    }
  }

  /** The values of each of hsbloom's subqueries among `filters`, by name (None: not run yet). */
  def values(filters: Seq[Expression]): Seq[(String, Option[Array[Any]])] = filters.flatMap(_.collect {
    case e: InSubqueryExec if e.plan.name.startsWith(Prefix) => e.plan.name -> e.values()
  })

  /** `scan` with the filters `extra` added to its data filters. */
  def withDataFilters(scan: FileSourceScanExec, extra: Seq[Expression], relation: org.apache.spark.sql.execution
      .datasources.HadoopFsRelation): FileSourceScanExec =
    scan.copy(relation = relation, dataFilters = scan.dataFilters ++ extra)
}
