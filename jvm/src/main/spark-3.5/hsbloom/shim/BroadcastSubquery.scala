package hsbloom.shim

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.{SparkPlan, SubqueryBroadcastExec}

/** The subquery of key `index` of a join's broadcast `plan`: Spark 3.5 takes one index. */
object BroadcastSubquery {
  def apply(name: String, index: Int, buildKeys: Seq[Expression], plan: SparkPlan): SubqueryBroadcastExec =
    SubqueryBroadcastExec(name, index, buildKeys, plan)
}
