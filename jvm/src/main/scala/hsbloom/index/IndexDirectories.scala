package hsbloom.index

import java.io.{FileNotFoundException, IOException}
import java.nio.file.{Files, LinkOption, Paths}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}

import hsbloom.format.Layout

/**
 * The only deletes hsbloom makes under the system path: a data directory
 * `v__=N` of one index, or a directory inside one. Whoever can write the
 * system path can write a log entry, so a delete is never of a path taken
 * from storage: the caller gives a version, which must be in range
 * (`Layout.versionDir`), and the directory is built here as a direct child of
 * the index directory. No link is followed out: a link where a data directory
 * should be is removed as a link, and an index directory that is itself a
 * link is refused (docs/security.md).
 */
object IndexDirectories {

  /** Removes data version `version` of the index at `indexPath` (nothing when absent); true iff it was there. */
  def deleteVersion(indexPath: String, version: Long, conf: Configuration): Boolean =
    delete(versionPath(indexPath, version, conf), conf)

  /**
   * Removes `child`, a directory hsbloom writes inside data version `version`
   * (an incremental refresh's staging directory): a single name, neither
   * empty nor `.` or `..`, nor holding a separator.
   */
  def deleteInVersion(indexPath: String, version: Long, child: String, conf: Configuration): Boolean = {
    require(child.nonEmpty && child != "." && child != ".." && !child.contains('/') && !child.contains('\\'),
      s"'$child' is not a single directory name")
    val parent = versionPath(indexPath, version, conf)
    if (isLink(parent, conf)) throw new IOException(s"data directory $parent is a symbolic link; hsbloom does not " +
      "write through links: remove it and run the operation again")
    delete(new Path(parent, child), conf)
  }

  /** The data directory of `version`, after checking that the index directory is not a link. */
  private def versionPath(indexPath: String, version: Long, conf: Configuration): Path = {
    val index = new Path(indexPath)
    if (isLink(index, conf)) {
      throw new IOException(s"index directory $index is a symbolic link; hsbloom does not follow links out of the " +
        "system path. Replace the link by the directory it points to, or remove it")
    }
    new Path(index, Layout.versionDir(version))
  }

  /** Where `path` is: absent, a link, or anything else. */
  private sealed trait Found
  private case object Absent extends Found
  private case object Link extends Found
  private case object Entry extends Found

  /**
   * What is at `path`, without following a link. Local paths are asked of the
   * operating system: Hadoop's local file systems report a `file:` path that
   * is a link as no link.
   */
  private def find(path: Path, conf: Configuration): Found = {
    val fs: FileSystem = path.getFileSystem(conf)
    val qualified = fs.makeQualified(path)
    if (qualified.toUri.getScheme == "file") {
      val local = Paths.get(qualified.toUri)
      if (Files.isSymbolicLink(local)) Link else if (Files.exists(local, LinkOption.NOFOLLOW_LINKS)) Entry else Absent
    } else {
      val status: Option[FileStatus] = try Some(fs.getFileLinkStatus(qualified)) catch {
        case _: FileNotFoundException => None
        case _: UnsupportedOperationException => try Some(fs.getFileStatus(qualified)) catch {
          case _: FileNotFoundException => None
        }
      }
      status.map(s => if (s.isSymlink) Link else Entry).getOrElse(Absent)
    }
  }

  private def isLink(path: Path, conf: Configuration): Boolean = find(path, conf) == Link

  /** Removes `path`: a link as a link (what it points to stays), a directory with everything in it. */
  private def delete(path: Path, conf: Configuration): Boolean = {
    val fs: FileSystem = path.getFileSystem(conf)
    val qualified = fs.makeQualified(path)
    find(qualified, conf) match {
      case Absent => false
      case Link =>
        if (qualified.toUri.getScheme == "file") Files.delete(Paths.get(qualified.toUri)) // the link, not its target
        else fs.delete(qualified, false)
        true
      case Entry => fs.delete(qualified, true) // Hadoop removes links inside a directory as links
    }
  }
}
