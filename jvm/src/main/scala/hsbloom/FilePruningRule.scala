package hsbloom

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * Replaces the file listing of an indexed relation under a Filter by the files
 * whose Bloom filters may match. For now the rule leaves every plan unchanged;
 * the pruning itself arrives with the file-pruning work.
 */
class FilePruningRule(session: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan
}
