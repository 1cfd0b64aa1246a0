package hsbloom.join

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{ExprId, Expression, IsNotNull}
import org.apache.spark.sql.catalyst.plans.{Inner, JoinType, LeftOuter, LeftSemi, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan}
import org.apache.spark.sql.execution.datasources.{FileIndex, LogicalRelation, PartitioningAwareFileIndex}
import org.apache.spark.sql.internal.SQLConf

import hsbloom.catalog.IndexCatalog
import hsbloom.conf.HsbloomConf
import hsbloom.format.ColumnSummary
import hsbloom.index.{GlobalFilterContains, GlobalFilterRef, SealedGlobal}
import hsbloom.pruning.FilePruningRule
import hsbloom.rules.{GuardedRule, Nondeterminism}
import hsbloom.shim.FileSources

/**
 * Join acceleration (docs/joins.md). For each equality `a = b` (or `a <=> b`)
 * of a join, on each side whose unmatched rows the join drops (both sides of
 * inner and left-semi joins, the non-preserved side of outer joins):
 *
 *  1. **Global filter.** When the other side's key is an indexed column with a
 *     global filter, and every file that side lists is the one the index
 *     covers, keep only rows whose key may be in that filter: a Filter just
 *     above this side, so below the exchange Spark adds for the join.
 *  2. **File pruning.** When this side's key is an indexed column of a file
 *     relation, install a `JoinPrunedFileIndex` that keeps only the files
 *     (and row groups, with zones) whose filters may hold one of the other
 *     side's keys, known at run time (decided by `JoinFilePruning`).
 *
 * Neither is applied to a side any of whose relations is below a
 * nondeterministic operator (the join's own condition included): what it
 * computes depends on the rows and files it is given (`Nondeterminism`).
 * Each is applied only where `JoinCostModel` finds that it pays, from the
 * indexes' counts and Spark's size estimates; file pruning's keys come from
 * the join's broadcast, or from a job of their own only where the other side
 * is a filtered scan (`BuildSide`). Every decision is recorded for `hs.explain`
 * (`JoinDecisions`). A plan without equi-joins, or a session without ACTIVE
 * indexes, is left after one walk of the plan.
 *
 * Runs once, as a pre-CBO rule: after the operator optimizations have pushed
 * filters down, before Spark's own runtime filters are injected. Any failure
 * leaves the plan as it was (`GuardedRule`).
 */
class JoinFilterRule(session: SparkSession) extends GuardedRule[LogicalPlan] {
  import JoinFilterRule._

  override protected def enabled: Boolean = HsbloomConf.isJoinEnabled(session)
  override protected def failing: String = "join filter rule"

  override protected def rewritePlan(plan: LogicalPlan): LogicalPlan = {
    // A query without an equi-join, or a session without indexes, costs one walk of the plan.
    if (!plan.exists { case j: Join => j.condition.isDefined; case _ => false }) return plan
    if (IndexCatalog.activeIndexes(session).isEmpty) return plan
    val nondeterministic = Nondeterminism.logicalScans(plan)
    plan.transformUp { case j: Join if j.condition.isDefined => rewrite(j, nondeterministic) }
  }

  private def rewrite(j: Join, nondeterministic: Map[ExprId, String]): LogicalPlan = {
    var left = j.left
    var right = j.right
    JoinKeys.equiKeys(j).foreach { k =>
      val label = s"${j.joinType.sql} join on ${k.left.sql} ${if (k.nullSafe) "<=>" else "="} ${k.right.sql}"
      def reduce(target: LogicalPlan, targetKey: Expression, source: LogicalPlan, sourceKey: Expression) = {
        // Rows or files dropped below a nondeterministic operator change what it computes (`Nondeterminism`).
        val unsafe = Nondeterminism.reasonFor(nondeterministic, target.collectLeaves().flatMap(_.output))
        unsafe.foreach(why => JoinDecisions.record(Nondeterminism.notPruned(s"$label: ${targetKey.sql}'s side", why)))
        if (unsafe.isDefined) target else reduceSide(target, targetKey, source, sourceKey, k.nullSafe, label)
      }
      if (dropsUnmatched(j.joinType, leftSide = true)) left = reduce(left, k.left, j.right, k.right)
      if (dropsUnmatched(j.joinType, leftSide = false)) right = reduce(right, k.right, j.left, k.left)
    }
    if ((left eq j.left) && (right eq j.right)) j else j.copy(left = left, right = right)
  }

  /** `target` without rows (global filter) and files (pruning) that cannot meet `source` on `targetKey = sourceKey`. */
  private def reduceSide(target: LogicalPlan, targetKey: Expression, source: LogicalPlan, sourceKey: Expression,
      nullSafe: Boolean, label: String): LogicalPlan = {
    val filtered = withGlobalFilter(target, targetKey, source, sourceKey, nullSafe, label).getOrElse(target)
    filePruning(filtered, targetKey, source, sourceKey, nullSafe, label).getOrElse(filtered)
  }

  private val filePruning = new JoinFilePruning(session)

  private def timeZone: String = session.sessionState.conf.sessionLocalTimeZone

  /** False applies every feature wherever it is correct (for differential tests of the features themselves). */
  private def costModelOn: Boolean = HsbloomConf.isJoinCostModelOn(session)

  private def withGlobalFilter(target: LogicalPlan, targetKey: Expression, source: LogicalPlan,
      sourceKey: Expression, nullSafe: Boolean, label: String): Option[LogicalPlan] = {
    val column = JoinKeys.columnOf(source, sourceKey).filterNot(c => FilePruningRule.isDelta(c.fs)).orNull
    if (column == null) return None
    // A column with no summary in an index with global filters is sealed: its filter and counts are in
    // `sealed_global/`, read with the session's keys (docs/design/encryption.md).
    val candidates = IndexCatalog.coveredColumns(session, column.fs, Seq(column.attribute)).flatMap { c =>
      c.index.entry.columnSummaries.get(c.indexColumn) match {
        case Some(s) => if (s.globalFilterBytes > 0) Some(c -> Some(s)) else None
        case None => if (c.index.entry.globalFilter) Some(c -> None) else None
      }
    }
    val (c, logged) = candidates.headOption.getOrElse(return None)
    def skip(reason: String): Option[LogicalPlan] = {
      JoinDecisions.record(s"$label: global filter of ${c.index.entry.indexName}.${c.indexColumn} on " +
        s"${targetKey.sql}: skipped: $reason")
      None
    }
    val maxBytes = HsbloomConf.JoinGlobalFilterMaxBytes.get(session)
    val threshold = session.sessionState.conf.autoBroadcastJoinThreshold
    val modelled = costModelOn
    if (modelled && !probablyShuffled(target, source)) {
      return skip(s"a side is estimated within the broadcast threshold ($threshold bytes): " +
        s"${target.stats.sizeInBytes} and ${source.stats.sizeInBytes} bytes")
    }
    if (modelled && sparkRuntimeFilterApplies(target, source)) return skip("Spark's own runtime Bloom filter applies on this side")
    val (summary, sealedCopy) = logged.map(_ -> None).getOrElse {
      SealedGlobal.forJoin(session, c.index.dataPaths, c.indexColumn, HsbloomConf.JoinCacheMaxBytes.get(session)) match {
        case Left(why) => return skip(s"column '${c.indexColumn}' is encrypted and this session cannot decrypt its " +
          s"global filter ($why)")
        case Right((n, plain)) => ColumnSummary(n.numRows, n.numNulls, n.ndv, 0L, n.filterBytes) -> Some(plain)
      }
    }
    if (summary.globalFilterBytes > maxBytes) {
      return skip(s"its ${summary.globalFilterBytes} bytes exceed ${HsbloomConf.JoinGlobalFilterMaxBytes.key} ($maxBytes)")
    }
    val probed = JoinKeys.indexStats(session, target, targetKey, throughJoins = true)
    val decision = if (!modelled) JoinCostModel.Apply(s"${HsbloomConf.JoinCostModel.key} is false") else JoinCostModel.globalFilter(
      summary.ndv, probed.map(_._1.ndv).filter(_ > 0), c.index.entry.sharedFpp, summary.globalFilterBytes,
      target.stats.sizeInBytes, probedThroughJoin = probed.exists(!_._2))
    if (!decision.applies) return skip(decision.reason)
    if (!everyFileIndexed(column.fs.location, c.index)) {
      return skip("the indexed side lists files the index lacks (added or changed since the build), or lists " +
        "again at execution")
    }
    for {
      value <- JoinKeys.inColumnType(targetKey, column, timeZone)
      filter = GlobalFilterContains(value, GlobalFilterRef(c.index.dataPaths, c.indexColumn, c.index.entry.indexName,
        summary.globalFilterBytes, sealedCopy), keepNulls = nullSafe && summary.numNulls != 0)
      if !target.exists {
        case Filter(cond, _) => cond.exists(e => e.isInstanceOf[GlobalFilterContains] && e.semanticEquals(filter))
        case _ => false
      }
    } yield {
      JoinDecisions.record(s"$label: global filter of ${c.index.entry.indexName}.${c.indexColumn} on " +
        s"${targetKey.sql}: injected: ${decision.reason}")
      Filter(filter, target)
    }
  }

  /**
   * Whether every file the relation lists is one the index covers (same path,
   * size and modification time). A file added or changed since the build may
   * hold keys the global filter lacks. Only fixed listings qualify (an
   * `InMemoryFileIndex`, which lists once): a listing redone at execution
   * could see files that were not checked here.
   */
  private def everyFileIndexed(location: FileIndex, index: IndexCatalog.ActiveIndex): Boolean = {
    val listing = JoinPrunedFileIndex.unwrap(location)
    if (!isFixedListing(listing)) return false
    val data = IndexCatalog.indexData(session, index)
    listing.asInstanceOf[PartitioningAwareFileIndex].allFiles().forall(f => data.covers(f.getPath, f.getLen, f.getModificationTime))
  }

  /** Like Spark's own runtime filter: only where neither side would be broadcast. */
  private def probablyShuffled(target: LogicalPlan, source: LogicalPlan): Boolean = {
    val threshold = session.sessionState.conf.autoBroadcastJoinThreshold
    def broadcastable(p: LogicalPlan) = threshold >= 0 && p.stats.sizeInBytes <= threshold
    !broadcastable(target) && !broadcastable(source)
  }

  /**
   * Where Spark's own runtime Bloom filter will be injected on this side (its
   * main conditions: enabled, a scan on this side of at least its application
   * threshold, a filtered and small other side), it is built from the filtered
   * other side, so it drops at least what the global filter drops: hsbloom
   * leaves the rows to it rather than probing twice.
   */
  private def sparkRuntimeFilterApplies(target: LogicalPlan, source: LogicalPlan): Boolean = {
    val conf = session.sessionState.conf
    conf.runtimeFilterBloomFilterEnabled &&
      target.collectLeaves().exists(l => l.isInstanceOf[LogicalRelation] &&
        l.stats.sizeInBytes >= conf.getConf(SQLConf.RUNTIME_BLOOM_FILTER_APPLICATION_SIDE_SCAN_SIZE_THRESHOLD)) &&
      hasSelectiveFilter(source) &&
      source.stats.sizeInBytes <= conf.getConf(SQLConf.RUNTIME_BLOOM_FILTER_CREATION_SIDE_THRESHOLD)
  }
}

object JoinFilterRule {
  /** Join types whose result never needs a row of this side that has no match on the other. */
  def dropsUnmatched(joinType: JoinType, leftSide: Boolean): Boolean = joinType match {
    case Inner | LeftSemi => true
    case LeftOuter => !leftSide
    case RightOuter => leftSide
    case _ => false
  }

  /**
   * A Filter that drops rows for a reason of the query's own: not only the
   * `IS NOT NULL` Spark infers for every join key, nor hsbloom's own join filters.
   */
  def hasSelectiveFilter(plan: LogicalPlan): Boolean = plan.exists {
    case Filter(condition, _) => JoinKeys.conjuncts(condition).exists {
      case IsNotNull(_) => false
      case c => !c.exists(_.isInstanceOf[GlobalFilterContains])
    }
    case _ => false
  }

  def isFixedListing(listing: FileIndex): Boolean =
    FileSources.isFixedListing(listing)
}
