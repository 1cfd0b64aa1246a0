package hsbloom.join

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, AttributeReference, Expression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Project}
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation, PartitioningAwareFileIndex}

import hsbloom.catalog.IndexCatalog
import hsbloom.conf.HsbloomConf
import hsbloom.format.ColumnSummary
import hsbloom.pruning.FilePruningRule

/**
 * Join file pruning's planning decision (`JoinFilterRule`, step 2;
 * docs/design/joins.md): for a probe side's indexed key, whether to install
 * a `JoinPrunedFileIndex` and where its build keys come from. Where an
 * average key is in most of the probe side's files no key set is worth
 * collecting (`JoinCostModel.keysWorthIt`); otherwise the keys come from the
 * join's broadcast when Spark broadcasts the build side (`BroadcastKeysRule`,
 * `=` keys only), and else from a job of their own where the planning checks
 * find it pays (`JoinCostModel.filePruning`). Which keys, and the files and
 * row groups they keep, are known only at run time (`JoinPrunedFileIndex`).
 */
final class JoinFilePruning(session: SparkSession) {
  private def timeZone: String = session.sessionState.conf.sessionLocalTimeZone

  /** False applies every feature wherever it is correct (for differential tests of the features themselves). */
  private def costModelOn: Boolean = HsbloomConf.isJoinCostModelOn(session)

  /**
   * `target` with its relation's files pruned by the keys of `source` on `targetKey = sourceKey` at run time
   * (None: left as it was, the decision recorded under `label`).
   */
  def apply(target: LogicalPlan, targetKey: Expression, source: LogicalPlan,
      sourceKey: Expression, nullSafe: Boolean, label: String): Option[LogicalPlan] = {
    val column = JoinKeys.columnOf(target, targetKey).filterNot(c => FilePruningRule.isDelta(c.fs)).orNull
    if (column == null) return None
    val output = column.relation.output.collect { case a: AttributeReference => a }
    val covered = IndexCatalog.coveredColumns(session, column.fs, output)
    val probe = covered.find(_.attribute.exprId == column.attribute.exprId).getOrElse(return None)
    def skip(reason: String): Option[LogicalPlan] = {
      JoinDecisions.record(s"$label: file pruning of ${column.attribute.name} from the build side's keys: " +
        s"skipped: $reason")
      None
    }
    if (!source.deterministic) return skip("the build side is not deterministic")
    if (costModelOn && BuildSide.filtersByValues(target, column.attribute)) {
      return skip(s"the query filters ${column.attribute.name} by values already (its own pruning applies)")
    }
    // Where an average key is in most of the probe side's files, no key set prunes: neither a broadcast's keys
    // (collecting them is not free) nor a job of their own. Nor where the build side's keys, counted by its index
    // before it runs, are so many that they keep every file.
    lazy val files = fileCount(column.fs, probe.index)
    lazy val buildKeys = knownBuildKeys(source, sourceKey)
    val summary = if (!costModelOn) None else probe.index.entry.columnSummaries.get(probe.indexColumn)
    val noKeySet = summary.flatMap { s =>
      val (rows, fpp) = (s.numRows - s.numNulls, probe.index.entry.fileFpp)
      // Only a count of each value once: a sum over files is an upper bound (`ColumnSummary.ndvCountsValuesOnce`).
      def keepEveryFile = buildKeys.filter(_.ndvCountsValuesOnce)
        .map(b => JoinCostModel.knownKeys(files, rows, s.ndv, fpp, s.filesPerKey, b.ndv))
        .collect { case skip: JoinCostModel.Skip => skip }
      JoinCostModel.keysWorthIt(files, rows, s.ndv, fpp, HsbloomConf.JoinPruningMaxBuildKeys.get(session),
        s.filesPerKey).left.toOption.orElse(keepEveryFile)
    }
    // Keys read in a job of their own (the build side computed a second time): only where main's planning checks
    // find that it pays (`ownJob`). A broadcast of this join's build side is reused instead whenever Spark plans
    // one (`BroadcastKeysRule`), for `=` keys: so the keys are installed even where the own job is not allowed.
    val (ownJob, useful) = ownJobDecision(column, probe, source, files, buildKeys.map(_.ndv))
    noKeySet match {
      case Some(none) =>
        val ownReason = ownJob.left.toOption.filterNot(_ == none.reason)
        return skip(ownReason.map(r => s"$r; no broadcast's keys either: ${none.reason}").getOrElse(none.reason))
      case None =>
    }
    // Without a job of its own the keys can only come from a broadcast: only for `=`, and a build side Spark may
    // broadcast (within the threshold by its estimate); otherwise the plan is left as it was.
    if (ownJob.isLeft && (nullSafe || !small(source))) return skip(ownJob.left.getOrElse(""))
    // The build keys become values of the probe column's own type (null where none is equal).
    JoinKeys.inColumnType(sourceKey, column, timeZone).map { v =>
      val how = ownJob.fold(
        why => s"from this join's broadcast when Spark broadcasts the build side (read once); without one, none " +
          s"(a job of their own is skipped: $why)",
        why => (if (nullSafe) "" else "from this join's broadcast when Spark broadcasts the build side (read " +
          "once); without one, ") + s"in a job of their own: $why")
      JoinDecisions.record(s"$label: file pruning of ${column.attribute.name} from the build side's keys: " +
        s"installed: keys $how")
      val keys = new JoinPrunedFileIndex.BuildKeys(column.attribute, Project(Seq(Alias(v, "hsbloom_key")()), source),
        nullSafe, if (ownJob.isRight) useful else HsbloomConf.JoinPruningMaxBuildKeys.get(session), ownJob.left.toOption,
        broadcast = None)
      val location = JoinPrunedFileIndex.withJoin(session, column.fs.location, covered, keys)
      if (location eq column.fs.location) target
      else {
        val relation = column.relation.copy(relation = column.fs.copy(location = location)(column.fs.sparkSession))
        target.transformUp { case l: LogicalRelation if l eq column.relation => relation }
      }
    }
  }

  /**
   * Whether the build keys may be read in a job of their own (Right, with the
   * reason and the most keys worth waiting for) or why not (Left): the
   * planning checks of the cost model (`JoinCostModel.filePruning`) on a
   * build side that is a filtered scan (`BuildSide`). `files`: the probe side's; `buildDistinct`: the build side's
   * keys where its index counts them (`knownBuildKeys`).
   */
  private def ownJobDecision(column: JoinKeys.RelationColumn, probe: IndexCatalog.CoveredColumn,
      source: LogicalPlan, files: => Int, buildDistinct: => Option[Long]): (Either[String, String], Int) = {
    val maxKeys = HsbloomConf.JoinPruningMaxBuildKeys.get(session)
    val buildRelation = BuildSide.plainScan(source) match {
      case Left(reason) => return (Left(reason), 0)
      case Right(relation) => relation
    }
    val modelled = costModelOn
    val filtered = JoinFilterRule.hasSelectiveFilter(source)
    if (modelled && !filtered && buildDistinct.isEmpty && !small(source)) {
      return (Left("the build side filters no rows and is not small"), 0)
    }
    val summary = probe.index.entry.columnSummaries.get(probe.indexColumn)
      .getOrElse(return (Left("the probe column's index has no statistics"), 0))
    val (decision, useful) = if (!modelled) (JoinCostModel.Apply(s"${HsbloomConf.JoinCostModel.key} is false"), maxKeys) else {
      JoinCostModel.filePruning(files, summary.numRows - summary.numNulls, summary.ndv,
        probe.index.entry.fileFpp, BigInt(column.fs.sizeInBytes), BigInt(buildRelation.map(_.sizeInBytes).getOrElse(0L)),
        maxKeys, buildDistinct, summary.filesPerKey)
    }
    (if (decision.applies) Right(decision.reason) else Left(decision.reason), useful)
  }

  /**
   * The index statistics of the build side's key where they count its keys before it runs: it filters no rows and
   * reads the key from an indexed column through Projects and Filters only, so it has all the column's values.
   */
  private def knownBuildKeys(source: LogicalPlan, sourceKey: Expression): Option[ColumnSummary] =
    if (JoinFilterRule.hasSelectiveFilter(source)) None
    else JoinKeys.indexStats(session, source, sourceKey, throughJoins = false).map(_._1).filter(_.ndv >= 0)

  /** The probe side's files: from its listing when it holds one, else as the index counts them. */
  private def fileCount(fs: HadoopFsRelation, index: IndexCatalog.ActiveIndex): Int =
    JoinPrunedFileIndex.unwrap(fs.location) match {
      case listing: PartitioningAwareFileIndex if JoinFilterRule.isFixedListing(listing) => listing.allFiles().size
      case _ => IndexCatalog.indexData(session, index).numFiles
    }


  /** A build side that may well have few keys: within the broadcast threshold. */
  private def small(source: LogicalPlan): Boolean =
    source.stats.sizeInBytes <= math.max(session.sessionState.conf.autoBroadcastJoinThreshold, 0L)
}
