package hsbloom.operations

import org.apache.spark.sql.SparkSession
import org.slf4j.LoggerFactory

import hsbloom.HsbloomException
import hsbloom.format.{LogEntry, Writer}

/**
 * The forced delete: the way out for an index whose log cannot be followed any more. A normal delete needs a
 * readable latest entry in a state that allows it; when the latest entry is damaged, or an operation of a
 * writer that is not provably dead holds the index, the forced delete appends a DOESNOTEXIST entry after
 * whatever the latest entry is, without reading it. Queries stop using the index at once; vacuum then removes
 * its data, and the name is free. A writer still running loses the race for its completing entry.
 */
object ForceDelete {
  /** How a forced delete's entry begins its message (verify looks for it). */
  val Message = "force-deleted"
  private val logger = LoggerFactory.getLogger(getClass)

  def apply(spark: SparkSession, name: String): LogEntry = {
    val ctx = IndexContext.open(spark, name)
    val ids = ctx.log.ids()
    var damaged = ""
    val latest = ids.lastOption.flatMap { id =>
      try Some(ctx.log.read(id)) catch {
        case e: HsbloomException if e.condition == HsbloomException.CorruptLog =>
          damaged = s" (its latest log entry $id was unreadable: ${e.text.split("\\. If no", 2)(0)})"
          None
      }
    }
    val hasData = ctx.versionDirectories().nonEmpty
    if (ids.isEmpty && !hasData) throw HsbloomException.indexNotFound(s"index '$name' does not exist")
    if (latest.exists(_.state == hsbloom.format.State.DoesNotExist)) {
      throw HsbloomException.indexNotFound(
        if (hasData) s"index '$name' does not exist (already deleted); vacuuming it removes its leftover data"
        else s"index '$name' does not exist")
    }
    val entry = LogEntry.nothingAfter(ids.lastOption.getOrElse(-1L), Writer.current(), "delete", Some(s"$Message$damaged"))
    if (!ctx.log.appendUnchecked(entry)) {
      throw HsbloomException.concurrentOperation(s"could not force-delete index '$name': another writer wrote log " +
        s"entry ${entry.id} at the same time; try again")
    }
    logger.warn(s"hsbloom: index '$name' force-deleted at log entry ${entry.id}$damaged; vacuum removes its data")
    entry
  }
}
