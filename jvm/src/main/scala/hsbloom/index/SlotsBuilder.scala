package hsbloom.index

import scala.collection.mutable

import org.apache.hadoop.fs.Path

import hsbloom.format.FileKey

/**
 * Gathers file-table rows into slot arrays: a slot per file key, and per
 * column the slot, counts and filter address of each row, made dense by
 * `result`. `IndexDataLoad` adds the rows it reads here, part by part in
 * order, so the slots are the ones a single reader makes. Also used to make
 * an `IndexData` without a stored table (tests, benchmarks).
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
  /** Why the sealed rows could not be read (`SealedTable.load`); None when they were, or there are none. */
  var sealedProblem: Option[String] = None
  private var sealedBytes = 0L // the pinned bitsets, counted in the version's bytes (the cache's weight)

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

  /**
   * One row of the sealed table (`SealedTable`): its filter's bitset, decrypted, pinned in the reader as a group
   * of one (None: the filter did not parse, and the file is always read).
   */
  def addSealed(path: String, size: Long, mtime: Long, column: String, numRows: Long, numNulls: Long,
      bitset: Option[Array[Byte]]): Unit = {
    val g = bitset.fold { corrupt += 1; -1 } { bits => pinned(bits).id }
    add(slot(path, size, mtime), column, numRows, numNulls, g, 0)
  }

  /** A group of one filter whose bitset (decrypted from `SealedTable`) is pinned in the reader's memory. */
  def pinned(bits: Array[Byte]): FilterBlocks.Group = {
    val group = this.group(new Path(s"/${SealedTable.Dir}/${groups.size}"), 0L, 1, bits.length)
    reader.pin(group, bits)
    sealedBytes += bits.length
    group
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
      zones.values.map(_.zones.size * 240L).sum + sealedBytes
    new IndexData(dataPaths, slotsByKey, sz, mt, dense, reader, zonesBySlot, bytes, corrupt, sealedProblem)
  }
}
