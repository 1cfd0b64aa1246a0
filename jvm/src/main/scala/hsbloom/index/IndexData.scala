package hsbloom.index

import java.util.BitSet

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.example.data.Group

import hsbloom.format.{Checksums, FileKey}


/**
 * The file-level index tables of one index version (`<data>/files/` of each
 * of its data directories, see docs/design/build.md and docs/refresh.md) as query
 * planning needs them, column-wise (docs/design/scale.md): each indexed file is
 * a *slot* (0 until `numFiles`); per slot its fingerprint (size, modification
 * time), and per indexed column and slot its counts and where its filter's
 * blocks are (`FilterBlocks`: a group and a position in it).
 *
 * Arrays, not an object per file, so a version of 1,000,000 files costs some
 * tens of bytes per file and column, and a predicate is answered for every
 * slot at once (`SlotPredicates`): one read of a group's block row serves
 * every member filter of the group.
 */
final class IndexData private[index] (
    val dataPaths: Seq[String],
    slotsByKey: java.util.HashMap[String, Integer],
    sizes: Array[Long],
    mtimes: Array[Long],
    val columns: Map[String, IndexData.ColumnSlots],
    val reader: FilterBlocks.Reader,
    zonesBySlot: Array[ZoneTable.FileZones],
    val bytes: Long,
    val corruptFilters: Int,
    /** Why this session could not decrypt the version's encrypted columns' filters (`SealedTable`); None: it did. */
    val sealedProblem: Option[String] = None) {

  def numFiles: Int = sizes.length

  /** Whether any file of this version has zones (row-group filters). */
  val hasZones: Boolean = zonesBySlot.exists(_ != null)

  /** Listings of this version's table mapped to slots, reused by later queries (`ListingSlots`). */
  private[hsbloom] val listings = new ListingSlots(this)

  /**
   * The slot of a listed file, only when the file is the one that was
   * indexed: same path, size and modification time; -1 otherwise (a file
   * changed or added since the build is read).
   */
  def slotOf(path: Path, size: Long, mtime: Long): Int = {
    val slot = slotsByKey.get(FileKey.of(path.toUri))
    if (slot == null || !sameFingerprint(slot, size, mtime)) -1 else slot
  }

  /** Whether `slot` was indexed with this size and modification time. */
  def sameFingerprint(slot: Int, size: Long, mtime: Long): Boolean = sizes(slot) == size && mtimes(slot) == mtime

  /** Whether the index holds this file as it is now (same path, size and modification time). */
  def covers(path: Path, size: Long, mtime: Long): Boolean = slotOf(path, size, mtime) >= 0

  /** The zones of the file in `slot`, when the index has zones for it (docs/design/zones.md). */
  def zonesOf(slot: Int): Option[ZoneTable.FileZones] = Option(zonesBySlot(slot))

  /** The entry of one file and column, one file at a time (zones and tests; planning uses `SlotPredicates`). */
  def entry(slot: Int, column: String): Option[IndexData.ColumnEntry] = columns.get(column).filter(_.present.get(slot))
    .map(c => IndexData.ColumnEntry(c.numRows(slot), c.numNulls(slot), c.member(slot), reader))
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

  /**
   * One indexed column over the slots: `present` the slots that have a row for
   * it; per slot its counts, and its filter as a group id (in `groups`, -1
   * when the filter did not parse) and a position in the group.
   */
  final class ColumnSlots(val present: BitSet, val numRows: Array[Long], val numNulls: Array[Long],
      val group: Array[Int], val position: Array[Int], groups: Array[FilterBlocks.Group]) {
    def member(slot: Int): Option[FilterBlocks.Member] =
      if (group(slot) < 0) None else Some(FilterBlocks.Member(groups(group(slot)), position(slot)))

    /** The slots whose filter is unknown: no row for this column, or a filter that did not parse. */
    lazy val unfiltered: BitSet = {
      val bits = new BitSet(group.length)
      var s = 0
      while (s < group.length) { if (!present.get(s) || group(s) < 0) bits.set(s); s += 1 }
      bits
    }

    /** The slots that may hold a null: unknown ones, and those with a null count above 0. */
    lazy val mayHoldNulls: BitSet = {
      val bits = new BitSet(group.length)
      var s = 0
      while (s < group.length) { if (!present.get(s) || numNulls(s) > 0) bits.set(s); s += 1 }
      bits
    }

    /** Per group with members in this column: the group, and its members' positions and slots. */
    lazy val membersByGroup: Array[(FilterBlocks.Group, Array[Int], Array[Int])] = {
      val counts = new Array[Int](groups.length)
      var s = 0
      while (s < group.length) { if (present.get(s) && group(s) >= 0) counts(group(s)) += 1; s += 1 }
      val positions = counts.map(n => new Array[Int](n))
      val slots = counts.map(n => new Array[Int](n))
      val filled = new Array[Int](groups.length)
      s = 0
      while (s < group.length) {
        if (present.get(s) && group(s) >= 0) {
          val g = group(s)
          positions(g)(filled(g)) = position(s)
          slots(g)(filled(g)) = s
          filled(g) += 1
        }
        s += 1
      }
      groups.indices.filter(counts(_) > 0).map(g => (groups(g), positions(g), slots(g))).toArray
    }
  }

  /** The checksummed fields of a file-table row as a record reader reads it (`verify`). */
  private[index] def rowFields(row: Group): Checksums.RowFields =
    Checksums.RowFields(row.getLong("file_id", 0), row.getString("file_path", 0), row.getLong("file_size", 0),
      row.getLong("file_mtime", 0), row.getString("column", 0), row.getLong("num_rows", 0),
      row.getLong("num_nulls", 0), row.getString("blocks_file", 0), row.getLong("blocks_offset", 0),
      row.getInteger("blocks_count", 0), row.getInteger("blocks_position", 0), row.getInteger("bitset_bytes", 0),
      row.getLong(Checksums.FilterChecksum, 0))

  /**
   * Reads the small columns of `<part>/files` of each of `dataPaths` (the
   * version's data directories, oldest first) on the driver, leaving out the
   * rows of `droppedFileIds` (see `IndexDataLoad`).
   */
  def load(dataPaths: Seq[String], droppedFileIds: Set[Long], conf: Configuration, maxCachedBlockBytes: Long): IndexData =
    IndexDataLoad.load(dataPaths, droppedFileIds, conf, maxCachedBlockBytes)
}
