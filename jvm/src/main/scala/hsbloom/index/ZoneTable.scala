package hsbloom.index

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, Encoders, Row}
import org.apache.spark.sql.catalyst.expressions.XXH64
import org.apache.spark.sql.types._
import org.apache.spark.util.SerializableConfiguration

import hsbloom.format.{Checksums, FileKey, Layout}
import hsbloom.format.TableSchemas.{StoredZoneTable, ZoneChecksum, ZoneInput}

/**
 * The zone table of an index version with `granularity="row_group"`
 * (`<data>/zones/`, docs/design/zones.md): one row per source file, row
 * group and indexed column, with the file-table row's fields (counts and
 * filter of that row group), the row group's place and byte range, the
 * filter's blocks (written into `blocks/` like the file filters) and checksums.
 *
 * Optional: a data directory without it (a file-granularity index, or one
 * compacted by a refresh) has no zones, and planning reads its files whole.
 */
object ZoneTable {
  def path(dataPath: String): String = new Path(dataPath, Layout.ZonesTable).toString

  /** The checksum of a zone row's own fields, chained to its file-table row checksum. */
  def checksum(rowChecksum: Long, rowGroup: Int, rowGroups: Int, start: Long, length: Long, seed: Long): Long =
    XXH64.hashLong(length, XXH64.hashLong(start, XXH64.hashLong((rowGroup.toLong << 32) | rowGroups,
      XXH64.hashLong(rowChecksum, seed))))

  /**
   * Writes rows of `ZoneInput` as the zone table of the version at `dataPath` (its filters' blocks too);
   * `stored`: rows already stored (`storeRows`: adopted files' zones) written in the same write.
   */
  def write(rows: DataFrame, dataPath: String, mode: String, stored: Option[DataFrame] = None): Unit = {
    val conf = new SerializableConfiguration(rows.sparkSession.sessionState.newHadoopConf())
    val withBlocks = rows.select(ZoneInput.fieldNames.map(rows.col).toIndexedSeq: _*)
      .mapPartitions((part: Iterator[Row]) => storeRows(part, dataPath, conf.value))(Encoders.row(StoredZoneTable))
    IndexTables.write(stored.fold(withBlocks)(s => withBlocks.union(s)), mode, path(dataPath))
  }

  /** Writes rows of `StoredZoneTable` (`storeRows`' output) as the zone table of the version at `dataPath`. */
  def writeStored(stored: DataFrame, dataPath: String, mode: String): Unit = IndexTables.write(stored, mode, path(dataPath))

  /** Rows of `ZoneInput` as rows of `StoredZoneTable`: filters into this task's side file of `blocks/`, checksums. */
  def storeRows(rows: Iterator[Row], dataPath: String, conf: Configuration): Iterator[Row] = {
    val seed = Checksums.directorySeed(dataPath)
    // Where the zone's own fields are once FilterBlocks took the filter out of the row.
    val n = ZoneInput.size - 1
    // FilterBlocks reads the file-table fields at their places and appends after the row's own fields.
    FilterBlocks.attach(rows, dataPath, conf).map { r =>
      val rowChecksum = r.getLong(r.length - 1)
      Row.fromSeq(r.toSeq :+ checksum(rowChecksum, r.getInt(n - 4), r.getInt(n - 3), r.getLong(n - 2),
        r.getLong(n - 1), seed))
    }
  }

  /** One row group of a file: its byte range, rows, and per column its entry (counts and filter). */
  final case class Zone(rowGroup: Int, start: Long, length: Long, numRows: Long,
      columns: Map[String, IndexData.ColumnEntry])

  /** A file's zones, every row group of it, in file order. */
  final case class FileZones(size: Long, mtime: Long, zones: IndexedSeq[Zone])

  /** The columns planning reads: the file table's (`IndexDataLoad.Columns`), then the zone's and its checksum. */
  private val StoredColumns: IndexedSeq[TableRows.Column] = IndexDataLoad.Columns ++ IndexedSeq(
    TableRows.Column("row_group", TableRows.Int32), TableRows.Column("row_groups", TableRows.Int32),
    TableRows.Column("zone_start", TableRows.Int64), TableRows.Column("zone_length", TableRows.Int64),
    TableRows.Column(ZoneChecksum, TableRows.Int64))
  private final val RowGroup = 14; private final val RowGroups = 15; private final val Start = 16
  private final val Length = 17; private final val ZoneChecksumAt = 18

  /** One zone row as planning keeps it (from `zones/`, or decrypted from the sealed zone table: `SealedTable`). */
  private[index] final case class ZoneRow(size: Long, mtime: Long, column: String, rowGroup: Int, rowGroups: Int,
      start: Long, length: Long, entry: IndexData.ColumnEntry)

  /**
   * The zones of the version's data directories, by file key: only files
   * whose zones are whole (every row group, every column, counts that add up
   * to `fileRows(key)`, rows that pass their checksums); any other file is
   * left out, and is read whole. `group` gives the block group of a row's
   * filter, shared with the file table's groups of the same version. `sealedRows`: the decrypted zone rows of
   * encrypted columns (`SealedTable.loadZones`), by file key, whole with the plaintext rows of their files.
   */
  def load(dataPaths: Seq[String], droppedFileIds: Set[Long], conf: Configuration, reader: FilterBlocks.Reader,
      group: (Path, Long, Int, Int) => FilterBlocks.Group, fileRows: String => Option[Long],
      sealedRows: Seq[(String, ZoneRow)] = Nil): Map[String, FileZones] = {
    import IndexDataLoad.{BitsetBytes, BlocksCount, BlocksFile, BlocksOffset, BlocksPosition, ColumnName, FileId,
      FileMtime, FilePath, FileSize, NumNulls, NumRows, RowChecksumAt}
    val rows = mutable.HashMap[String, mutable.ArrayBuffer[ZoneRow]]()
    val unusable = mutable.HashSet[String]()
    val out = new Checksums.RowBytes
    var lastPath: String = null
    var lastKey: String = null
    dataPaths.foreach { dataPath =>
      val table = new Path(path(dataPath))
      val fs = table.getFileSystem(conf)
      val seed = Checksums.directorySeed(dataPath)
      val blocksDir = new Path(IndexTables.blocksPath(dataPath))
      val parts = if (!fs.exists(table)) Array.empty[Path] else fs.listStatus(table)
        .filter(s => s.isFile && !s.getPath.getName.startsWith("_") && !s.getPath.getName.startsWith("."))
        .map(_.getPath).sortBy(_.getName)
      val blocksFiles = new java.util.HashMap[String, Path]() // one Path per side file, not per row
      parts.foreach { part => try {
        val in = TableRows.open(part, conf, StoredColumns)
        var damaged = 0
        try {
          while (in.next()) {
            // No hsbloom writer writes a null: the part is not a zone table (as a row reader found it).
            if (in.hasNull) throw new IllegalStateException("a row has a null field")
            val filePath = in.string(FilePath) // the same string for a file's rows that follow each other
            if (filePath ne lastPath) { lastKey = FileKey.listed(filePath); lastPath = filePath }
            val key = lastKey
            val (rowGroup, rowGroups, start, length) = (in.int(RowGroup), in.int(RowGroups), in.long(Start), in.long(Length))
            val intact = IndexDataLoad.intact(in, out, seed) &&
              checksum(in.long(RowChecksumAt), rowGroup, rowGroups, start, length, seed) == in.long(ZoneChecksumAt)
            if (!intact) { damaged += 1; unusable += key }
            else if (droppedFileIds.isEmpty || !droppedFileIds.contains(in.long(FileId))) {
              val count = in.int(BlocksCount)
              val member = if (count == 0) None else Some(FilterBlocks.Member(group(blocksFiles.computeIfAbsent(
                in.string(BlocksFile), (name: String) => new Path(blocksDir, name)), in.long(BlocksOffset), count,
                in.int(BitsetBytes)), in.int(BlocksPosition)))
              rows.getOrElseUpdate(key, mutable.ArrayBuffer()) += ZoneRow(in.long(FileSize), in.long(FileMtime),
                in.string(ColumnName), rowGroup, rowGroups, start, length,
                IndexData.ColumnEntry(in.long(NumRows), in.long(NumNulls), member, reader))
            }
          }
        } finally in.close()
        if (damaged > 0) IndexDamage.record(part, s"$damaged rows of the zone table fail their checksums")
      } catch {
        case NonFatal(e) => IndexDamage.record(part, s"the zone table part cannot be read ($e)")
      }}
    }
    sealedRows.foreach { case (key, row) => rows.getOrElseUpdate(key, mutable.ArrayBuffer()) += row }
    rows.iterator.filterNot { case (k, _) => unusable.contains(k) }
      .flatMap { case (k, rs) => whole(rs.toSeq, fileRows(k)).map(k -> _) }.toMap
  }

  /** A file's zones when its rows describe every row group once per column, and add up to the file's rows. */
  private def whole(rows: Seq[ZoneRow], fileRows: Option[Long]): Option[FileZones] = {
    val first = rows.head
    val n = first.rowGroups
    val consistent = rows.forall(r => r.size == first.size && r.mtime == first.mtime && r.rowGroups == n)
    val byGroup = rows.groupBy(_.rowGroup)
    val columns = rows.map(_.column).toSet
    val complete = consistent && n > 0 && byGroup.keySet == (0 until n).toSet && byGroup.values.forall { rs =>
      rs.size == columns.size && rs.map(_.column).toSet == columns &&
        rs.map(r => (r.start, r.length, r.entry.numRows)).distinct.size == 1
    }
    if (!complete) return None
    val zones = (0 until n).map { g =>
      val rs = byGroup(g)
      Zone(g, rs.head.start, rs.head.length, rs.head.entry.numRows, rs.map(r => r.column -> r.entry).toMap)
    }
    if (fileRows.contains(zones.map(_.numRows).sum)) Some(FileZones(first.size, first.mtime, zones)) else None
  }
}
