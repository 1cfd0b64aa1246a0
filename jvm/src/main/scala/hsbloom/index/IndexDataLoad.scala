package hsbloom.index

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.schema.MessageType

/**
 * Loading a version's file tables into `IndexData`'s slot arrays: reads only
 * the small columns, never the filters, column by column, so it costs the
 * number of files, not the filters' bytes, and little per file (the first
 * query of a version waits for it: docs/design/scale.md).
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
    // Zones are optional: when they cannot be read, files are read whole (file-level pruning still applies).
    val zones = try ZoneTable.load(dataPaths, droppedFileIds, conf, slots.reader, slots.group, slots.fileRows) catch {
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

/**
 * Gathers file-table rows into slot arrays: a slot per file key, and per
 * column the slot, counts and filter address of each row, made dense by
 * `result`. Also used to make an `IndexData` without a stored table (tests,
 * benchmarks).
 */
private[hsbloom] final class SlotsBuilder(dataPaths: Seq[String], val reader: FilterBlocks.Reader) {
  private var slotsByKey = new java.util.HashMap[String, Integer]()
  private var sizes = new Array[Long](1024)
  private var mtimes = new Array[Long](1024)
  private var numSlots = 0
  private var lastPath: String = null
  private var lastPathKey: String = null
  private var lastKey: String = null
  private var lastKeySlot = -1
  private var keyChars = 0L
  private val groups = mutable.LinkedHashMap[(Path, Long), FilterBlocks.Group]()
  private var corrupt = 0

  /** One column's arrays over the slots, written at the row's slot (a later row of a slot replaces it). */
  private final class ColumnRows(capacity: Int) {
    private val present = new java.util.BitSet(capacity)
    private var numRows = new Array[Long](capacity)
    private var numNulls = new Array[Long](capacity)
    private var group = Array.fill(capacity)(-1)
    private var position = new Array[Int](capacity)

    def set(slot: Int, rows: Long, nulls: Long, groupId: Int, at: Int): Unit = {
      if (slot >= numRows.length) grow(math.max(slot + 1, numRows.length * 2))
      present.set(slot); numRows(slot) = rows; numNulls(slot) = nulls; group(slot) = groupId; position(slot) = at
    }

    private def grow(n: Int): Unit = {
      val had = group.length
      numRows = java.util.Arrays.copyOf(numRows, n); numNulls = java.util.Arrays.copyOf(numNulls, n)
      group = java.util.Arrays.copyOf(group, n); java.util.Arrays.fill(group, had, n, -1)
      position = java.util.Arrays.copyOf(position, n)
    }

    def slots(numSlots: Int, groups: Array[FilterBlocks.Group]): IndexData.ColumnSlots = {
      if (group.length < numSlots) grow(numSlots)
      new IndexData.ColumnSlots(present, java.util.Arrays.copyOf(numRows, numSlots),
        java.util.Arrays.copyOf(numNulls, numSlots), java.util.Arrays.copyOf(group, numSlots),
        java.util.Arrays.copyOf(position, numSlots), groups)
    }
  }
  private val columns = mutable.LinkedHashMap[String, ColumnRows]()
  private var lastColumnName: String = null
  private var lastColumn: ColumnRows = null
  private var fileRowsBySlot = Array.fill(1024)(-1L)

  /** The group of filters at `offset` of side file `file` (one `Group`, one id, per group of the version). */
  def group(file: Path, offset: Long, count: Int, bitsetBytes: Int): FilterBlocks.Group = {
    // A group's rows follow each other: the map is looked up once per group, not per row.
    if ((file ne lastGroupFile) || offset != lastGroup.offset) {
      lastGroup = groups.getOrElseUpdate((file, offset), FilterBlocks.Group(groups.size, file, offset, count, bitsetBytes))
      lastGroupFile = file
    }
    lastGroup
  }
  private var lastGroup: FilterBlocks.Group = null
  private var lastGroupFile: Path = null

  /** Makes room for about `files` slots at once (the key map grows once, not step by step). */
  def expect(files: Int): Unit = if (numSlots == 0 && slotsByKey.isEmpty && files > 1024) {
    slotsByKey = new java.util.HashMap[String, Integer]((files / 0.75).toInt + 1)
    sizes = new Array[Long](files); mtimes = new Array[Long](files)
    fileRowsBySlot = Array.fill(files)(-1L)
  }

  /** The slot of a file as the table names it (`slotOfKeyed` of its path's key). */
  def slot(path: String, size: Long, mtime: Long): Int = slotOfKeyed(keyOf(path), size, mtime)

  /** The slot of a file by its key (`FileKey.listed` of its path), made on first sight; its fingerprint must agree. */
  def slotOfKeyed(key: String, size: Long, mtime: Long): Int = {
    val s = if (key eq lastKey) lastKeySlot else slotOfKey(key, size, mtime)
    lastKey = key
    lastKeySlot = s
    if (sizes(s) != size || mtimes(s) != mtime) {
      throw new IllegalStateException(s"index tables of ${dataPaths.mkString(", ")} list $key " +
        "twice with different fingerprints")
    }
    s
  }

  /** One intact file-table row of the file with key `key` (`add`, the path's key already taken). */
  def addKeyed(key: String, size: Long, mtime: Long, column: String, numRows: Long, numNulls: Long,
      blocksFile: Path, blocksOffset: Long, blocksCount: Int, blocksPosition: Int, bitsetBytes: Int): Unit = {
    val g = if (blocksCount == 0) { corrupt += 1; -1 }
      else group(blocksFile, blocksOffset, blocksCount, bitsetBytes).id
    add(slotOfKeyed(key, size, mtime), column, numRows, numNulls, g, blocksPosition)
  }

  /** A path's key (`FileKey.listed`), taken once for the rows that follow each other and share its string. */
  private def keyOf(path: String): String = {
    if (!(path eq lastPath)) { lastPath = path; lastPathKey = FileKey.listed(path) }
    lastPathKey
  }

  /** The slot of a key, made with this fingerprint on first sight. */
  private def slotOfKey(key: String, size: Long, mtime: Long): Int = {
    val known = slotsByKey.get(key)
    if (known != null) return known.intValue
    slotsByKey.put(key, numSlots)
    if (numSlots == sizes.length) {
      sizes = java.util.Arrays.copyOf(sizes, numSlots * 2)
      mtimes = java.util.Arrays.copyOf(mtimes, numSlots * 2)
      fileRowsBySlot = java.util.Arrays.copyOf(fileRowsBySlot, numSlots * 2)
      java.util.Arrays.fill(fileRowsBySlot, numSlots, numSlots * 2, -1L)
    }
    sizes(numSlots) = size
    mtimes(numSlots) = mtime
    keyChars += key.length
    numSlots += 1
    numSlots - 1
  }

  /** One intact file-table row, its filter at `blocksOffset` of side file `blocksFile` (none when `blocksCount` is 0). */
  def add(path: String, size: Long, mtime: Long, column: String, numRows: Long, numNulls: Long, blocksFile: Path,
      blocksOffset: Long, blocksCount: Int, blocksPosition: Int, bitsetBytes: Int): Unit =
    addKeyed(keyOf(path), size, mtime, column, numRows, numNulls, blocksFile, blocksOffset, blocksCount,
      blocksPosition, bitsetBytes)

  def add(slot: Int, column: String, numRows: Long, numNulls: Long, groupId: Int, position: Int): Unit = {
    if (column ne lastColumnName) { // the rows of one column follow each other, and share its string
      lastColumn = columns.getOrElseUpdate(column, new ColumnRows(sizes.length))
      lastColumnName = column
    }
    val c = lastColumn
    c.set(slot, numRows, numNulls, groupId, position)
    fileRowsBySlot(slot) = numRows
  }

  /** The rows of the file with this key, as its first column counts them (for the zones' completeness check). */
  def fileRows(key: String): Option[Long] = 
    Option(slotsByKey.get(key)).map(s => fileRowsBySlot(s.intValue)).filter(_ >= 0)

  def result(zones: Map[String, ZoneTable.FileZones]): IndexData = {
    val (sz, mt) = (java.util.Arrays.copyOf(sizes, numSlots), java.util.Arrays.copyOf(mtimes, numSlots))
    val groupArray = groups.values.toArray.sortBy(_.id)
    val dense = columns.map { case (name, rows) => name -> rows.slots(numSlots, groupArray) }.toMap
    val zonesBySlot = new Array[ZoneTable.FileZones](numSlots)
    zones.foreach { case (key, z) =>
      val s = slotsByKey.get(key)
      if (s != null && sz(s) == z.size && mt(s) == z.mtime) zonesBySlot(s) = z
    }
    // Strings (2 bytes a char) and map entries, fingerprints, and per column 33 bytes a slot.
    val bytes = keyChars * 2 + numSlots * (96L + 16) + dense.size * numSlots * 33L +
      zones.values.map(_.zones.size * 240L).sum
    new IndexData(dataPaths, slotsByKey, sz, mt, dense, reader, zonesBySlot, bytes, corrupt)
  }
}
