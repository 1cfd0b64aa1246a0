package hsbloom.indexing

import scala.collection.mutable.ArrayBuffer

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.Row
import org.apache.spark.sql.types.DataType

import hsbloom.format.SourceFile
import hsbloom.index.{IndexTables, ZoneTable}

/**
 * One pass of the adoption step over some of the listed files (one task, or
 * the driver: `Adoption`): each file's footer and filters are read once
 * (`NativeFilters`), and the adopted files' filters are stored right away in
 * `<dataPath>/blocks/` as the table writes store them (`IndexTables.storeFileRows`,
 * `ZoneTable.storeRows`), so what comes back is small: the decisions and the
 * stored rows, without filters. The tables are then written once, with the
 * hashed files' rows (docs/design/adoption.md#the-build).
 */
final class AdoptionReads(columns: Seq[String], physical: Seq[String], types: Seq[DataType],
    fileFpp: Double, sharedFpp: Double, zones: Boolean, weakFileFilters: Boolean, buffered: Long, dataPath: String) extends Serializable {
  import AdoptionReads._

  def apply(files: Iterator[SourceFile], conf: Configuration): Part = {
    val hashed = ArrayBuffer[(Long, String)]()
    val adopted = ArrayBuffer[Long]()
    val stats = ArrayBuffer[FileStats]()
    val fileRows = ArrayBuffer[Row]()
    val zoneRows = ArrayBuffer[Row]()
    // Files' filters are stored in batches, so filters of one size from several files share a group in blocks/
    // (one read per group at planning) while a task holds at most about BatchBytes of them.
    val batch = ArrayBuffer[(SourceFile, AdoptedFile)]()
    var batchBytes = 0L
    def store(): Unit = if (batch.nonEmpty) {
      val rows = for ((file, a) <- batch; (c, col) <- columns.zip(a.columns)) yield {
        stats += FileStats(file.fileId, c, col.rows, col.nulls, col.ndv, col.filter.length)
        Row(file.fileId, file.path, file.size, file.mtime, c, col.rows, col.nulls, col.ndv, col.filter, Adoption.Adopted)
      }
      fileRows ++= IndexTables.storeFileRows(rows.iterator, dataPath, conf)
      if (zones) {
        val zones = for ((file, a) <- batch; z <- a.zones; (c, col) <- columns.zip(z.columns)) yield Row(file.fileId,
          file.path, file.size, file.mtime, c, col.rows, col.nulls, col.ndv, col.filter, z.group.ordinal, z.rowGroups,
          z.group.start, z.group.length)
        zoneRows ++= ZoneTable.storeRows(zones.iterator, dataPath, conf)
      }
      adopted ++= batch.map(_._1.fileId)
      batch.clear()
      batchBytes = 0L
    }
    files.foreach { file =>
      NativeFilters.read(file, physical, types, fileFpp, sharedFpp, zones, weakFileFilters, buffered, conf) match {
        case Left(why) => hashed += file.fileId -> why
        case Right(a) =>
          batch += file -> a
          batchBytes += a.columns.map(_.filter.length.toLong).sum + a.zones.flatMap(_.columns).map(_.filter.length.toLong).sum
          if (batchBytes >= BatchBytes) store()
      }
    }
    store()
    Part(adopted.toVector, hashed.toVector, stats.toVector, fileRows.toVector, zoneRows.toVector)
  }
}

object AdoptionReads {
  /** What one pass found: the adopted files, the others with why, and the adopted files' stored rows. */
  final case class Part(adopted: Seq[Long], hashed: Seq[(Long, String)], stats: Seq[FileStats], fileRows: Seq[Row],
      zoneRows: Seq[Row])

  /** Filter bytes a pass holds before storing them: a group of `FilterBlocks`' size. */
  val BatchBytes: Long = 64L << 20
}
