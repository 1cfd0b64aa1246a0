package hsbloom.format

/**
 * One source file of an index: its id in the version's tables (a build numbers its listing from 0), its path as the
 * file index lists it, its size in bytes and its modification time in ms. A build takes it from the source's
 * listing (`Sources`), a refresh from the version's file tables (`SourceListing`) or from an older entry's list.
 */
final case class SourceFile(fileId: Long, path: String, size: Long, mtime: Long) {
  def fingerprint: FileFingerprint = FileFingerprint(path, size, mtime)
}
