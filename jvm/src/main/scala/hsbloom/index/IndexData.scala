package hsbloom.index

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.example.data.Group
import org.apache.parquet.hadoop.{ParquetFileReader, ParquetReader}
import org.apache.parquet.hadoop.api.ReadSupport
import org.apache.parquet.hadoop.example.GroupReadSupport
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.schema.MessageType


/**
 * The file-level index tables of one index version (`<data>/files/` of each
 * of its data directories, see docs/design/build.md and docs/refresh.md) as query
 * planning needs them: per source file its fingerprint (size, modification
 * time) and per indexed column its counts and where its filter's blocks are
 * (`FilterBlocks`).
 *
 * Loading reads only the small columns, never the filters, so it costs the
 * number of files, not the filters' bytes. A probe then reads the one 32-byte
 * block it needs, together with the same block of the other filters of its
 * group, once; later probes of that block are memory reads (docs/pruning.md).
 */
final class IndexData private (val dataPaths: Seq[String], files: Map[String, IndexData.IndexedFile], val bytes: Long,
    val corruptFilters: Int) {

  def numFiles: Int = files.size

  /** Whether any file of this version has zones (row-group filters). */
  lazy val hasZones: Boolean = files.values.exists(_.zones.isDefined)

  /**
   * The index row of a listed file, only when the file is the one that was
   * indexed: same path, size and modification time. A file changed or added
   * since the build gets None, so it is read.
   */
  def lookup(path: Path, size: Long, mtime: Long): Option[IndexData.IndexedFile] =
    files.get(FileKey.of(path.toUri)).filter(f => f.size == size && f.mtime == mtime)
}

/** An index table written by an hsbloom whose layout planning no longer reads (not damage: a full refresh rebuilds it). */
final class OlderLayoutException(message: String) extends IllegalStateException(message)

object IndexData {
  /** One column of one file: counts, and its filter's blocks (None when its filter did not parse). */
  final case class ColumnEntry(numRows: Long, numNulls: Long, filter: Option[FilterBlocks.Member],
      reader: FilterBlocks.Reader) {
    /** Whether a row of this file may hold one of `hashes` in this column. */
    def mightContainAny(hashes: Array[Long]): Boolean = filter match {
      case None => true
      case Some(member) =>
        var i = 0
        while (i < hashes.length) {
          if (reader.mightContain(member, hashes(i))) return true
          i += 1
        }
        false
    }
    def mayHoldNulls: Boolean = numNulls > 0
  }

  /** A file's entries; `zones`: its row groups' entries, when the index has zones for it (docs/design/zones.md). */
  final case class IndexedFile(size: Long, mtime: Long, columns: Map[String, ColumnEntry],
      zones: Option[ZoneTable.FileZones] = None)

  /** The columns planning reads (filters are read block by block, from `blocks/`). */
  private val ProjectedColumns = Seq("file_id", "file_path", "file_size", "file_mtime", "column", "num_rows",
    "num_nulls", "blocks_file", "blocks_offset", "blocks_count", "blocks_position", "bitset_bytes",
    Checksums.FilterChecksum, Checksums.RowChecksum)

  /** The checksummed fields of a file-table row (also the first columns of a zone-table row). */
  private[index] def rowFields(row: Group): Checksums.RowFields =
    Checksums.RowFields(row.getLong("file_id", 0), row.getString("file_path", 0), row.getLong("file_size", 0),
      row.getLong("file_mtime", 0), row.getString("column", 0), row.getLong("num_rows", 0),
      row.getLong("num_nulls", 0), row.getString("blocks_file", 0), row.getLong("blocks_offset", 0),
      row.getInteger("blocks_count", 0), row.getInteger("blocks_position", 0), row.getInteger("bitset_bytes", 0),
      row.getLong(Checksums.FilterChecksum, 0))

  /** `ProjectedColumns` as `part` stores them (a missing one fails here, naming it). */
  private[index] def projection(part: Path, conf: Configuration): MessageType = {
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(part, conf))
    val schema = try reader.getFooter.getFileMetaData.getSchema finally reader.close()
    ProjectedColumns.foreach { c =>
      if (!schema.containsField(c)) {
        throw new OlderLayoutException(s"index table file $part has no column '$c' (written by an older hsbloom: " +
          "refresh the index with mode='full')")
      }
    }
    // Data layouts before 4 stored each filter twice, the whole one in this column, and their blocks differently.
    if (schema.containsField("filter")) {
      throw new OlderLayoutException(s"index table file $part holds whole filters (written by an older hsbloom, " +
        s"data layout before ${Layout.DataLayout}): refresh the index with mode='full'")
    }
    new MessageType(schema.getName, ProjectedColumns.map(c => schema.getType(schema.getFieldIndex(c))).asJava)
  }

  /**
   * Reads the small columns of `<part>/files` of each of `dataPaths` (the
   * version's data directories, oldest first) through the Hadoop FileSystem
   * with parquet-java, on the driver (no Spark job inside query planning),
   * leaving out the rows of `droppedFileIds` (files an incremental refresh
   * dropped after that part was written). Throws when a table is missing or
   * unreadable (or was written without block addresses or checksums), or when
   * two rows disagree on a file's fingerprint; a filter that did not parse
   * when the version was written has no blocks, and its file is always read.
   * A row that fails its checksum is left out (its file is then read, as any
   * file the index does not hold) and reported to `IndexDamage`.
   */
  def load(dataPaths: Seq[String], droppedFileIds: Set[Long], conf: Configuration, maxCachedBlockBytes: Long): IndexData = {
    val reader = new FilterBlocks.Reader(conf, maxCachedBlockBytes)
    val groups = mutable.HashMap[(Path, Long), FilterBlocks.Group]()
    val byFile = mutable.HashMap[String, (Long, Long, mutable.HashMap[String, ColumnEntry])]()
    val keys = mutable.HashMap[String, String]()
    var bytes = 0L
    var corrupt = 0
    var damaged = 0
    dataPaths.foreach { dataPath =>
      val seed = Checksums.directorySeed(dataPath)
      val table = new Path(IndexTables.filesPath(dataPath))
      val blocksDir = new Path(IndexTables.blocksPath(dataPath))
      val fs = table.getFileSystem(conf)
      val listed = try fs.listStatus(table) catch {
        case e: java.io.FileNotFoundException =>
          IndexDamage.record(new Path(dataPath), table, "the file table is missing")
          throw e
      }
      val parts = listed.filter(s => s.isFile && !s.getPath.getName.startsWith("_") &&
        !s.getPath.getName.startsWith(".")).map(_.getPath).sortBy(_.getName)
      // Every part is written by IndexTables.writeFileTable, so one footer gives the projection for all.
      val readConf = new Configuration(conf)
      var projected = false
      parts.foreach { part => try {
        if (!projected) {
          readConf.set(ReadSupport.PARQUET_READ_SCHEMA, projection(part, conf).toString)
          projected = true
        }
        val rows = ParquetReader.builder(new GroupReadSupport(), part).withConf(readConf).build()
        try {
          var row: Group = rows.read()
          while (row != null) {
            val fields = IndexData.rowFields(row)
            val intact = fields.checksum(seed) == row.getLong(Checksums.RowChecksum, 0)
            if (!intact) damaged += 1
            if (intact && !droppedFileIds.contains(fields.fileId)) {
              val path = fields.path
              val size = fields.size
              val mtime = fields.mtime
              val column = fields.column
              val count = fields.blocksCount
              val member = if (count == 0) { corrupt += 1; None } else {
                val file = new Path(blocksDir, fields.blocksFile)
                val offset = fields.blocksOffset
                val group = groups.getOrElseUpdate((file, offset),
                  FilterBlocks.Group(groups.size, file, offset, count, fields.bitsetBytes))
                Some(FilterBlocks.Member(group, fields.blocksPosition))
              }
              val entry = ColumnEntry(row.getLong("num_rows", 0), row.getLong("num_nulls", 0), member, reader)
              val key = keys.getOrElseUpdate(path, FileKey.listed(path)) // one parse per file, not per column
              val (s, m, columns) = byFile.getOrElseUpdate(key, (size, mtime, mutable.HashMap()))
              if (s != size || m != mtime) {
                throw new IllegalStateException(s"index tables of ${dataPaths.mkString(", ")} list $path twice with " +
                  "different fingerprints")
              }
              columns(column) = entry
              bytes += path.length * 2 + 160
            }
            row = rows.read()
          }
        } finally rows.close()
        if (damaged > 0) {
          IndexDamage.record(part, s"$damaged rows of the file table fail their checksums")
          damaged = 0
        }
      } catch {
        case e: OlderLayoutException => throw e
        // Not readable as a file table: none of its rows is used (their files are read).
        case NonFatal(e) => IndexDamage.record(part, s"the file table part cannot be read ($e)")
      }}
    }
    def group(file: Path, offset: Long, count: Int, bitsetBytes: Int): FilterBlocks.Group =
      groups.getOrElseUpdate((file, offset), FilterBlocks.Group(groups.size, file, offset, count, bitsetBytes))
    // Zones are optional: when they cannot be read, files are read whole (file-level pruning still applies).
    val zones = try ZoneTable.load(dataPaths, droppedFileIds, conf, reader, group,
      k => byFile.get(k).flatMap(_._3.values.headOption).map(_.numRows)) catch {
      case NonFatal(e) =>
        dataPaths.foreach(p => IndexDamage.record(new Path(p), new Path(ZoneTable.path(p)), s"the zone table cannot be read ($e)"))
        Map.empty[String, ZoneTable.FileZones]
    }
    val files = byFile.iterator.map { case (k, (s, m, cols)) =>
      k -> IndexedFile(s, m, cols.toMap, zones.get(k).filter(z => z.size == s && z.mtime == m))
    }.toMap
    new IndexData(dataPaths, files, bytes + zones.values.map(_.zones.size * 240L).sum, corrupt)
  }
}
