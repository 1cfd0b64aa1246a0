package hsbloom.log

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import hsbloom.HsbloomException
import hsbloom.format.{Layout, LogEntry, LogJson, State}

/**
 * The operation log of one index: its entries, numbered from 0 without gaps, each created only if absent
 * (`LogStore`), so that of several writers racing for the same entry exactly one wins and the others learn
 * they lost. The protocol every operation follows on top of it is `hsbloom.operations.Operation`.
 */
final class OperationLog(val indexName: String, val logPath: Path, conf: Configuration) {

  def entryPath(id: Long): Path = new Path(logPath, s"%0${Layout.LogEntryDigits}d.json".format(id))

  /** The ids of the entries in the log directory, ascending (files named `<N, 20 digits>.json`, N a Long). */
  def ids(): Seq[Long] = LogStore.list(logPath.toString, conf).toSeq.flatMap(LogStore.entryId).sorted

  private def fix: String =
    s"If no operation on index '$indexName' is running, remove it with DROP BLOOMFILTER INDEX `$indexName` FORCE " +
      s"(Python: delete_index('$indexName', force=True)), then vacuum it, and create it again"

  /**
   * Entry `id`, every field checked; anything that is not an entry hsbloom wrote (missing, too large,
   * unparseable, a field of the wrong type or out of range, another id) is `HsbloomException.CorruptLog`.
   */
  def read(id: Long): LogEntry = {
    val path = entryPath(id)
    val text = try LogStore.read(path.toString, conf) catch {
      case e: LogEntryTooLargeException => throw HsbloomException.corruptLog(s"${e.getMessage}. $fix", e)
    }
    if (text == null) throw HsbloomException.corruptLog(s"log entry $path does not exist. $fix")
    val entry = try LogJson.parse(text) catch {
      case NonFatal(e) => throw HsbloomException.corruptLog(
        s"log entry $path is unreadable (${String.valueOf(e.getMessage).take(200)}); it may still be being written. $fix", e)
    }
    if (entry.id != id) throw HsbloomException.corruptLog(s"log entry $path claims to be entry ${entry.id}. $fix")
    entry
  }

  /** The newest entry, stable or not (None for an empty log). */
  def latest(): Option[LogEntry] = ids().lastOption.map(read)

  /** The newest stable entry: what readers use. A last entry still being written (unreadable) is skipped. */
  def latestStable(): Option[LogEntry] = {
    val newestFirst = ids().reverse
    newestFirst.iterator.zipWithIndex.map { case (id, position) =>
      try Some(read(id)) catch { case e: HsbloomException if position == 0 => None }
    }.collectFirst { case Some(e) if e.state.stable => e }
  }

  /** Every entry, oldest first. */
  def entries(): Seq[LogEntry] = ids().map(read)

  /** Writes `entry` right after `previous` (None: as the first); false if another writer already wrote that id. */
  def append(previous: Option[LogEntry], entry: LogEntry): Boolean = {
    val expected = previous.map(_.id + 1).getOrElse(0L)
    require(entry.id == expected, s"entry ${entry.id} cannot follow entry ${previous.map(_.id).getOrElse("(none)")}")
    State.checkTransition(previous.map(_.state), entry.state)
    LogSteps.beforeAppend(previous.map(_.state), entry.state)
    val written = create(entry)
    LogSteps.afterAppend(entry.state, written)
    written
  }

  /** Writes `entry` at its id whatever comes before it (a forced delete after an unreadable entry). */
  def appendUnchecked(entry: LogEntry): Boolean = create(entry)

  /** Writes `entry` unless its id exists; an entry readers would refuse as too large is never written. */
  private def create(entry: LogEntry): Boolean = {
    val text = LogJson.write(entry)
    val size = text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length
    if (size > Layout.MaxLogEntryBytes) {
      throw HsbloomException.indexState(s"log entry ${entry.id} of index '$indexName' would be $size bytes, more than " +
        s"the ${Layout.MaxLogEntryBytes} an entry may have; it was not written. A quick refresh records every new " +
        "file in the log: refresh the index in incremental mode instead")
    }
    LogStore.createIfAbsent(entryPath(entry.id).toString, text, conf)
  }
}
