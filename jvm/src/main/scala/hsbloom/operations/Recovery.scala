package hsbloom.operations

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import hsbloom.HsbloomException
import hsbloom.format.{LogEntry, State, Writer}

/**
 * What operations share about the log's state: the latest entry an operation may start from, the checks of its
 * state, and the return of an interrupted operation to the stable state it started from (rollback, cancel, and
 * the automatic recovery of a writer that is provably dead: docs/design/log.md, "Dead writers").
 */
object Recovery {
  private val logger = LoggerFactory.getLogger(getClass)

  /** The latest entry, which must be stable; a dead writer's transient entry is cancelled first. */
  def latestSettled(ctx: IndexContext): Option[LogEntry] = {
    var latest = ctx.log.latest()
    while (latest.exists(e => !e.state.stable && e.writer.isProvablyDead)) {
      val stuck = latest.get
      logger.warn(s"hsbloom: index '${ctx.name}': log entry ${stuck.id} was left ${stuck.state} by " +
        s"${stuck.writer.describe}, which is gone; returning it to its last stable state")
      try return Some(cancelStuck(ctx, stuck, s"recovered: ${stuck.writer.describe} died during ${stuck.operation}"))
      catch { case e: HsbloomException if e.condition == HsbloomException.ConcurrentOperation =>
        latest = ctx.log.latest() // the writer finished after all, or another recovery won: look again
      }
    }
    latest match {
      case Some(e) if !e.state.stable =>
        throw HsbloomException.concurrentOperation(s"index '${ctx.name}' is busy: ${e.state} since " +
          s"${formatMs(e.timestampMs)} by ${e.writer.describe}. Wait for it to finish; if that writer is gone, cancel " +
          s"it (CANCEL BLOOMFILTER INDEX `${ctx.name}`; Python: hs.cancel('${ctx.name}'))")
      case other => other
    }
  }

  /** The latest stable entry, which must be in one of `states` for `operation`. */
  def requireState(ctx: IndexContext, states: Set[State], operation: String): LogEntry =
    latestSettled(ctx) match {
      case None => throw HsbloomException.indexNotFound(s"index '${ctx.name}' does not exist")
      case Some(base) if base.state == State.DoesNotExist =>
        throw HsbloomException.indexNotFound(s"index '${ctx.name}' does not exist")
      case Some(base) if !states.contains(base.state) =>
        throw HsbloomException.indexState(s"cannot $operation index '${ctx.name}': it is ${base.state}, and " +
          s"$operation needs ${states.map(_.name).toSeq.sorted.mkString(" or ")}")
      case Some(base) => base
    }

  /** After a failure, appends the stable entry `begin` started from (best effort: reports, never masks the cause). */
  def rollBack(ctx: IndexContext, begin: LogEntry, base: Option[LogEntry], message: String): Unit = {
    val restored = restoredEntry(begin, base, Writer.current(), begin.operation, message)
    try {
      if (!ctx.log.append(Some(begin), restored)) {
        logger.warn(s"hsbloom: index '${ctx.name}': rollback not written, log entry ${restored.id} already exists")
      }
    } catch { case NonFatal(e) => logger.error(s"hsbloom: index '${ctx.name}': could not write the rollback entry ${restored.id}", e) }
  }

  /** Returns `stuck` (a transient entry) to the stable state before it, and removes the data it was writing. */
  def cancelStuck(ctx: IndexContext, stuck: LogEntry, message: String): LogEntry = {
    val base = stableBefore(ctx, stuck)
    val writer = Writer.current()
    val restored =
      // A vacuum of a deleted index may have removed part of its data: it can only go forward.
      if (stuck.state == State.Vacuuming && !base.exists(_.state == State.Active)) {
        LogEntry.nothingAfter(stuck.id, writer, "cancel", Some(message))
      } else restoredEntry(stuck, base, writer, "cancel", message)
    if (!ctx.log.append(Some(stuck), restored)) {
      throw HsbloomException.concurrentOperation(s"could not cancel the ${stuck.state} of index '${ctx.name}': its " +
        s"writer finished or another cancel won (log entry ${restored.id} exists); nothing was changed")
    }
    stuck.dataVersion.filterNot(v => restored.dataVersion.contains(v)).foreach(ctx.deleteDataVersion)
    restored
  }

  /** `base` again as the entry after `stuck` (DOESNOTEXIST when the index had no stable state). */
  def restoredEntry(stuck: LogEntry, base: Option[LogEntry], writer: Writer, operation: String, message: String): LogEntry =
    base match {
      case None => LogEntry.nothingAfter(stuck.id, writer, operation, Some(message))
      case Some(b) => b.successor(b.state, operation, writer).copy(id = stuck.id + 1, message = Some(message))
    }

  /** The newest stable entry before `entry`. */
  def stableBefore(ctx: IndexContext, entry: LogEntry): Option[LogEntry] =
    (entry.id - 1 to 0 by -1).iterator.map(ctx.log.read).find(_.state.stable)

  def formatMs(ms: Long): String =
    java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'")
      .format(java.time.Instant.ofEpochMilli(ms).atZone(java.time.ZoneOffset.UTC))
}
