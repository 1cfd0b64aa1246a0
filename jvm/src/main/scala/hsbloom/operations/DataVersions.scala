package hsbloom.operations

import hsbloom.HsbloomException
import hsbloom.format.{LogEntry, State}
import hsbloom.log.OperationLog

/** Data versions: every build writes a new `v__=N`, so the data of a build that crashed is never read or reused. */
object DataVersions {
  /**
   * A version no entry of the log and no directory on storage has used. Every build took a version above all
   * earlier ones, so the log is read backwards only to the latest entry that started a build (CREATING, or
   * REFRESHING with another version than the entry before it): its cost is the entries since then.
   */
  def next(ctx: IndexContext): Long = next(ctx.log, ctx.versionDirectories())

  /** The same for the log `log` and the data directories `onStorage`. */
  def next(log: OperationLog, onStorage: Set[Long]): Long = {
    val used = scala.collection.mutable.Set[Long]() ++ onStorage
    var later: Option[LogEntry] = None
    val it = log.ids().reverseIterator
    var done = false
    while (!done && it.hasNext) {
      val id = it.next()
      val entry = try Some(log.read(id)) catch {
        case e: HsbloomException if e.condition == HsbloomException.CorruptLog => None // its directory, if any, is in `used`
      }
      entry.foreach { e =>
        if (later.exists(l => l.state == State.Refreshing && l.dataVersion != e.dataVersion)) done = true
        else {
          e.dataVersion.foreach(used += _)
          if (e.state == State.Creating) done = true
          later = Some(e)
        }
      }
    }
    if (used.isEmpty) 0L else used.max + 1
  }
}
