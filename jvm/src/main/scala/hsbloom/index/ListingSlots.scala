package hsbloom.index

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.execution.datasources.PartitionDirectory

/**
 * The slots of a listing's files in one index version, remembered for the
 * next query over the same listing (docs/design/scale.md): a file index
 * lists the same file status objects for the same snapshot (Spark's
 * in-memory file index keeps them; so does a pinned Delta snapshot), so a
 * later query checks that each listed file is the very object seen before
 * (a pointer comparison) instead of spelling out and hashing its path again.
 *
 * Correctness does not rest on that reuse: a file is matched to a slot only
 * when it is the same object with the same path object, and its size and
 * modification time are compared with the slot's fingerprint at every query;
 * anything else is looked up afresh. At most `Kept` listings, of about twice
 * the version's files together, are remembered per version, least recently
 * used out (an entry keeps its listing's objects alive).
 */
final class ListingSlots(data: IndexData) {
  import ListingSlots._

  private var rememberedFiles = 0L
  private val remembered = new java.util.LinkedHashMap[Key, Entry](8, 0.75f, true) {
    // The objects of a listing are kept alive by the entry: at most `Kept` listings, and together at most
    // about twice the version's files (the newest listing is always kept).
    override def removeEldestEntry(eldest: java.util.Map.Entry[Key, Entry]): Boolean = {
      val out = this.size() > 1 && (this.size() > Kept || rememberedFiles > 2L * math.max(data.numFiles, 1))
      if (out) rememberedFiles -= eldest.getValue.slots.length
      out
    }
  }

  /** Per listed file (in listing order, directory after directory) its slot, or -1 when the index does not hold it. */
  def slotsOf(listing: Seq[PartitionDirectory]): Array[Int] = {
    val statuses = listing.iterator.flatMap(_.files.iterator.map(_.fileStatus)).toArray
    val key = Key(statuses.length, if (statuses.isEmpty) 0 else System.identityHashCode(statuses(0)),
      if (statuses.isEmpty) 0 else System.identityHashCode(statuses(statuses.length - 1)))
    val known = remembered.synchronized(Option(remembered.get(key)))
    val slots = known.filter(_.sameObjects(statuses)).map(_.slots).getOrElse {
      val fresh = statuses.map(f => data.slotOf(f.getPath, f.getLen, f.getModificationTime))
      remembered.synchronized {
        rememberedFiles += fresh.length
        Option(remembered.put(key, new Entry(statuses, statuses.map(_.getPath), fresh)))
          .foreach(old => rememberedFiles -= old.slots.length)
      }
      fresh
    }
    // The fingerprint is compared every time (longs in arrays: cheap), so a reused slot is never stale.
    val checked = new Array[Int](slots.length)
    var i = 0
    while (i < slots.length) {
      val s = slots(i)
      val f = statuses(i)
      checked(i) = if (s >= 0 && data.sameFingerprint(s, f.getLen, f.getModificationTime)) s else -1
      i += 1
    }
    checked
  }

  /** Listings remembered now (for tests and the memory report). */
  def count: Int = remembered.synchronized(remembered.size())
}

object ListingSlots {
  /** Listings remembered per index version: a few tables or partition selections over one version. */
  val Kept = 4

  private final case class Key(count: Int, first: Int, last: Int)

  private final class Entry(statuses: Array[FileStatus], paths: Array[Path], val slots: Array[Int]) {
    /** Whether `listed` are the very objects (status and path) this entry was made from. */
    def sameObjects(listed: Array[FileStatus]): Boolean = {
      if (listed.length != statuses.length) return false
      var i = 0
      while (i < listed.length) {
        if ((listed(i) ne statuses(i)) || (listed(i).getPath ne paths(i))) return false
        i += 1
      }
      true
    }
  }
}
