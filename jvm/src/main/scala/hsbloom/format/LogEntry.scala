package hsbloom.format

import hsbloom.{BFIndexConfig, BuildInfo}

/**
 * One step of an index's history: entry `id` of its operation log (docs/design/log.md). Stable entries carry
 * everything a reader needs (the config, the source, the data version and its summary), copied from the entry
 * before them, so a reader only ever reads one entry. DOESNOTEXIST entries carry no config, source or data.
 */
final case class LogEntry(
    id: Long,
    state: State,
    /** create, delete, restore, vacuum, refresh, cancel. */
    operation: String,
    writer: Writer,
    timestampMs: Long = System.currentTimeMillis(),
    hsbloomVersion: String = BuildInfo.version,
    config: Option[BFIndexConfig] = None,
    source: Option[IndexSource] = None,
    /** N of the newest data directory `v__=N` the version reads. */
    dataVersion: Option[Long] = None,
    /** That directory, qualified: for people only, never used as a path (readers derive it from the version). */
    dataPath: Option[String] = None,
    /** The data versions the version reads, oldest first, ending with `dataVersion`; None: `dataVersion` alone. */
    dataParts: Option[Seq[Long]] = None,
    /** File ids of the parts' tables the version no longer holds (deleted or changed files). */
    droppedFileIds: Seq[Long] = Nil,
    /** How the data is stored (`Layout.DataLayout`); None: an older hsbloom's layout. */
    dataLayout: Option[Int] = None,
    summary: Option[Summary] = None,
    /** Why a rollback or cancel happened. */
    message: Option[String] = None,
    /** Source changes a quick refresh recorded that the data does not hold yet. */
    pending: Option[PendingChanges] = None) {

  /** The data versions this entry's index version reads, oldest first (one for most versions). */
  def parts: Seq[Long] = dataParts.filter(_.nonEmpty).getOrElse(dataVersion.toSeq)

  /**
   * (the file filters' fpp, the global filter's and zones' fpp) of this version: as built (the summary), else as
   * configured (entries written before the fpp was sized from the file count), else the default.
   */
  def fpps: (Double, Double) = {
    val configured = config.flatMap(_.fpp).getOrElse(BFIndexConfig.DefaultFpp)
    (summary.flatMap(_.fileFpp).getOrElse(configured), summary.flatMap(_.sharedFpp).getOrElse(configured))
  }

  /** The next entry: this one's content with a new id, state, operation, writer and time, and no message. */
  def successor(state: State, operation: String, writer: Writer): LogEntry =
    copy(id = id + 1, state = state, operation = operation, writer = writer, timestampMs = System.currentTimeMillis(),
      hsbloomVersion = BuildInfo.version, message = None)
}

object LogEntry {
  /** A DOESNOTEXIST entry after `after` (a vacuumed, never created or force-deleted index). */
  def nothingAfter(afterId: Long, writer: Writer, operation: String, message: Option[String] = None): LogEntry =
    LogEntry(id = afterId + 1, state = State.DoesNotExist, operation = operation, writer = writer, message = message)
}
