package hsbloom.indexing

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.metadata.BlockMetaData

import hsbloom.sbbf.Sbbf

/** One row group's zone taken from the file's native filters: its place and range, and per column its entry. */
final case class AdoptedZone(group: RowGroups.Group, rowGroups: Int, columns: Seq[AdoptedColumn])

/**
 * Zones (`granularity="row_group"`) from a file's own row-group filters
 * (docs/design/adoption.md#zones): each row group's native SBBF becomes its
 * zone's filter, made exactly as the zone build would make it from the data.
 *
 * The zone build (`ZoneTracker`) fills a filter sized for the row group's row
 * count (an upper bound on its distinct values) at the zones' fpp, then folds
 * it to that fpp. A native filter at least that large folds exactly to that
 * filter (`SbbfUnion`'s rule), and one smaller but within the fpp is the same
 * filter folded further (the zone build's folding reaches it too), so in both
 * cases the adopted zone filter is byte for byte the hashed one. Any other
 * native filter (smaller and too full) is not adopted.
 */
object NativeZones {
  /**
   * The zone of row group `g` for one column from its native filter (None when the chunk has
   * no non-null value and so needs none), or why it cannot be adopted.
   */
  def adopt(native: Option[Sbbf], rows: Long, nulls: Long, sharedFpp: Double): Either[String, AdoptedColumn] = {
    val nonNull = rows - nulls
    if (nonNull <= 0) return Right(AdoptedColumn(rows, nulls, 0L, Sbbf.ofBytes(Sbbf.MinBytes).toBytes))
    val filter = native.getOrElse(return Left("no native filter in every row group"))
    val hashedSize = Sbbf.forNdv(rows, sharedFpp).numBytes
    val start =
      if (filter.numBytes >= hashedSize) filter.foldTo(hashedSize)
      else if (filter.estimatedFpp <= sharedFpp) filter
      else return Left("native filter weaker than the zone fpp")
    val ndv = math.min(start.estimatedNdv, nonNull)
    Right(AdoptedColumn(rows, nulls, ndv, start.foldToTargetFpp(sharedFpp).toBytes))
  }

  /**
   * The file's row groups with byte ranges proved as the zone build proves them (`RowGroups`:
   * each range, read by Spark's reader, selects its row group alone; the whole file as one block), from
   * the file's footer bytes, matched with the footer's row groups `blocks` in order; Left(why) when any is
   * not provable.
   */
  def ranges(footer: Array[Byte], path: Path, conf: Configuration, fileSize: Long, blocks: Seq[BlockMetaData])
      : Either[String, IndexedSeq[RowGroups.Group]] = {
    RowGroups.ofFooter(footer, path, conf, 0L, fileSize) match {
      case Some((n, groups)) if n == blocks.size && groups.size == n &&
          groups.zip(blocks).zipWithIndex.forall { case ((g, b), i) =>
            g.ordinal == i && g.start == b.getStartingPos && g.rows == b.getRowCount
          } => Right(groups)
      case _ => Left("row group ranges not provable")
    }
  }
}
