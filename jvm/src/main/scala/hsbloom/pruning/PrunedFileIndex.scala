package hsbloom.pruning

import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.datasources.{FileIndex, FileStatusWithMetadata, PartitionDirectory}
import org.slf4j.LoggerFactory

import hsbloom.catalog.IndexCatalog
import hsbloom.conf.HsbloomConf
import hsbloom.shim.PrunedListing

/**
 * A relation's FileIndex with hsbloom's file pruning on top: it lists files as
 * the original index does (so partition pruning, and any skipping the original
 * does, come first), then keeps only the files whose index entries say a row
 * may match the scan's data filters.
 *
 * The filters are translated when Spark lists the files, from the data filters
 * it passes in; so the rule that installs this wrapper stays cheap, and the
 * translation sees the filters in their final, optimized form. Any failure
 * (an index that cannot be read, an unexpected expression) keeps every file.
 */
final class PrunedFileIndex(
    @transient protected val session: SparkSession,
    val delegate: FileIndex,
    val columns: Seq[IndexCatalog.CoveredColumn]) extends PruningFileIndex {
  import PrunedFileIndex._

  override protected def pruneWithReport(partitionFilters: Seq[Expression], dataFilters: Seq[Expression])
      : (Seq[PartitionDirectory], Report) = prune(partitionFilters, dataFilters)

  override def forOneScan(): PrunedFileIndex = new PrunedFileIndex(session, delegate, columns)

  /** The listing after pruning, and what happened (for logs and `hs.explain`). */
  def prune(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): (Seq[PartitionDirectory], Report) = {
    val listed = delegate.listFiles(partitionFilters, dataFilters)
    val before = listed.map(_.files.size).sum
    if (!enabled) return (listed, Report(before, before, Nil, "hsbloom disabled", None))
    val started = System.nanoTime()
    try {
      val types = columns.filter(_.ngram.isEmpty).map(c => c.attribute.name -> c.attribute.dataType).toMap
      val grams = columns.flatMap(c => c.ngram.map(n => (c.attribute.name, c.lower) -> (n, c.predicateKey))).toMap
      val predicate = PredicateTranslation.translate(dataFilters, types, grams)
      // Why a substring condition checks nothing, only where some column has a substring filter to explain it by.
      val unanswered = if (grams.isEmpty) Nil else SubstringCondition.unanswered(dataFilters, grams)
      val used = PredicateTranslation.columnsOf(predicate)
      val relevant = columns.filter(c => used.contains(c.predicateKey))
      val checks = (predicate.toString +: (unanswered ++ relevant.flatMap(_.advice).distinct)).mkString("; ")
      if (predicate == PredicateTranslation.MayMatch) {
        return (listed, Report(before, before, Nil, checks, None))
      }
      // Per index version its loaded data, the listed files' slots in it (remembered per listing, so a later
      // query does not hash the paths again), and the predicate answered for all its slots at once, so the
      // loop over (possibly 1,000,000s of) listed files is a few bit tests each (docs/design/scale.md).
      val versions = relevant.map(_.index).distinct
      val data = versions.map(i => IndexCatalog.indexData(session, i)).toIndexedSeq
      val sources: Map[String, Seq[(Int, String)]] = relevant.groupBy(_.predicateKey).map { case (name, cs) =>
        name -> cs.map(c => (versions.indexOf(c.index), c.indexColumn))
      }
      val slots = data.map(_.listings.slotsOf(listed)).toArray
      // All slots at once costs the version's files x hashes; file by file, the listed ones. A listing of few of
      // the indexed files (say, one partition) is answered file by file (the same answer, SlotPredicatesSuite).
      val allAtOnce = data.indices.forall(k => slots(k).count(_ >= 0) * 8L >= data(k).numFiles)
      val mayMatch: Int => Boolean = if (allAtOnce) {
        val compiled = SlotPredicates.compile(predicate, data, c => sources.getOrElse(c, Nil))
        i => compiled.mayMatch(slots, i)
      } else {
        i => PredicateTranslation.mayMatch(predicate, column => sources.getOrElse(column, Nil).flatMap {
          case (k, indexColumn) => if (slots(k)(i) < 0) None else data(k).entry(slots(k)(i), indexColumn)
        })
      }
      val zonesOn = (session == null || HsbloomConf.isZonesEnabled(session)) && data.exists(_.hasZones)
      var (groupsBefore, groupsAfter) = (0, 0)
      var i = 0 // the file's place in the listing order, directory after directory
      val kept = listed.map { dir =>
        val files = Vector.newBuilder[FileStatusWithMetadata]
        dir.files.foreach { f =>
          if (mayMatch(i)) {
            // Of a kept file with zones, only the row groups that may match (none: the file is pruned too).
            val zones = if (zonesOn) {
              ZonePruning.select(predicate, relevant, versions.indices.map(k => (versions(k), data(k), slots(k)(i))))
            } else None
            zones.foreach { z => groupsBefore += z.rowGroups; groupsAfter += z.ranges.size }
            zones match {
              case Some(z) => if (z.ranges.nonEmpty) files += ZonePruning.carry(f, z)
              case None => files += f
            }
          }
          i += 1
        }
        dir.copy(files = files.result())
      }.filter(_.files.nonEmpty)
      val after = kept.map(_.files.size).sum
      val undecrypted = relevant.flatMap { c =>
        val d = data(versions.indexOf(c.index))
        d.sealedProblem.filterNot(_ => d.columns.contains(c.indexColumn)).map(why => s"; column " +
          s"'${c.attribute.name}' is encrypted and this session cannot decrypt its filters: all files kept ($why)")
      }.distinct
      val how = (if (allAtOnce) "all indexed files at once" else "file by file: few of the indexed files listed") +
        undecrypted.mkString
      val report = Report(before, after, versions.map(_.entry.describe).sorted, s"$checks; $how",
        Some((System.nanoTime() - started) / 1000000.0),
        if (zonesOn) Some(RowGroups(groupsBefore, groupsAfter)) else None)
      log.info(s"hsbloom: ${report.describe} for ${rootPaths.mkString(", ")}")
      PruningReports.record(s"${rootPaths.mkString(", ")}: ${report.describe}")
      (kept, report)
    } catch {
      case NonFatal(e) =>
        log.warn(s"hsbloom: not pruning files of ${rootPaths.mkString(", ")}: $e")
        (listed, Report(before, before, Nil, s"failed: $e", None))
    }
  }

  /** What pruning depends on, without expression ids: two scans of one table compare equal (exchange reuse). */
  private def identity: (FileIndex, Seq[(String, String, IndexCatalog.DataKey, String)]) = (delegate,
    columns.map(c => (c.attribute.name, c.attribute.dataType.simpleString, c.index.dataKey, c.indexColumn)))

  override def equals(other: Any): Boolean = other match {
    case p: PrunedFileIndex => p.identity == identity
    case _ => false
  }
  override def hashCode: Int = identity.hashCode
  override def toString: String =
    s"PrunedFileIndex(${columns.map(c => s"${c.attribute.name} by ${c.index.entry.indexName}").mkString(", ")}; $delegate)"
}

object PrunedFileIndex {
  private val log = LoggerFactory.getLogger(classOf[PrunedFileIndex])

  /**
   * Row groups of the files kept by their file-level entries that have zones
   * (docs/design/zones.md): how many they have, and how many may match.
   */
  final case class RowGroups(before: Int, after: Int) extends PrunedListing.RowGroupsPruned {
    def pruned: Int = before - after
  }

  /**
   * What one listing did: files before and after pruning, the index versions
   * used, the checks made, and the row groups when an index has zones.
   */
  final case class Report(filesBefore: Int, filesAfter: Int, indexes: Seq[String], predicate: String,
      millis: Option[Double], rowGroups: Option[RowGroups] = None) extends PrunedListing.Pruned {
    def filesPruned: Int = filesBefore - filesAfter
    def describe: String =
      s"index ${if (indexes.isEmpty) "(none)" else indexes.mkString(", ")}: $filesBefore files -> $filesAfter" +
        rowGroups.map(g => s"; row groups of files with zones: ${g.before} -> ${g.after}").getOrElse("") +
        s" (checks: $predicate${millis.map(m => f", $m%.1f ms").getOrElse("")})"
  }
}
