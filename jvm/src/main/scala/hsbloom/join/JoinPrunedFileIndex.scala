package hsbloom.join

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.{FileIndex, PartitionDirectory}
import org.apache.spark.sql.types.{DoubleType, FloatType}
import org.slf4j.LoggerFactory

import hsbloom.catalog.IndexCatalog
import hsbloom.conf.HsbloomConf
import hsbloom.pruning.{PrunedFileIndex, PruningFileIndex}

/**
 * Dynamic file pruning for the probe side of an equi-join: a relation's
 * FileIndex that, when Spark lists its files, keeps only the files whose
 * file-level filters may hold one of the build side's keys, as if the scan had
 * `key IN (build keys)` among its filters. Where the join is a broadcast hash
 * join, the keys are those of its own broadcast, handed over by the scan once
 * the broadcast is built (`BroadcastKeysRule`, `receiveKeys`): computed once,
 * at most `maxKeys` distinct ones, of which the first `SampleKeys` are probed
 * alone first (`keptBySample`: where they keep every file, so would the
 * rest). Otherwise they come from a small Spark job
 * of their own (the first rows of the build side, stopping once it has more
 * than `maxKeys`), so the build side is computed twice: only where the cost
 * model (`JoinCostModel.filePruning`) found that cheap, on a build side that
 * is a filtered scan (`BuildSide`), with `maxKeys` the most keys worth
 * waiting for; where it did not, the probe side is read as planned. Any
 * failure, too many keys, keys not there when the files are listed, or
 * hsbloom turned off keeps every file, with the reason.
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

  /** Keys of a join's broadcast, by subquery name, as the scan hands them over when it lists (`receiveKeys`). */
  @transient private lazy val received = new java.util.concurrent.ConcurrentHashMap[String, Option[Array[Any]]]()

  /** Keys read in a job of their own, once per plan (the build side reads fixed file listings). */
  @transient private lazy val ownJobFilters = new java.util.concurrent.ConcurrentHashMap[BuildKeys, Either[String, Expression]]()

  override def prunesAtRunTime: Boolean = enabled && joins.exists(_.broadcast.isDefined)

  override def prunesRowGroupsAtRunTime: Boolean = prunesAtRunTime && HsbloomConf.isZonesEnabled(session) &&
    columns.exists(c => joins.exists(_.attribute.exprId == c.attribute.exprId) &&
      IndexCatalog.indexData(session, c.index).hasZones)

  override def receiveKeys(name: String, values: Option[Array[Any]]): Unit = if (joins.exists(_.broadcast.contains(name))) {
    received.put(name, values)
    dropPrepared() // the listing made before the keys were known keeps more files
  }

  /** This index with the joins on these probe columns fed by their join's broadcast (subquery name by column). */
  def withBroadcasts(names: Map[ExprId, String]): JoinPrunedFileIndex = new JoinPrunedFileIndex(session, delegate,
    columns, joins.map(j => names.get(j.attribute.exprId).filter(_ => !j.nullSafe)
      .map(j.fedBy(_, HsbloomConf.JoinPruningMaxBuildKeys.get(session))).getOrElse(j)))

  /**
   * The filter of `j`'s build keys, or why there is none. With `sample`, a
   * broadcast's keys are cut to their first `SampleKeys` distinct ones (the
   * others' filters are whole).
   */
  private def keyFilter(j: BuildKeys, sample: Boolean = false): Either[String, Expression] = j.broadcast match {
    case Some(name) => Option(received.get(name)) match {
      // `hs.explain` plans only: where a job of their own was allowed, it reads the keys in one (the keys the
      // broadcast will hold), so that it shows the files and row groups they keep; else it says when they come.
      case None if name == PlannedBroadcast => j.ownJobSkipped match {
        case None => ownJobFilters.computeIfAbsent(j, k => keysFilter(k)).left.map(why => s"$AtRunTime; $why")
        case Some(_) => scala.util.Left(s"$AtRunTime; the scan's metrics and the log show what they pruned")
      }
      case None | Some(None) =>
        scala.util.Left("the keys of this join's broadcast were not available when the files were listed; every file read")
      case Some(Some(values)) => broadcastFilter(j, values, sample)
    }
    case None => j.ownJobSkipped match {
      case Some(why) => scala.util.Left(s"no broadcast of the build side to reuse, and no job of their own ($why); every file read")
      case None => ownJobFilters.computeIfAbsent(j, k => keysFilter(k))
    }
  }

  private def broadcastFilter(j: BuildKeys, values: Array[Any], sample: Boolean): Either[String, Expression] = {
    if (nonNullCount(values) > j.maxKeys) {
      val distinct = new java.util.HashSet[Any]()
      values.foreach(v => if (v != null) distinct.add(v))
      if (distinct.size > j.maxKeys) {
        return scala.util.Left(s"the broadcast holds more than ${j.maxKeys} distinct keys (${distinct.size}, " +
          s"${HsbloomConf.JoinPruningMaxBuildKeys.key}); every file read")
      }
    }
    val keys = scala.collection.mutable.HashSet[Any]()
    val it = values.iterator
    while (it.hasNext && !(sample && keys.size >= SampleKeys)) {
      val v = it.next()
      if (v != null) keys += v
    }
    if (!sample) j.keyCount = Some(keys.size)
    scala.util.Right(inSet(j.attribute, keys.toSet))
  }

  /** The keys `j`'s broadcast handed over (None: not fed by a broadcast, or not yet). */
  private def receivedKeys(j: BuildKeys): Option[Array[Any]] = j.broadcast.flatMap(name => Option(received.get(name)).flatten)

  /** The joins whose broadcast's keys are more than `SampleKeys` values: worth a first pass with a sample. */
  private def sampled: Seq[BuildKeys] = joins.filter(j => receivedKeys(j).exists(nonNullCount(_) > SampleKeys))

  /**
   * Where a broadcast has many keys, first the listing with the first
   * `SampleKeys` of them: a superset of the keys keeps a superset of the
   * files, so when the sample already keeps every file (and row group) the
   * whole set would too, and its keys need not be hashed or probed. Else
   * None, and the whole set is probed.
   */
  private def keptBySample(partitionFilters: Seq[Expression], dataFilters: Seq[Expression],
      pruning: PrunedFileIndex, started: Long): Option[(Seq[PartitionDirectory], PrunedFileIndex.Report, Seq[String])] = {
    val cut = sampled
    if (cut.isEmpty) return None
    val filters = joins.map(j => keyFilter(j, sample = true))
    if (filters.exists(_.isLeft)) return None
    val (listed, report) = pruning.prune(partitionFilters, dataFilters ++ filters.flatMap(_.toOption))
    // A listing that pruned, or that did not consult the index (it failed), says nothing of the whole set.
    if (report.filesPruned > 0 || report.rowGroups.exists(_.pruned > 0) || report.indexes.isEmpty) return None
    val ms = (System.nanoTime() - started) / 1e6
    val notes = cut.map { j =>
      val n = receivedKeys(j).map(nonNullCount).getOrElse(0)
      val why = s"the first $SampleKeys of its broadcast's $n key values; ${answer(report)}: every file may " +
        "hold them, so the other keys were not probed"
      log.info(s"hsbloom: join on ${j.attribute.name}: $why for ${rootPaths.mkString(", ")}")
      JoinDecisions.record(f"join on ${j.attribute.name} (${rootPaths.mkString(", ")}): run time: $why " +
        f"(listed in $ms%.1f ms)")
      s"join on ${j.attribute.name}: $why"
    }
    Some((listed, report, notes))
  }

  /** The listing after pruning, what the file pruning did, and per join what its build side gave. */
  def prune(partitionFilters: Seq[Expression], dataFilters: Seq[Expression])
      : (Seq[PartitionDirectory], PrunedFileIndex.Report, Seq[String]) = {
    val pruning = new PrunedFileIndex(session, delegate, columns)
    if (!enabled) {
      val (listed, report) = pruning.prune(partitionFilters, dataFilters)
      return (listed, report, Nil)
    }
    val started = System.nanoTime()
    keptBySample(partitionFilters, dataFilters, pruning, started).foreach(kept => return kept)
    val filters = joins.map(j => j -> keyFilter(j))
    val (listed, report) = pruning.prune(partitionFilters, dataFilters ++ filters.flatMap(_._2.toOption))
    val notes = filters.map { case (j, f) =>
      val from = if (j.broadcast.contains(PlannedBroadcast)) s"$AtRunTime; for this explain read in a job of their " +
        s"own: ${j.describeKeys}" else s"${j.describeKeys} from the build side"
      s"join on ${j.attribute.name}: " + f.fold(reason => reason, _ => s"$from; ${answer(report)}")
    }
    notes.foreach(n => log.info(s"hsbloom: $n for ${rootPaths.mkString(", ")}"))
    // A listing at run time from a broadcast's keys: its numbers and its time, for EXPLAIN BLOOMFILTER ANALYZE.
    val ms = (System.nanoTime() - started) / 1e6
    filters.foreach { case (j, f) =>
      if (j.broadcast.exists(received.containsKey)) {
        JoinDecisions.record(s"join on ${j.attribute.name} (${rootPaths.mkString(", ")}): run time: " +
          f.fold((why: String) => why, _ => f"${j.describeKeys} of its broadcast; ${answer(report)} (listed in $ms%.1f ms)"))
      }
    }
    (listed, report, notes)
  }

  /**
   * What the index said about the listing, e.g. "the index says 19 of 80 files may hold them: 61 files (76 %)
   * not read", and of kept files with zones "; row groups of files with zones: 152 -> 23".
   */
  private def answer(report: PrunedFileIndex.Report): String = {
    val share = if (report.filesBefore == 0) 0.0 else report.filesPruned * 100.0 / report.filesBefore
    f"the index says ${report.filesAfter} of ${report.filesBefore} files may hold them: " +
      f"${report.filesPruned} files ($share%.0f %%) not read" +
      report.rowGroups.map(g => s"; row groups of files with zones: ${g.before} -> ${g.after}").getOrElse("")
  }

  private def keysFilter(j: BuildKeys): Either[String, Expression] =
    BuildKeysJob.keysFilter(session, j, rootPaths.mkString(", "))

  private def identity
      : (FileIndex, Seq[(String, IndexCatalog.DataKey, String)], Seq[(String, LogicalPlan, Boolean, Option[String])]) = (delegate,
    columns.map(c => (c.attribute.name, c.index.dataKey, c.indexColumn)),
    joins.map(j => (j.attribute.name, j.plan.canonicalized, j.nullSafe, j.broadcast)))

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
   * Keys of a broadcast probed first, alone, when it has more (`keptBySample`): enough that keys spread over
   * the files keep them all (n keys each in one of f files, at random, miss a file with probability about
   * f x e^(-n/f): under 10^-15 for 24 files), few enough to hash and probe in about a millisecond.
   */
  val SampleKeys = 1024

  private def nonNullCount(values: Array[Any]): Int = values.count(_ != null)

  /** `attribute IN (keys)`, a float or double zero standing for both zeros (they are equal); none: nothing joins. */
  private[join] def inSet(attribute: AttributeReference, keys: Set[Any]): Expression = {
    val dt = attribute.dataType
    val both = keys ++ (dt match {
      case FloatType if keys.exists(k => k.asInstanceOf[Float] == 0.0f) => Set(0.0f, -0.0f)
      case DoubleType if keys.exists(k => k.asInstanceOf[Double] == 0.0) => Set(0.0, -0.0)
      case _ => Set.empty
    })
    if (both.isEmpty) EqualTo(attribute, Literal.create(null, dt)) else InSet(attribute, both)
  }

  /** The subquery name of a broadcast planned but not yet fed (`hs.explain`, which plans only). */
  val PlannedBroadcast = ""

  private val AtRunTime = "keys from this join's broadcast, when the probe side is listed at run time (the build " +
    "side is read once)"

  /**
   * One join's build side: `plan` has one column, the build key as a value of
   * the probe column `attribute`'s type (null where no value of it is equal).
   */
  final class BuildKeys(val attribute: AttributeReference, val plan: LogicalPlan, val nullSafe: Boolean,
      val maxKeys: Int, val ownJobSkipped: Option[String], val broadcast: Option[String]) {
    /**
     * These keys taken from the broadcast subquery `name` of their join, never from a job of their own, at most
     * `bound` of them (the setting: the cost model's keys worth waiting for bound only a job of their own).
     */
    def fedBy(name: String, bound: Int): BuildKeys = new BuildKeys(attribute, plan, nullSafe, bound, ownJobSkipped, Some(name))
    @volatile private[hsbloom] var keyCount: Option[Int] = None
    def describeKeys: String = keyCount.map(n => s"$n distinct key(s)").getOrElse("keys")
    def sameAs(o: BuildKeys): Boolean =
      o.attribute.exprId == attribute.exprId && o.nullSafe == nullSafe && o.broadcast == broadcast &&
        o.plan.canonicalized == plan.canonicalized
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
