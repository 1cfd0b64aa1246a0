package hsbloom.shim

import org.apache.spark.sql.catalyst.expressions.AttributeReference
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}

/**
 * A logical scan of files: `LogicalRelation` over a `HadoopFsRelation`.
 * Matches as `FileRelation(node, files, output, isStreaming)`, so the rules do
 * not spell out `LogicalRelation`'s fields, whose number changes between Spark
 * versions (four in Spark 3.5, five in Spark 4): it reads them by name.
 */
object FileRelation {
  def unapply(plan: LogicalPlan): Option[(LogicalRelation, HadoopFsRelation, Seq[AttributeReference], Boolean)] =
    plan match {
      case l: LogicalRelation => l.relation match {
        case fs: HadoopFsRelation => Some((l, fs, l.output, l.isStreaming))
        case _ => None
      }
      case _ => None
    }
}
