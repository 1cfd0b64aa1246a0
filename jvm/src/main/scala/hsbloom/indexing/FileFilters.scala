package hsbloom.indexing

import scala.collection.mutable
import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row

import hsbloom.sbbf.Sbbf

/** The file-level filters: one per source file and column, built whole on the map side or merged here. */
object FileFilters {
  /**
   * A column's filter for a whole file (or a zone): sized for its `nonNull` values (an
   * upper bound on the distinct ones) and folded to `fpp`, or at the size `fixedItems`
   * asks for. Returns it with the distinct-count estimate.
   */
  def build(
      hashes: Seq[(Array[Long], Int)],
      nonNull: Long,
      base: Option[Sbbf],
      fixedItems: Option[Long],
      fpp: Double): (Sbbf, Long) = {
    val filter = base.getOrElse(Sbbf.forNdv(fixedItems.getOrElse(nonNull), fpp))
    hashes.foreach { case (values, count) =>
      var i = 0
      while (i < count) { filter.insertHash(values(i)); i += 1 }
    }
    val ndv = math.min(filter.estimatedNdv, nonNull)
    if (fixedItems.isDefined) (filter, ndv) else (filter.foldToTargetFpp(fpp), ndv)
  }

  /** Reduce side of the file partitions: whole files pass through, split files are merged. */
  def reduce(
      records: Iterator[(BuildKey, Payload)],
      settings: MapSettings,
      columns: Seq[String]): Iterator[Row] = {
    val parts = mutable.LinkedHashMap[FileColumnKey, ArrayBuffer[FilePart]]()
    val whole = records.flatMap {
      case (k: FileColumnKey, r: FileResult) =>
        Iterator(Row(r.file.fileId, r.file.path, r.file.size, r.file.mtime, columns(k.column), r.rows, r.nulls, r.ndv, r.filter))
      case (k: FileColumnKey, p: FilePart) =>
        parts.getOrElseUpdate(k, ArrayBuffer()) += p
        Iterator.empty
      case (k, p) => throw new IllegalStateException(s"unexpected $k / ${p.getClass.getSimpleName} in a file partition")
    }
    whole ++ Iterator.single(()).flatMap { _ =>
      parts.iterator.map { case (k, ps) =>
        val file = ps.head.file
        val large = ps.flatMap(_.filter).reduceOption((a, b) => a.union(b))
        val (rows, nulls) = (ps.map(_.rows).sum, ps.map(_.nulls).sum)
        // A substring filter holds more hashes than values: its bound is its hashes (any number, once built large).
        val (items, fixed) = if (!settings.isGrams(k.column)) (rows - nulls, settings.expectedNumItems)
          else (if (large.isDefined) Long.MaxValue else ps.map(_.hashes.length.toLong).sum, None)
        val (filter, ndv) = build(ps.map(p => p.hashes -> p.hashes.length).toSeq, items, large, fixed, settings.fileFpp)
        Row(file.fileId, file.path, file.size, file.mtime, columns(k.column), rows, nulls, ndv, filter.toBytes)
      }
    }
  }
}
