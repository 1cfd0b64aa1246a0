package hsbloom.join

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan, Project}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation}

import hsbloom.catalog.IndexCatalog
import hsbloom.format.ColumnSummary
import hsbloom.pruning.{ExactCast, FilePruningRule}
import hsbloom.shim.FileRelation

/**
 * The equalities of a join condition, and how a key of one side relates to an
 * indexed column: which file relation it reads, and how a value of the other
 * side's key becomes a value of that column (exactly, or not at all), and
 * what its index counts of it.
 */
object JoinKeys extends PredicateHelper {

  /** One conjunct `left = right` or `left <=> right`, each key over its own side only. */
  final case class EquiKey(left: Expression, right: Expression, nullSafe: Boolean)

  def conjuncts(condition: Expression): Seq[Expression] = splitConjunctivePredicates(condition)

  def equiKeys(join: Join): Seq[EquiKey] =
    join.condition.toSeq.flatMap(splitConjunctivePredicates).flatMap {
      case EqualTo(a, b) => oriented(join, a, b, nullSafe = false)
      case EqualNullSafe(a, b) => oriented(join, a, b, nullSafe = true)
      case _ => None
    }

  private def oriented(join: Join, a: Expression, b: Expression, nullSafe: Boolean): Option[EquiKey] = {
    def over(e: Expression, side: LogicalPlan) =
      e.deterministic && e.references.nonEmpty && e.references.subsetOf(side.outputSet)
    if (over(a, join.left) && over(b, join.right)) Some(EquiKey(a, b, nullSafe))
    else if (over(b, join.left) && over(a, join.right)) Some(EquiKey(b, a, nullSafe))
    else None
  }

  /**
   * A join key that is a column of a file relation, read through Projects and
   * Filters only (so its values are a subset of the column's), possibly under
   * one cast that maps distinct values to distinct values and never fails.
   */
  final case class RelationColumn(relation: LogicalRelation, fs: HadoopFsRelation, attribute: AttributeReference,
      cast: Option[Cast]) {
    /** The type the join compares in. */
    def comparedType: org.apache.spark.sql.types.DataType = cast.map(_.dataType).getOrElse(attribute.dataType)
  }

  def columnOf(plan: LogicalPlan, key: Expression): Option[RelationColumn] = {
    val (attribute, cast) = key match {
      case a: AttributeReference => (a, None)
      case c @ Cast(a: AttributeReference, to, _, _) if ExactCast.isExactOneToOne(a.dataType, to) => (a, Some(c))
      case _ => return None
    }
    relationOf(plan, attribute.exprId).map { case (l, fs) =>
      RelationColumn(l, fs, l.output.find(_.exprId == attribute.exprId).get, cast)
    }
  }

  private def relationOf(plan: LogicalPlan, id: ExprId): Option[(LogicalRelation, HadoopFsRelation)] = plan match {
    case Project(list, child) if list.exists { case a: AttributeReference => a.exprId == id; case _ => false } =>
      relationOf(child, id)
    case Filter(_, child) => relationOf(child, id)
    case FileRelation(l, fs, output, false) if output.exists(_.exprId == id) => Some((l, fs))
    case _ => None
  }

  /**
   * `value` (of the compared type) as a value of `column`'s own type: the one
   * column value that compares equal to it, or null where none does (and for a
   * null `value`). None where the types do not line up.
   */
  def inColumnType(value: Expression, column: RelationColumn, timeZoneId: String): Option[Expression] = {
    if (value.dataType != column.comparedType) None
    else column.cast match {
      case None => Some(value)
      case Some(_) =>
        val target = column.attribute.dataType
        val back = Cast(value, target, Some(timeZoneId), EvalMode.TRY)
        val forth = Cast(back, value.dataType, Some(timeZoneId), EvalMode.TRY)
        Some(If(EqualNullSafe(forth, value), back, Literal.create(null, target)))
    }
  }

  /**
   * The index statistics of `key` when it is an indexed column of `plan`'s
   * file relation, and whether `plan` reads it through Projects and Filters
   * only. With `throughJoins`, also a column read through joins, which hold at
   * most the column's values (false: its counts are only upper bounds).
   */
  def indexStats(session: SparkSession, plan: LogicalPlan, key: Expression, throughJoins: Boolean)
      : Option[(ColumnSummary, Boolean)] = {
    val direct = columnOf(plan, key)
    def below(p: LogicalPlan, id: ExprId): LogicalPlan = p match {
      case j: Join => Seq(j.left, j.right).find(_.outputSet.exists(_.exprId == id)).map(below(_, id)).getOrElse(j)
      case Project(list, child) if list.exists { case a: AttributeReference => a.exprId == id; case _ => false } =>
        below(child, id)
      case Filter(_, child) => below(child, id)
      case other => other
    }
    val column = direct.orElse(if (!throughJoins || key.references.size != 1) None
      else columnOf(below(plan, key.references.head.exprId), key))
    column.filterNot(c => FilePruningRule.isDelta(c.fs)).flatMap { column =>
      IndexCatalog.coveredColumns(session, column.fs, Seq(column.attribute)).iterator
        .flatMap(c => c.index.entry.columnSummaries.get(c.indexColumn)).find(_.ndv >= 0)
    }.map(_ -> direct.isDefined)
  }
}
