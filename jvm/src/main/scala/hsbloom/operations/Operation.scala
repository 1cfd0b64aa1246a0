package hsbloom.operations

import scala.util.control.NonFatal

import hsbloom.HsbloomException
import hsbloom.format.{LogEntry, State, Writer}

/**
 * One operation on one index, following the protocol every operation follows (docs/design/log.md):
 *
 *  1. check everything that can be checked without writing (the operation's own object does this);
 *  2. append the transient entry right after the latest one; if another writer got that id first, fail with
 *     `ConcurrentOperation` (nothing written);
 *  3. do the work (build a data version, remove data);
 *  4. append the stable entry that completes it; on failure in 3, append the stable entry the operation started
 *     from instead (the rollback), remove what 3 wrote, and throw with the cause attached.
 *
 * `base` is the stable entry the operation starts from (None: a new index).
 */
final class Operation(val ctx: IndexContext, val base: Option[LogEntry], val name: String) {
  val writer: Writer = Writer.current()

  /** The transient entry after `base`, with `base`'s content changed by `change`. */
  def begins(state: State)(change: LogEntry => LogEntry = identity): LogEntry =
    change(base.getOrElse(throw new IllegalStateException(s"$name needs an entry to start from")).successor(state, name, writer))

  /** The stable entry that completes the operation begun by `begin`. */
  def ends(begin: LogEntry, state: State)(change: LogEntry => LogEntry = identity): LogEntry =
    change(begin.successor(state, name, writer))

  /**
   * Appends `begin`, runs `work` (which returns the completing entry) and appends its result. With `build`, the
   * work writes the data version of `begin`: its jobs run under the operation's job group, and a failure rolls
   * back, removes the partial data and throws `BuildFailed`. Otherwise a failure rolls back (or runs `onFailure`
   * instead) and is thrown as it is.
   */
  def run(begin: LogEntry, build: Option[Operation.Build] = None,
      onFailure: Option[(LogEntry, Throwable) => Unit] = None)(work: => LogEntry): LogEntry =
    Writer.running(writer.operationId) {
      if (!ctx.log.append(base, begin)) {
        throw HsbloomException.concurrentOperation(s"another writer started an operation on index '${ctx.name}' at " +
          s"the same time (it wrote log entry ${begin.id} first); nothing was changed. Wait for that operation to " +
          "finish (its state shows in the index's description), then run this one again if it is still needed")
      }
      build match {
        case Some(b) => finish(begin, built(begin, b)(work), begin.dataVersion.toSeq)
        case None =>
          val done = try work catch {
            case e if NonFatal(e) || e.isInstanceOf[InterruptedException] =>
              onFailure.getOrElse((b: LogEntry, t: Throwable) => rollBack(b, t))(begin, e)
              throw e
          }
          finish(begin, done, Nil)
      }
    }

  /** Appends the completing entry; if someone cancelled meanwhile, removes the data versions `written` and throws. */
  private def finish(begin: LogEntry, done: LogEntry, written: Seq[Long]): LogEntry = {
    if (ctx.log.append(Some(begin), done)) return done
    written.foreach(ctx.deleteDataVersion)
    throw HsbloomException.concurrentOperation(s"${begin.operation} of index '${ctx.name}' was cancelled while it " +
      s"ran (log entry ${done.id} was written by another writer); its work was discarded")
  }

  private def built(begin: LogEntry, build: Operation.Build)(work: => LogEntry): LogEntry =
    try {
      // The group is ours alone now (we hold the transient entry): on failure, cancel its jobs.
      JobGroup.around(ctx.spark, JobGroup.id(begin.operation, ctx.name), build.description, cancelOnFailure = true)(work)
    } catch {
      case e if NonFatal(e) || e.isInstanceOf[InterruptedException] =>
        rollBack(begin, e)
        begin.dataVersion.filterNot(v => base.flatMap(_.dataVersion).contains(v)).foreach(ctx.deleteDataVersion)
        throw HsbloomException.buildFailed(s"${begin.operation} of index '${ctx.name}' failed, ${build.outcome} (its " +
          s"partial data was removed): ${SystemPath.firstLine(e, 500)}", e)
    }

  def rollBack(begin: LogEntry, cause: Throwable): Unit =
    Recovery.rollBack(ctx, begin, base, s"${begin.operation} failed: ${SystemPath.firstLine(cause, 500)}")
}

object Operation {
  /** How an operation's work writes a new data version: its jobs' description, and what a failure means ("so it was not created"). */
  final case class Build(description: String, outcome: String)
}
