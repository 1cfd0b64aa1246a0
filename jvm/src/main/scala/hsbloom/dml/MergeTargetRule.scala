package hsbloom.dml

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, AttributeReference, Expression, InputFileBlockLength, InputFileBlockStart, InputFileName, MonotonicallyIncreasingID, Nondeterministic}
import org.apache.spark.sql.catalyst.plans.{Inner, JoinType, LeftAnti, LeftOuter, LeftSemi, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan, Project}
import org.apache.spark.sql.execution.datasources.LogicalRelation

import hsbloom.catalog.IndexCatalog
import hsbloom.conf.HsbloomConf
import hsbloom.join.{BuildKeysJob, BuildSide, JoinCostModel, JoinDecisions, JoinKeys, JoinPrunedFileIndex}
import hsbloom.rules.GuardedRule
import hsbloom.shim.{Delta, FileRelation}

/**
 * A Delta MERGE reads only the target files that may hold the source's keys
 * (docs/upserts.md; why it is safe: docs/design/dml.md).
 *
 * Delta runs a MERGE as joins of its source with a scan of the target's
 * candidate files (a `TahoeBatchFileIndex`): an inner or right outer join
 * finds the files it touches, a left anti join the rows an insert-only MERGE
 * adds, and further joins rewrite the touched files. Where the target is a
 * side whose unmatched rows the join drops and the ON clause equates an
 * indexed target column with a source expression, this rule reads the
 * source's keys in a job of its own and puts `column IN (keys)` directly on
 * the target's relation. The join's result is the same (a target row whose
 * key is no source key matches no source row), and `DeltaScanPruningRule`
 * prunes the scan's files by that filter on the physical plan, where Delta's
 * deletion vectors are already in place.
 *
 * Applied only where it pays (`JoinCostModel.filePruning`: the most keys worth
 * waiting for) and where the source gives the same rows on every read
 * (`MergeSource`). Every decision is logged and recorded for explain
 * (`JoinDecisions`). Runs once per query, as a pre-CBO rule; plans without a
 * scan of a Delta file list cost one walk. Any failure leaves the plan as it
 * was (`GuardedRule`).
 */
class MergeTargetRule(session: SparkSession) extends GuardedRule[LogicalPlan] {
  import MergeTargetRule._

  override protected def enabled: Boolean = HsbloomConf.isJoinEnabled(session)
  override protected def failing: String = "Delta MERGE target pruning"

  override protected def rewritePlan(plan: LogicalPlan): LogicalPlan = {
    val candidate = plan.exists { case j: Join => j.condition.isDefined; case _ => false } &&
      plan.exists { case FileRelation(_, fs, _, false) => Delta.isBatchIndex(fs.location); case _ => false }
    if (!candidate || IndexCatalog.activeIndexes(session).isEmpty) return plan
    plan.transformUp { case j: Join if j.condition.isDefined => rewrite(j) }
  }

  private def rewrite(j: Join): LogicalPlan = {
    var left = j.left
    var right = j.right
    JoinKeys.equiKeys(j).foreach { k =>
      val on = s"${j.joinType.sql} join on ${k.left.sql} ${if (k.nullSafe) "<=>" else "="} ${k.right.sql}"
      if (targetRowsDroppable(j.joinType, targetIsLeft = true)) {
        left = reduce(left, k.left, j.right, k.right, k.nullSafe, on)
      }
      if (targetRowsDroppable(j.joinType, targetIsLeft = false)) {
        right = reduce(right, k.right, j.left, k.left, k.nullSafe, on)
      }
    }
    if ((left eq j.left) && (right eq j.right)) j else j.copy(left = left, right = right)
  }

  /** `target` with `key IN (the source's keys)` on its Delta relation, where that pays and is safe; else itself. */
  private def reduce(target: LogicalPlan, targetKey: Expression, source: LogicalPlan, sourceKey: Expression,
      nullSafe: Boolean, on: String): LogicalPlan = {
    val column = JoinKeys.columnOf(target, targetKey).filter(c => Delta.isBatchIndex(c.fs.location))
      .getOrElse(return target)
    val output = column.relation.output.collect { case a: AttributeReference => a }
    val probe = IndexCatalog.coveredColumns(session, column.fs, output)
      .find(_.attribute.exprId == column.attribute.exprId).getOrElse(return target)
    val root = column.fs.location.rootPaths.mkString(", ")
    val label = s"Delta target $root, $on: file pruning of ${column.attribute.name} from the source's keys"
    def skip(reason: String): LogicalPlan = {
      decided(s"$label: skipped: $reason")
      target
    }
    if (!readsStoredRows(target, column.relation)) {
      return skip("the target's rows pass an operator that counts or changes them before the join")
    }
    // The second read must not count the source's rows in Delta's metrics again.
    val keysSource = Delta.withoutRowCounters(source)
    if (!keysSource.deterministic) return skip("the source is not deterministic")
    val sourceBytes = MergeSource.rereadBytes(keysSource) match {
      case Left(reason) => return skip(reason)
      case Right(bytes) => bytes
    }
    if (BuildSide.filtersByValues(target, column.attribute)) {
      return skip(s"the target is filtered by values of ${column.attribute.name} already (its own pruning applies)")
    }
    val summary = probe.index.entry.columnSummaries.get(probe.indexColumn)
      .getOrElse(return skip("the index has no statistics for the column"))
    val maxKeys = HsbloomConf.JoinPruningMaxBuildKeys.get(session)
    val (decision, useful) =
      if (!HsbloomConf.isJoinCostModelOn(session)) (JoinCostModel.Apply(s"${HsbloomConf.JoinCostModel.key} is false"), maxKeys)
      else JoinCostModel.filePruning(column.fs.location.inputFiles.length, summary.numRows - summary.numNulls,
        summary.ndv, probe.index.entry.fileFpp, BigInt(column.fs.sizeInBytes), sourceBytes, maxKeys,
        filesPerKey = summary.filesPerKey)
    if (!decision.applies) return skip(decision.reason)
    val value = JoinKeys.inColumnType(sourceKey, column, session.sessionState.conf.sessionLocalTimeZone)
      .getOrElse(return skip("the key types do not line up"))
    val keys = new JoinPrunedFileIndex.BuildKeys(column.attribute,
      Project(Seq(Alias(value, "hsbloom_key")()), keysSource), nullSafe, useful, ownJobSkipped = None, broadcast = None)
    BuildKeysJob.keysFilter(session, keys, root) match {
      case Left(reason) => skip(reason)
      case Right(filter) =>
        decided(s"$label: applied: ${decision.reason}; ${keys.describeKeys} from the source")
        target.transformUp { case l: LogicalRelation if l eq column.relation => Filter(filter, l) }
    }
  }

  private def decided(line: String): Unit = {
    logInfo(s"hsbloom: $line")
    JoinDecisions.record(line)
  }
}

object MergeTargetRule {
  /** Join types whose result needs no row of the target side that has no match on the other. */
  def targetRowsDroppable(joinType: JoinType, targetIsLeft: Boolean): Boolean = joinType match {
    case Inner => true
    case LeftSemi | LeftAnti | LeftOuter => !targetIsLeft
    case RightOuter => targetIsLeft
    case _ => false
  }

  /**
   * Whether `plan` reads `relation`'s rows through Projects and Filters only,
   * whose only non-deterministic expressions are the row bookkeeping Delta
   * adds above its target scan (a row id, the input file): rows dropped
   * directly on the relation then change no metric and no other row.
   */
  def readsStoredRows(plan: LogicalPlan, relation: LogicalPlan): Boolean = plan match {
    case p if p eq relation => true
    case Project(list, child) => list.forall(onlyBookkeeping) && readsStoredRows(child, relation)
    case Filter(condition, child) => condition.deterministic && readsStoredRows(child, relation)
    case _ => false
  }

  private def onlyBookkeeping(e: Expression): Boolean = !e.exists {
    case _: MonotonicallyIncreasingID | _: InputFileName | _: InputFileBlockStart | _: InputFileBlockLength => false
    case _: Nondeterministic => true
    case n => !n.deterministic && n.children.forall(_.deterministic)
  }
}
