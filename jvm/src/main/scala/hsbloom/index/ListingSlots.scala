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
    val statuses = new Array[FileStatus](listing.map(_.files.size).sum)
    var n = 0
    listing.foreach(_.files.foreach { f => statuses(n) = f.fileStatus; n += 1 }) // no iterator per file
    val key = Key(statuses.length, if (statuses.isEmpty) 0 else System.identityHashCode(statuses(0)),
      if (statuses.isEmpty) 0 else System.identityHashCode(statuses(statuses.length - 1)))
    val known = remembered.synchronized(Option(remembered.get(key)))
    // A remembered listing: each listed status is compared with the one seen before and with its slot's
    // fingerprint in one pass (a status is read once: at 1,000,000 files, reading them is the cost).
    known.flatMap(_.checked(statuses, data)).getOrElse {
      // Each path spelled out and hashed: on the driver's cores for a large listing (the map is only read).
      val (fresh, paths) = (new Array[Int](statuses.length), new Array[Path](statuses.length))
      DriverPool.slices(statuses.length, ParallelFrom) { (from, until) =>
        var i = from
        while (i < until) {
          val f = statuses(i)
          paths(i) = f.getPath
          fresh(i) = data.slotOf(paths(i), f.getLen, f.getModificationTime)
          i += 1
        }
      }
      remembered.synchronized {
        rememberedFiles += fresh.length
        Option(remembered.put(key, new Entry(statuses, paths, fresh)))
          .foreach(old => rememberedFiles -= old.slots.length)
      }
      fresh
    }
  }

  /** Listings remembered now (for tests and the memory report). */
  def count: Int = remembered.synchronized(remembered.size())
}

object ListingSlots {
  /** Listings remembered per index version: a few tables or partition selections over one version. */
  val Kept = 4

  /** Listings of at least this many files have their paths looked up on several threads (`DriverPool`). */
  val ParallelFrom = 50000

  private final case class Key(count: Int, first: Int, last: Int)

  private final class Entry(statuses: Array[FileStatus], paths: Array[Path], val slots: Array[Int]) {
    /**
     * Per listed file its slot, when `listed` are the very objects (status and path) this entry was made
     * from, each file's slot kept only while its size and modification time are its fingerprint's (so a
     * reused slot is never stale); None when any listed object is another.
     */
    def checked(listed: Array[FileStatus], data: IndexData): Option[Array[Int]] = {
      if (listed.length != statuses.length) return None
      val out = new Array[Int](listed.length)
      val same = new java.util.concurrent.atomic.AtomicBoolean(true)
      DriverPool.slices(listed.length, ParallelFrom) { (from, until) =>
        var i = from
        while (i < until && same.get) {
          val f = listed(i)
          if ((f ne statuses(i)) || (f.getPath ne paths(i))) same.set(false)
          else {
            val s = slots(i)
            out(i) = if (s >= 0 && data.sameFingerprint(s, f.getLen, f.getModificationTime)) s else -1
          }
          i += 1
        }
      }
      if (same.get) Some(out) else None
    }
  }
}
