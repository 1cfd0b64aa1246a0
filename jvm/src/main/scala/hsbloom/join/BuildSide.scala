package hsbloom.join

import org.apache.spark.sql.catalyst.expressions.{AttributeReference, EqualNullSafe, EqualTo, Expression, In, InSet, Literal}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, Join, LocalRelation, LogicalPlan, Project}
import org.apache.spark.sql.execution.datasources.HadoopFsRelation

import hsbloom.pruning.FilePruningRule
import hsbloom.shim.FileRelation

/**
 * The shapes of a join's sides that file pruning from build-side keys
 * accepts. Collecting the keys computes the build side a second time, so it
 * must be cheap to compute and give the same rows twice: a filtered scan of
 * one fixed file listing (or local rows), never a join or an aggregate.
 */
object BuildSide {

  /**
   * The file relation the build side scans (None for local rows), when it is
   * only Projects and Filters over one relation with a fixed listing; else why not.
   */
  def plainScan(plan: LogicalPlan): Either[String, Option[HadoopFsRelation]] = plan match {
    case Project(_, child) => plainScan(child)
    case Filter(_, child) => plainScan(child)
    case FileRelation(_, fs, _, false) =>
      if (FilePruningRule.isDelta(fs)) Left("the build side is a Delta table (its files may change between two runs)")
      else if (!JoinFilterRule.isFixedListing(JoinPrunedFileIndex.unwrap(fs.location))) {
        Left("the build side's listing is redone at execution (two runs may see different files)")
      } else Right(Some(fs))
    case _: LocalRelation => Right(None)
    case _: Join => Left("the build side is a join (it would be computed twice)")
    case _: Aggregate => Left("the build side is an aggregate (it would be computed twice)")
    case other => Left(s"the build side is a ${other.nodeName}, not a filtered scan (it would be computed twice)")
  }

  /**
   * Whether `plan` filters `column` by literal values (`=`, `<=>`, `IN`), as
   * Spark infers from a join with a side filtered on its key: the scan's own
   * file pruning then uses those values, and build keys would add nothing.
   */
  def filtersByValues(plan: LogicalPlan, column: AttributeReference): Boolean = {
    def isColumn(e: Expression) = e match {
      case a: AttributeReference => a.exprId == column.exprId
      case _ => false
    }
    plan.exists {
      case Filter(condition, _) => JoinKeys.conjuncts(condition).exists {
        case EqualTo(a, _: Literal) => isColumn(a)
        case EqualTo(_: Literal, a) => isColumn(a)
        case EqualNullSafe(a, _: Literal) => isColumn(a)
        case EqualNullSafe(_: Literal, a) => isColumn(a)
        case In(a, values) => isColumn(a) && values.forall(_.isInstanceOf[Literal])
        case InSet(a, _) => isColumn(a)
        case _ => false
      }
      case _ => false
    }
  }
}
