package hsbloom.shim

import org.apache.spark.sql.catalyst.expressions.AttributeReference
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}

/**
 * A logical scan of files: `LogicalRelation` over a `HadoopFsRelation`.
 * Matches as `FileRelation(node, files, output, isStreaming)`, so the rules do
 * not spell out `LogicalRelation`'s fields, whose number changes between Spark
 * versions (five in Spark 4).
 */
object FileRelation {
  def unapply(plan: LogicalPlan): Option[(LogicalRelation, HadoopFsRelation, Seq[AttributeReference], Boolean)] =
    plan match {
      case l @ LogicalRelation(fs: HadoopFsRelation, output, _, isStreaming, _) => Some((l, fs, output, isStreaming))
      case _ => None
    }
}
