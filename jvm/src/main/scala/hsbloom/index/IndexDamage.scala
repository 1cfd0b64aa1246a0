package hsbloom.index

import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import hsbloom.format.FileKey
import hsbloom.shim.CollectionConverters._


/**
 * Damage to index files that this JVM found while using them (a checksum that
 * failed, a file that is missing or cut short), by data directory. Whatever
 * found it has already stopped trusting the damaged bytes (their files are
 * read); this record is what `hs.index(name)` reports, and the one warning per
 * damaged file is logged here.
 */
object IndexDamage {
  private val log = LoggerFactory.getLogger(getClass)
  // data directory key -> (file -> problem)
  private val found = new ConcurrentHashMap[String, ConcurrentHashMap[String, String]]()

  /** The data directory (`v__=N`) a file of `files/`, `blocks/` or `global/` belongs to. */
  private def directoryOf(file: Path): Path = file.getParent.getParent

  private def key(dataPath: String): String = FileKey.listed(dataPath)

  /** Records `problem` for `file` (under a version's data directory); warns the first time per file. */
  def record(file: Path, problem: String): Unit = record(directoryOf(file), file, problem)

  /** Records `problem` for `file` (or directory) of the data directory `dataPath`. */
  def record(dataPath: Path, file: Path, problem: String): Unit = {
    val files = found.computeIfAbsent(key(dataPath.toString), _ => new ConcurrentHashMap[String, String]())
    if (files.putIfAbsent(file.toString, problem) == null) {
      log.warn(s"hsbloom: damaged index file $file: $problem. The source files it covers are read (no pruning " +
        "from it). Run hs.verify_index(name) for a full check; to rebuild the index: delete_index(name, " +
        "force=True), vacuum_index(name), create_index (docs/troubleshooting.md)")
    }
  }

  /** What was found in the data directories `dataPaths`: `file -> problem`, sorted by file. */
  def of(dataPaths: Seq[String]): Seq[(String, String)] =
    dataPaths.flatMap(p => Option(found.get(key(p))).toSeq.flatMap(_.asScala.toSeq)).sortBy(_._1)

  /** Forgets what was found (tests; a data directory's content never changes, but it can be vacuumed). */
  def clear(): Unit = found.clear()
}
