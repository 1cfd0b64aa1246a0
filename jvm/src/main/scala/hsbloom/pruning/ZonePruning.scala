package hsbloom.pruning

import org.apache.spark.sql.execution.datasources.FileStatusWithMetadata

import hsbloom.catalog.IndexCatalog
import hsbloom.index.IndexData
import hsbloom.pruning.PredicateTranslation.FilePredicate
import hsbloom.shim.ZonedScan

/**
 * The row groups of a kept file that may match, for an index with zones
 * (docs/design/zones.md): the file's byte ranges a scan needs, of a file of
 * `size` bytes modified at `mtime` that has `rowGroups` row groups. Each
 * range is a row group's own (`[start, start + length)`), which Spark's
 * Parquet reader reads as exactly that row group (proved for each zone when
 * the index was built). The scan reads it as a `ZonedScan.Selection`.
 */
final case class ZoneSelection(size: Long, mtime: Long, rowGroups: Int, ranges: IndexedSeq[(Long, Long)])
    extends ZonedScan.Selection {
  def keepsAll: Boolean = ranges.size == rowGroups
}

object ZonePruning {

  /**
   * The zones of a file that may match `predicate`, from the first index in
   * `files` (an index version, its data and the file's slot there, -1 when it
   * does not hold the file) that has zones for it (a check on a column that
   * index does not cover is unknown, so it holds); None when no index has
   * zones for it.
   */
  def select(predicate: FilePredicate, relevant: Seq[IndexCatalog.CoveredColumn],
      files: Seq[(IndexCatalog.ActiveIndex, IndexData, Int)]): Option[ZoneSelection] =
    files.iterator.collectFirst { case (index, data, slot) if slot >= 0 && data.zonesOf(slot).isDefined =>
      index -> data.zonesOf(slot).get
    }.map { case (index, fileZones) =>
        // Only the values the file's own filters may hold can be in one of its row groups.
        val forFile = PredicateTranslation.narrowedTo(predicate, column => relevant.filter(_.predicateKey == column)
          .flatMap(c => files.collectFirst { case (i, data, slot) if i == c.index && slot >= 0 => data.entry(slot, c.indexColumn) }
            .flatten.toList))
        val columns = relevant.filter(_.index == index)
        val kept = fileZones.zones.filter { zone =>
          PredicateTranslation.mayMatch(forFile, column =>
            columns.filter(_.predicateKey == column).flatMap(c => zone.columns.get(c.indexColumn)))
        }
        ZoneSelection(fileZones.size, fileZones.mtime, fileZones.zones.size, kept.map(z => (z.start, z.length)))
    }

  /** `file` carrying `selection` to the scan (`ZonedScan.carry`), only when the selection leaves out a row group. */
  def carry(file: FileStatusWithMetadata, selection: ZoneSelection): FileStatusWithMetadata =
    if (selection.keepsAll) file else ZonedScan.carry(file, selection)
}
