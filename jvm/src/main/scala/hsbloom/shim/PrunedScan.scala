package hsbloom.shim

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.{FileSourceScanExec, SQLExecution}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/**
 * Spark's file scan with two more driver-side SQL metrics when hsbloom pruned
 * some of its files: "files before hsbloom pruning" and "files pruned by
 * hsbloom" (the scan's own "number of files read" is the count after), and
 * two more when an index with zones pruned row groups ("row groups before
 * hsbloom pruning", "row groups pruned by hsbloom"). When its listing pruned
 * nothing it has no metrics of its own. Of a file whose listing carries a
 * zone selection it reads only the selected row groups (`ZonedScan`). A
 * listing that prunes with keys known only at run time
 * (`PrunedListing.prunesAtRunTime`: a join's broadcast, `BroadcastKeys`)
 * has the metrics from the start (the row groups' too where an index of the
 * listing has zones), and gets those keys, from the scan's subqueries, just
 * before it lists.
 *
 * It is the same node, not a node above it: same arguments, same execution,
 * code generation and columnar output, and it canonicalizes to a plain
 * `FileSourceScanExec`, so exchange reuse and every rule that matches a
 * `FileSourceScanExec` see no difference. A rule that rebuilds the scan with
 * `copy` gets a plain scan back, which only loses the two metrics.
 * `ScanMetricsRule` installs it (docs/pruning.md, "Observability").
 *
 * The node is `PrunedFileSourceScanExec`, whose constructor is Spark's scan's own (Spark's `TreeNode.makeCopy`
 * rebuilds a node from its arguments, in order), and those differ between Spark lines: it is declared in the
 * shim's version folders (src/main/spark-X.Y...), and all it does is here.
 */
trait PrunedScan extends FileSourceScanExec {
  import PrunedScan._

  /** What the latest listing of this scan's files pruned (None on executors, where the relation is not kept). */
  private def report: Option[PrunedListing.Pruned] = Option(relation).map(_.location).collect {
    case p: PrunedListing => p.lastPruned
  }.flatten

  /** hsbloom's metrics, present only when the listing made before they are first asked for pruned a file. */
  @transient private lazy val pruningMetrics: Map[String, SQLMetric] = {
    val listing = Option(relation).map(_.location).collect { case p: PrunedListing => p }
    val atRunTime = listing.exists(_.prunesAtRunTime)
    val files = if (report.exists(_.filesPruned > 0) || atRunTime) {
      Map(FilesBefore -> SQLMetrics.createMetric(sparkContext, "files before hsbloom pruning"),
        FilesPruned -> SQLMetrics.createMetric(sparkContext, "files pruned by hsbloom"))
    } else Map.empty[String, SQLMetric]
    val rowGroups = if (report.exists(_.rowGroups.exists(_.pruned > 0)) || (atRunTime &&
        listing.exists(_.prunesRowGroupsAtRunTime))) {
      Map(RowGroupsBefore -> SQLMetrics.createMetric(sparkContext, "row groups before hsbloom pruning"),
        RowGroupsPruned -> SQLMetrics.createMetric(sparkContext, "row groups pruned by hsbloom"))
    } else Map.empty[String, SQLMetric]
    files ++ rowGroups
  }

  /**
   * The scan's input: Spark's own (built by a plain scan of the same
   * arguments, which lists through the same file index and so gets the same
   * listing), restricted to the selected row groups of files with zones.
   * This node's own listing fills and sends its metrics, as Spark's does.
   */
  override lazy val inputRDD: RDD[InternalRow] = {
    val s: FileSourceScanExec = this
    // Run-time keys (a join's broadcast, run by now: `waitForSubqueries`) go to the listing before it lists.
    for ((name, values) <- BroadcastKeys.values(s.dataFilters); listing <- Option(s.relation).map(_.location)) {
      listing match {
        case p: PrunedListing => p.receiveKeys(name, values)
        case _ =>
      }
    }
    val plain = s.copy() // the case class's copy: a plain scan of the same arguments, whatever they are on this Spark
    val whole = plain.inputRDD
    // Any failure here reads the files whole, as Spark would.
    val restricted = try ZonedScan.restrict(whole, s.relation)._1 catch {
      case scala.util.control.NonFatal(e) => logWarning(s"hsbloom: reading whole files, not row groups: $e"); whole
    }
    val _ = dynamicallySelectedPartitions // lists through this node, which fills its driver metrics
    sendDriverMetrics()
    restricted
  }

  override lazy val metrics: Map[String, SQLMetric] = super.metrics ++ pruningMetrics

  /** Spark calls this once the scan has listed its files; hsbloom's metrics go out with its own. */
  override protected def sendDriverMetrics(): Unit = {
    super.sendDriverMetrics()
    for (r <- report if pruningMetrics.nonEmpty) {
      pruningMetrics.get(FilesBefore).foreach(_.set(r.filesBefore.toLong))
      pruningMetrics.get(FilesPruned).foreach(_.set(r.filesPruned.toLong))
      for (g <- r.rowGroups) {
        pruningMetrics.get(RowGroupsBefore).foreach(_.set(g.before.toLong))
        pruningMetrics.get(RowGroupsPruned).foreach(_.set(g.pruned.toLong))
      }
      val executionId = sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY)
      SQLMetrics.postDriverMetricUpdates(sparkContext, executionId, pruningMetrics.values.toSeq)
    }
  }

  // Not equal to a plain scan of the same arguments (both ways), so plan transforms keep this node.
  override def canEqual(other: Any): Boolean = other.isInstanceOf[PrunedScan]
  override def equals(other: Any): Boolean = other match {
    case o: PrunedScan => super.equals(o)
    case _ => false
  }
  override def hashCode(): Int = super.hashCode()
}

object PrunedScan {
  val FilesBefore = "hsbloomFilesBefore"
  val FilesPruned = "hsbloomFilesPruned"
  val RowGroupsBefore = "hsbloomRowGroupsBefore"
  val RowGroupsPruned = "hsbloomRowGroupsPruned"
}
