package hsbloom.index

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.schema.MessageType

import hsbloom.format.{Checksums, FileKey, Layout}

/**
 * Loading a version's file tables into `IndexData`'s slot arrays: reads only
 * the small columns, never the filters, column by column, so it costs the
 * number of files, not the filters' bytes, and little per file (the first
 * query of a version waits for it: docs/design/scale.md). This reads the
 * parts' rows; `SlotsBuilder` assembles them into slots.
 */
object IndexDataLoad {
  import TableRows.{Column, Int32, Int64, Utf8}

  /**
   * The file table's columns planning reads: the fields of `Checksums.RowFields` in its order (the first
   * `Checksummed`), then the row's checksum. Filters are read block by block, from `blocks/`.
   */
  private[hsbloom] val Columns: IndexedSeq[Column] = IndexedSeq(Column("file_id", Int64), Column("file_path", Utf8),
    Column("file_size", Int64), Column("file_mtime", Int64), Column("column", Utf8), Column("num_rows", Int64),
    Column("num_nulls", Int64), Column("blocks_file", Utf8), Column("blocks_offset", Int64),
    Column("blocks_count", Int32), Column("blocks_position", Int32), Column("bitset_bytes", Int32),
    Column(Checksums.FilterChecksum, Int64), Column(Checksums.RowChecksum, Int64))
  private[hsbloom] val Checksummed = 13
  // Where each field is in `Columns`.
  final val FileId = 0; final val FilePath = 1; final val FileSize = 2; final val FileMtime = 3
  final val ColumnName = 4; final val NumRows = 5; final val NumNulls = 6; final val BlocksFile = 7
  final val BlocksOffset = 8; final val BlocksCount = 9; final val BlocksPosition = 10; final val BitsetBytes = 11
  final val FilterChecksumAt = 12; final val RowChecksumAt = 13

  /** Refuses a file-table part an older hsbloom wrote (not damage: a full refresh rebuilds it), naming the fix. */
  private[index] def checkLayout(part: Path)(schema: MessageType): Unit = {
    Columns.foreach { c =>
      if (!schema.containsField(c.name)) {
        throw new OlderLayoutException(s"index table file $part has no column '${c.name}' (written by an older hsbloom: " +
          "refresh the index with mode='full')")
      }
    }
    // Data layouts before 4 stored each filter twice, the whole one in this column, and their blocks differently.
    if (schema.containsField("filter")) {
      throw new OlderLayoutException(s"index table file $part holds whole filters (written by an older hsbloom, " +
        s"data layout before ${Layout.DataLayout}): refresh the index with mode='full'")
    }
  }

  /**
   * Whether the current row of `rows` (read with `Columns` first) passes its checksum: over its stored
   * bytes, as the writer checksummed the strings' UTF-8 bytes; or, should those bytes not be UTF-8 as Java
   * writes it, over the strings decoded and encoded again (what a row reader did before; the same for
   * any row an hsbloom wrote). A row with a null fails.
   */
  private[hsbloom] def intact(rows: TableRows, out: Checksums.RowBytes, seed: Long): Boolean = !rows.hasNull && {
    val stored = rows.long(RowChecksumAt)
    rows.checksum(Checksummed, out, seed) == stored || fields(rows).checksum(seed) == stored
  }

  /** The checksummed fields of the current row of `rows` (read with `Columns` first). */
  private[index] def fields(rows: TableRows): Checksums.RowFields = Checksums.RowFields(rows.long(FileId),
    rows.string(FilePath), rows.long(FileSize), rows.long(FileMtime), rows.string(ColumnName), rows.long(NumRows),
    rows.long(NumNulls), rows.string(BlocksFile), rows.long(BlocksOffset), rows.int(BlocksCount),
    rows.int(BlocksPosition), rows.int(BitsetBytes), rows.long(FilterChecksumAt))

  /**
   * Reads the small columns of `<part>/files` of each of `dataPaths` (the
   * version's data directories, oldest first) through the Hadoop FileSystem
   * with parquet-java's column readers (`TableRows`), on the driver (no Spark
   * job inside query planning), leaving out the rows of `droppedFileIds`
   * (files an incremental refresh dropped after that part was written).
   * Parts are read on `DriverPool` (they are independent until their rows become
   * slots) and added to the slots in their order, so the result is the one a
   * single thread gives.
   * Throws when a table is missing or was written by an older layout; a
   * filter that did not parse when the version was written has no blocks,
   * and its file is always read. A row that fails its checksum is left out
   * (its file is then read, as any file the index does not hold), and so is
   * the rest of a part that cannot be read or that gives a file two
   * fingerprints; both are reported to `IndexDamage`.
   */
  def load(dataPaths: Seq[String], droppedFileIds: Set[Long], conf: Configuration, maxCachedBlockBytes: Long): IndexData = {
    val slots = new SlotsBuilder(dataPaths, new FilterBlocks.Reader(conf, maxCachedBlockBytes))
    val parts = dataPaths.flatMap(dataPath => partsOf(dataPath, conf).map(dataPath -> _))
    // Read ahead on the pool; added here in order, each part as soon as it is read.
    val reads = parts.map { case (dataPath, part) => DriverPool.submit(() => readPart(dataPath, part, droppedFileIds, conf)) }
    try {
      reads.zip(parts).foreach { case (read, (_, part)) =>
        val rows = DriverPool.await(read)
        slots.expect(rows.size * parts.size) // parts are of about one size
        rows.addTo(slots, part)
      }
    } finally reads.foreach(_.cancel(false))
    // Encrypted columns: their rows are in the sealed table, read with this session's keys or not at all.
    // Their zones too: without keys a file's zones lack the encrypted columns, so their conditions keep every zone.
    val (sealedZones, zonesProblem) = SealedTable.loadZones(dataPaths, droppedFileIds, conf, slots)
    slots.sealedProblem = SealedTable.load(dataPaths, droppedFileIds, conf, slots).orElse(zonesProblem)
    // Zones are optional: when they cannot be read, files are read whole (file-level pruning still applies).
    val zones = try ZoneTable.load(dataPaths, droppedFileIds, conf, slots.reader, slots.group, slots.fileRows,
        sealedZones) catch {
      case NonFatal(e) =>
        dataPaths.foreach(p => IndexDamage.record(new Path(p), new Path(ZoneTable.path(p)), s"the zone table cannot be read ($e)"))
        Map.empty[String, ZoneTable.FileZones]
    }
    slots.result(zones)
  }

  /** The parts of the file table of `dataPath` in name order; throws (and reports) when the table is missing. */
  private def partsOf(dataPath: String, conf: Configuration): Seq[Path] = {
    val table = new Path(IndexTables.filesPath(dataPath))
    val listed = try table.getFileSystem(conf).listStatus(table) catch {
      case e: java.io.FileNotFoundException =>
        IndexDamage.record(new Path(dataPath), table, "the file table is missing")
        throw e
    }
    listed.filter(s => s.isFile && !s.getPath.getName.startsWith("_") && !s.getPath.getName.startsWith("."))
      .map(_.getPath).sortBy(_.getName).toSeq
  }

  /**
   * The intact rows of one part, read up to its end or to a failure to read
   * it (the rows before it are kept, as a single reader kept them). Throws
   * only for a part of an older layout.
   */
  private def readPart(dataPath: String, part: Path, droppedFileIds: Set[Long], conf: Configuration): PartRows = {
    val seed = Checksums.directorySeed(dataPath)
    val blocksDir = new Path(IndexTables.blocksPath(dataPath))
    val blocksFiles = new java.util.HashMap[String, Path]() // one Path per side file, not per row
    val out = new Checksums.RowBytes
    val read = new PartRows
    var lastPath: String = null
    var lastKey: String = null
    try {
      val rows = TableRows.open(part, conf, Columns, checkLayout(part))
      try {
        while (rows.next()) {
          if (!intact(rows, out, seed)) read.damaged += 1
          else if (droppedFileIds.isEmpty || !droppedFileIds.contains(rows.long(FileId))) {
            val count = rows.int(BlocksCount)
            val blocks = if (count == 0) null else blocksFiles.computeIfAbsent(rows.string(BlocksFile),
              (name: String) => new Path(blocksDir, name))
            val path = rows.string(FilePath)
            // The rows of a file's columns follow each other and share one string (`TableRows.string`).
            if (!(path eq lastPath)) {
              lastPath = path
              lastKey = FileKey.listed(path)
              lastKey.hashCode // computed here, on the pool: the string keeps it for the key map
            }
            read.add(lastKey, rows.long(FileSize), rows.long(FileMtime), rows.string(ColumnName), rows.long(NumRows),
              rows.long(NumNulls), blocks, rows.long(BlocksOffset), count, rows.int(BlocksPosition),
              rows.int(BitsetBytes))
          }
        }
      } finally rows.close()
    } catch {
      case e: OlderLayoutException => throw e
      case NonFatal(e) => read.failure = e
    }
    read
  }

  /** A part's intact rows, as read on the pool, with a file's key in place of its path. */
  private final class PartRows {
    var damaged = 0
    var failure: Throwable = null
    private var n = 0
    def size: Int = n
    private var keys = new Array[String](1024)
    private var columns = new Array[String](1024)
    private var blocksFiles = new Array[Path](1024)
    private var longs = new Array[Long](1024 * 5) // size, mtime, rows, nulls, blocks offset
    private var ints = new Array[Int](1024 * 3) // blocks count, position, bitset bytes

    def add(key: String, size: Long, mtime: Long, column: String, numRows: Long, numNulls: Long, blocksFile: Path,
        blocksOffset: Long, blocksCount: Int, position: Int, bitsetBytes: Int): Unit = {
      if (n == keys.length) {
        keys = java.util.Arrays.copyOf(keys, n * 2); columns = java.util.Arrays.copyOf(columns, n * 2)
        blocksFiles = java.util.Arrays.copyOf(blocksFiles, n * 2)
        longs = java.util.Arrays.copyOf(longs, n * 10); ints = java.util.Arrays.copyOf(ints, n * 6)
      }
      keys(n) = key; columns(n) = column; blocksFiles(n) = blocksFile
      longs(5 * n) = size; longs(5 * n + 1) = mtime; longs(5 * n + 2) = numRows; longs(5 * n + 3) = numNulls
      longs(5 * n + 4) = blocksOffset
      ints(3 * n) = blocksCount; ints(3 * n + 1) = position; ints(3 * n + 2) = bitsetBytes
      n += 1
    }

    /**
     * Adds the rows to `slots` in their order, and reports the part's damage: a failure to read it or a file
     * with two fingerprints (the rows after it are left out), else the rows that failed their checksums.
     */
    def addTo(slots: SlotsBuilder, part: Path): Unit = {
      var problem: Throwable = null
      try {
        var i = 0
        while (i < n) {
          slots.addKeyed(keys(i), longs(5 * i), longs(5 * i + 1), columns(i), longs(5 * i + 2), longs(5 * i + 3),
            blocksFiles(i), longs(5 * i + 4), ints(3 * i), ints(3 * i + 1), ints(3 * i + 2))
          i += 1
        }
      } catch { case NonFatal(e) => problem = e }
      if (problem == null) problem = failure
      if (problem != null) IndexDamage.record(part, s"the file table part cannot be read ($problem)")
      else if (damaged > 0) IndexDamage.record(part, s"$damaged rows of the file table fail their checksums")
    }
  }
}
