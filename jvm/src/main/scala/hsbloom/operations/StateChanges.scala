package hsbloom.operations

import org.apache.spark.sql.SparkSession

import hsbloom.HsbloomException
import hsbloom.format.{LogEntry, State}
import hsbloom.index.IndexPermissions
import hsbloom.log.LogSteps

/**
 * delete, restore, vacuum and cancel: the operations that change an index's state but build nothing. All but
 * cancel first give the index directory its source's permission again, as create and refresh do: a table
 * closed since the last refresh closes its index at the next operation of any kind (a table that is gone
 * closes it to its owner).
 */
object StateChanges {
  /** Soft delete: ACTIVE -> DELETED; queries stop using it, its data stays until vacuum. */
  def delete(spark: SparkSession, name: String): LogEntry = {
    val ctx = IndexContext.open(spark, name)
    transition(ctx, Recovery.requireState(ctx, Set(State.Active), "delete"), State.Deleting, State.Deleted, "delete")
  }

  /** Undo a soft delete: DELETED -> ACTIVE. */
  def restore(spark: SparkSession, name: String): LogEntry = {
    val ctx = IndexContext.open(spark, name)
    transition(ctx, Recovery.requireState(ctx, Set(State.Deleted), "restore"), State.Restoring, State.Active, "restore")
  }

  /**
   * Remove data: all of a DELETED index's (it becomes DOESNOTEXIST, freeing the name), or the data directories an
   * ACTIVE index no longer reads. Also clears data left by cancelled builds.
   */
  def vacuum(spark: SparkSession, name: String): LogEntry = {
    val ctx = IndexContext.open(spark, name)
    val base = Recovery.latestSettled(ctx)
    if (base.isEmpty || (base.exists(_.state == State.DoesNotExist) && ctx.versionDirectories().isEmpty)) {
      throw HsbloomException.indexNotFound(s"index '$name' does not exist")
    }
    followSource(ctx, base)
    val active = base.exists(_.state == State.Active)
    val keep = if (active) base.get.parts.toSet else Set.empty[Long] // every directory the version reads
    val op = new Operation(ctx, base, "vacuum")
    val begin = op.begins(State.Vacuuming)()
    val onFailure = (begin: LogEntry, e: Throwable) => {
      if (active) op.rollBack(begin, e)
      else { // part of the data may be gone: the index cannot go back to DELETED, only forward
        ctx.log.append(Some(begin), LogEntry.nothingAfter(begin.id, op.writer, "vacuum",
          Some(s"vacuum failed: ${SystemPath.firstLine(e, 500)}")))
      }
      ()
    }
    op.run(begin, onFailure = Some(onFailure)) {
      (ctx.versionDirectories() -- keep).toSeq.sorted.foreach { version =>
        ctx.deleteDataVersion(version)
        LogSteps.reached("first-removal")
      }
      if (active) op.ends(begin, State.Active)() else LogEntry.nothingAfter(begin.id, op.writer, "vacuum")
    }
  }

  /** Return an index stuck in a transient state to the stable state its operation started from. */
  def cancel(spark: SparkSession, name: String): LogEntry = {
    val ctx = IndexContext.open(spark, name)
    val latest = ctx.log.latest().getOrElse(throw HsbloomException.indexNotFound(s"index '$name' does not exist"))
    if (latest.state.stable) {
      throw HsbloomException.indexState(s"index '$name' is ${latest.state}: no operation is in progress to cancel")
    }
    Recovery.cancelStuck(ctx, latest, "cancelled by cancel()")
  }

  /** An operation whose only work is the state change itself (delete, restore). */
  private def transition(ctx: IndexContext, base: LogEntry, transient: State, done: State, operation: String): LogEntry = {
    followSource(ctx, Some(base))
    val op = new Operation(ctx, Some(base), operation)
    val begin = op.begins(transient)()
    op.run(begin)(op.ends(begin, done)())
  }

  /** The index directory gets its source's permission (closed when the source is gone), before anything is written. */
  private def followSource(ctx: IndexContext, base: Option[LogEntry]): Unit =
    ctx.giveSourcePermission(base.flatMap(_.source).map(_.rootPaths).getOrElse(Nil), IndexPermissions.Missing.Close)
}
