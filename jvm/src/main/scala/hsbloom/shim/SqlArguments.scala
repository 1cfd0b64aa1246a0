package hsbloom.shim

import org.apache.spark.sql.catalyst.analysis.Parameter
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * The arguments of `spark.sql(text, args)` in a statement's query. From Spark 4.1 the parser gets them
 * (`ParameterizedParsing`); before, the analyzer binds them in the plan it is given, which does not reach a query a
 * command holds (EXPLAIN BLOOMFILTER's), and a parser wrapped around hsbloom's that does not pass them on (Delta's)
 * has the same effect: they stay unbound there.
 */
object SqlArguments {
  /** Whether `plan` still holds an argument marker (`:name` or `?`) that nothing bound. */
  def unbound(plan: LogicalPlan): Boolean =
    plan.exists(node => node.expressions.exists(_.exists(_.isInstanceOf[Parameter])))
}
