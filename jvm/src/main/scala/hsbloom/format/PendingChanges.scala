package hsbloom.format

/** A source file by its fingerprint: path as listed, size in bytes, modification time in ms. */
final case class FileFingerprint(path: String, size: Long, mtime: Long)

/**
 * Source changes a quick refresh found and recorded, which the index data does not reflect yet. Queries need
 * nothing from this (a file the data does not hold is read, a deleted file is not listed); it tells users how
 * stale the data is and which table version the source was last compared at.
 */
final case class PendingChanges(
    /** When the source was compared, ms since the epoch. */
    checkedMs: Long,
    /** The Delta version compared (None for other formats). */
    deltaVersion: Option[Long],
    /** Files the data does not hold: every query reads them. */
    appended: Seq[FileFingerprint],
    /** Files the version holds that are gone or changed. */
    deletedFileIds: Seq[Long])
