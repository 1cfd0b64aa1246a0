package hsbloom.join

import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical.{Distinct, Limit, LogicalPlan}
import org.apache.spark.sql.execution.SQLExecution
import org.apache.spark.sql.execution.datasources.{FileIndex, PartitionDirectory}
import org.apache.spark.sql.types.{DataType, DoubleType, FloatType}
import org.slf4j.LoggerFactory

import hsbloom.catalog.IndexCatalog
import hsbloom.conf.HsbloomConf
import hsbloom.pruning.{PrunedFileIndex, PruningFileIndex}

/**
 * Dynamic file pruning for the probe side of an equi-join: a relation's
 * FileIndex that, when Spark lists its files, first reads the build side's
 * distinct keys (at most its `maxKeys`, `spark.hsbloom.join.pruning.maxBuildKeys`),
 * and if there are at most that many, keeps only the files the loaded index
 * says may hold one of them: the keys become `key IN (build keys)` among the
 * scan's filters, one `Probe` of all their hashes answered for every file of
 * the index version at once (`SlotPredicates`).
 *
 * The keys come from a small Spark job of their own, run when the probe side
 * is listed, so the build side is computed twice: the rule installs this only
 * where the cost model (`JoinCostModel.filePruning`) finds that read cheap
 * beside the probe side, on a build side that is a filtered scan
 * (`BuildSide`). Any failure, too many keys, or hsbloom turned off keeps every
 * file, with the reason.
 */
final class JoinPrunedFileIndex(
    @transient protected val session: SparkSession,
    val delegate: FileIndex,
    val columns: Seq[IndexCatalog.CoveredColumn],
    val joins: Seq[JoinPrunedFileIndex.BuildKeys]) extends PruningFileIndex {
  import JoinPrunedFileIndex._

  override protected def pruneWithReport(partitionFilters: Seq[Expression], dataFilters: Seq[Expression])
      : (Seq[PartitionDirectory], PrunedFileIndex.Report) = {
    val (listed, report, _) = prune(partitionFilters, dataFilters)
    (listed, report)
  }

  override def forOneScan(): JoinPrunedFileIndex = new JoinPrunedFileIndex(session, delegate, columns, joins)

  /** Build-side keys, computed once per plan (the build side reads fixed file listings). */
  @transient private lazy val keyFilters: Seq[(BuildKeys, Either[String, Expression])] = joins.map(j => j -> keysFilter(j))

  /** The listing after pruning, what the file pruning did, and per join what its build side gave. */
  def prune(partitionFilters: Seq[Expression], dataFilters: Seq[Expression])
      : (Seq[PartitionDirectory], PrunedFileIndex.Report, Seq[String]) = {
    val pruning = new PrunedFileIndex(session, delegate, columns)
    if (!enabled) {
      val (listed, report) = pruning.prune(partitionFilters, dataFilters)
      return (listed, report, Nil)
    }
    val filters = keyFilters
    val (listed, report) = pruning.prune(partitionFilters, dataFilters ++ filters.flatMap(_._2.toOption))
    val notes = filters.map { case (j, f) =>
      s"join on ${j.attribute.name}: " + f.fold(reason => reason, _ => s"${j.describeKeys}; ${answer(report)}")
    }
    notes.foreach(n => log.info(s"hsbloom: $n for ${rootPaths.mkString(", ")}"))
    (listed, report, notes)
  }

  /** What the index said about the listing, e.g. "the index says 19 of 80 files may hold them: 61 files (76 %) not read". */
  private def answer(report: PrunedFileIndex.Report): String = {
    val share = if (report.filesBefore == 0) 0.0 else report.filesPruned * 100.0 / report.filesBefore
    f"the index says ${report.filesAfter} of ${report.filesBefore} files may hold them: " +
      f"${report.filesPruned} files ($share%.0f %%) not read"
  }

  private def keysFilter(j: BuildKeys): Either[String, Expression] =
    JoinPrunedFileIndex.keysFilter(session, j, rootPaths.mkString(", "))

  private def identity
      : (FileIndex, Seq[(String, IndexCatalog.DataKey, String)], Seq[(String, LogicalPlan, Boolean)]) = (delegate,
    columns.map(c => (c.attribute.name, c.index.dataKey, c.indexColumn)),
    joins.map(j => (j.attribute.name, j.plan.canonicalized, j.nullSafe)))

  override def equals(other: Any): Boolean = other match {
    case p: JoinPrunedFileIndex => p.identity == identity
    case _ => false
  }
  override def hashCode: Int = identity.hashCode
  override def toString: String =
    s"JoinPrunedFileIndex(${joins.map(j => s"${j.attribute.name} by build-side keys").mkString(", ")}; $delegate)"
}

object JoinPrunedFileIndex {
  private val log = LoggerFactory.getLogger(classOf[JoinPrunedFileIndex])

  /**
   * `column IN (build keys)` (`OR column IS NULL` for `<=>` with a null key),
   * or why there is none. The keys are the build side's distinct values, at
   * most `j.maxKeys` + 1 of them (a Spark job of its own, deduplicated on the
   * executors): more than `j.maxKeys` keeps every file. A float or double
   * zero stands for both zeros (they are equal, and the set is also a row
   * filter for a MERGE target). `target` names what the keys prune, for the log.
   */
  def keysFilter(session: SparkSession, j: BuildKeys, target: String): Either[String, Expression] = {
    try {
      val started = System.nanoTime()
      val bound = math.min(j.maxKeys.toLong + 1, Int.MaxValue.toLong).toInt
      val qe = session.sessionState.executePlan(Limit(Literal(bound), Distinct(j.plan)))
      val rows = SQLExecution.withNewExecutionId(qe, Some("hsbloom: build-side keys for file pruning")) {
        qe.executedPlan.executeCollect()
      }
      val seconds = (System.nanoTime() - started) / 1e9
      val dt = j.attribute.dataType
      val values = rows.map(_.get(0, dt))
      val distinct = values.filter(_ != null).toSet
      if (distinct.size > j.maxKeys) {
        return scala.util.Left(f"the build side has more than ${j.maxKeys} distinct keys (read in $seconds%.1f s, " +
          s"${HsbloomConf.JoinPruningMaxBuildKeys.key}); every file read as planned")
      }
      val nonNull = distinct ++ bothZeros(distinct, dt)
      j.keyCount = Some(distinct.size)
      j.readSeconds = Some(seconds)
      val in: Expression =
        if (nonNull.isEmpty) EqualTo(j.attribute, Literal.create(null, dt)) // no key: nothing can join
        else InSet(j.attribute, nonNull)
      scala.util.Right(if (j.nullSafe && values.contains(null)) Or(in, IsNull(j.attribute)) else in)
    } catch {
      case NonFatal(e) =>
        log.warn(s"hsbloom: build-side keys for pruning $target failed ($e); not pruned")
        scala.util.Left(s"build-side keys failed: $e")
    }
  }

  /** The other zero of a float or double key set holding one (Spark's distinct keeps one of them). */
  private def bothZeros(keys: Set[Any], dt: DataType): Set[Any] = dt match {
    case FloatType if keys.exists(k => k.asInstanceOf[Float] == 0.0f) => Set(0.0f, -0.0f)
    case DoubleType if keys.exists(k => k.asInstanceOf[Double] == 0.0) => Set(0.0, -0.0)
    case _ => Set.empty
  }

  /**
   * One join's build side: `plan` has one column, the build key as a value of
   * the probe column `attribute`'s type (null where no value of it is equal).
   */
  final class BuildKeys(val attribute: AttributeReference, val plan: LogicalPlan, val nullSafe: Boolean,
      val maxKeys: Int) {
    @volatile private[hsbloom] var keyCount: Option[Int] = None
    @volatile private[hsbloom] var readSeconds: Option[Double] = None
    def describeKeys: String = (keyCount, readSeconds) match {
      case (Some(n), Some(s)) => f"$n distinct key(s) read in $s%.1f s"
      case (Some(n), None) => s"$n distinct key(s)"
      case _ => "keys"
    }
    def sameAs(o: BuildKeys): Boolean =
      o.attribute.exprId == attribute.exprId && o.nullSafe == nullSafe && o.plan.canonicalized == plan.canonicalized
  }

  /**
   * `location` with one more join's build keys: a JoinPrunedFileIndex (made
   * from a plain location or from a PrunedFileIndex, whose columns it takes
   * over), or `location` itself when it already has these keys.
   */
  def withJoin(session: SparkSession, location: FileIndex, covered: Seq[IndexCatalog.CoveredColumn],
      keys: BuildKeys): FileIndex = location match {
    case j: JoinPrunedFileIndex if j.joins.exists(_.sameAs(keys)) => j
    case j: JoinPrunedFileIndex => new JoinPrunedFileIndex(session, j.delegate, j.columns, j.joins :+ keys)
    case p: PrunedFileIndex => new JoinPrunedFileIndex(session, p.delegate, p.columns, Seq(keys))
    case other => new JoinPrunedFileIndex(session, other, covered, Seq(keys))
  }

  /** The listing under hsbloom's wrappers. */
  def unwrap(location: FileIndex): FileIndex = location match {
    case j: JoinPrunedFileIndex => unwrap(j.delegate)
    case p: PrunedFileIndex => unwrap(p.delegate)
    case other => other
  }
}
