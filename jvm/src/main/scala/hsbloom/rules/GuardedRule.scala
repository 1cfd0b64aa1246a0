package hsbloom.rules

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreeNode
import org.apache.spark.sql.execution.{ColumnarRule, SparkPlan}

/**
 * What every hsbloom rule shares, so that hsbloom never fails a query: a rule
 * runs only while its settings are on (`enabled`), and any failure of its
 * rewrite leaves the plan as it was, with one warning line naming what failed.
 * Hyperspace's `ApplyHyperspace` is the model: collect, apply, and any failure
 * leaves the plan unchanged; a plan the index cannot speed up must still run.
 *
 * Generic over the plan: the optimizer rules rewrite a `LogicalPlan`, the
 * rules run before a physical plan executes (`beforeColumnarTransitions`) a
 * `SparkPlan`.
 */
abstract class GuardedRule[T <: TreeNode[_]] extends Rule[T] {
  /** Whether the rule's settings are on (`HsbloomConf`); read at every run, since a session's settings change. */
  protected def enabled: Boolean

  /** What the warning line says failed, as in "hsbloom: <failing> failed, plan left unchanged: <error>". */
  protected def failing: String

  /** The rewrite: `plan` itself when there is nothing to do. It may throw; `apply` then returns `plan`. */
  protected def rewritePlan(plan: T): T

  final override def apply(plan: T): T =
    if (!enabled) plan else unchangedOnFailure(plan, s"$failing failed, plan left unchanged")(rewritePlan(plan))

  /** `rewritten`, or `node` itself when computing it fails, with one warning line: "hsbloom: <what>: <error>". */
  protected final def unchangedOnFailure[N](node: N, what: => String)(rewritten: => N): N =
    try rewritten catch {
      case NonFatal(e) =>
        logWarning(s"hsbloom: $what: $e")
        node
    }
}

object GuardedRule {
  /**
   * `rule` as the "pre columnar transitions" step of a `ColumnarRule`: the hook
   * Spark applies to every physical plan it is about to run, with and without
   * adaptive execution (there for each query stage).
   */
  def beforeColumnarTransitions(rule: GuardedRule[SparkPlan]): ColumnarRule = new ColumnarRule {
    override def preColumnarTransitions: Rule[SparkPlan] = rule
  }
}
