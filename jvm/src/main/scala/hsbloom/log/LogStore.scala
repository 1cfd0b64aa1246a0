package hsbloom.log

import java.io.{ByteArrayOutputStream, FileNotFoundException}
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{FileAlreadyExistsException => NioFileExists, FileSystemException, Files, Paths, StandardOpenOption}
import java.util.UUID

import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException, FileSystem, Path}
import org.apache.hadoop.ipc.RemoteException

import hsbloom.format.Layout

/** A log entry over `Layout.MaxLogEntryBytes`: damage (or an attack), never parsed. */
final class LogEntryTooLargeException(path: String)
  extends java.io.IOException(s"log entry $path is larger than ${Layout.MaxLogEntryBytes} bytes, the most an entry may " +
    "have: it was not written by hsbloom")

/**
 * Storage of the operation log's entries (`OperationLog`): small files
 * created only if absent, so that of several writers racing for the same entry
 * exactly one wins.
 *
 * Hadoop's `create(path, overwrite = false)` is exclusive on HDFS (the NameNode
 * decides), but not on the local file system: `LocalFileSystem` checks that the
 * file is absent and then opens it for writing, so two writers can both
 * "succeed" and one silently overwrites the other. For `file:` paths this
 * object therefore goes around Hadoop and uses the operating system's atomic
 * primitive: the entry is written in full to a hidden temporary file in the
 * same directory, then hard-linked to its final name (`link(2)` fails if the
 * name exists), so exactly one writer wins and a reader never sees a partial
 * entry. Where hard links are not supported, it falls back to an exclusive
 * create (`O_CREAT|O_EXCL`), which is still exclusive but lets a reader
 * briefly see a partial entry (readers tolerate an unreadable last entry).
 *
 * Other schemes go through `FileSystem.create(path, overwrite = false)`:
 * exclusive on HDFS; on object stores only as exclusive as the connector makes
 * it (see docs/design/log.md for S3).
 */
object LogStore {
  /** Writes `content` (UTF-8) at `path` unless an entry is there; true iff this call created it. */
  def createIfAbsent(path: String, content: String, conf: Configuration): Boolean = {
    val (fs, qualified) = resolve(path, conf)
    val bytes = content.getBytes(UTF_8)
    if (qualified.toUri.getScheme == "file") createLocal(qualified, bytes)
    else createWithHadoop(fs, qualified, bytes)
  }

  /**
   * The entry at `path` as text, or null when there is none. An entry larger
   * than `Layout.MaxLogEntryBytes` is not one hsbloom wrote: it is refused
   * (`LogEntryTooLargeException`) after reading at most one byte more than
   * the bound, whatever size the file system reports.
   */
  def read(path: String, conf: Configuration): String = {
    val (fs, qualified) = resolve(path, conf)
    val in = try fs.open(qualified) catch { case _: FileNotFoundException => return null }
    try {
      val out = new ByteArrayOutputStream()
      val buffer = new Array[Byte](64 * 1024)
      var n = in.read(buffer)
      while (n >= 0) {
        out.write(buffer, 0, n)
        if (out.size > Layout.MaxLogEntryBytes) throw new LogEntryTooLargeException(qualified.toString)
        n = in.read(buffer)
      }
      new String(out.toByteArray, UTF_8)
    } finally in.close()
  }

  private val EntryName = "([0-9]{1,20})\\.json".r

  /** N for a log entry's file name `<N, 20 digits>.json` with N a Long, else None (not an entry). */
  def entryId(fileName: String): Option[Long] = fileName match {
    case EntryName(n) => Try(n.toLong).toOption
    case _ => None
  }

  /** Names of the visible files in directory `dir` (not starting with '.' or '_'); empty if it is absent. */
  def list(dir: String, conf: Configuration): Array[String] = {
    val (fs, qualified) = resolve(dir, conf)
    val statuses = try fs.listStatus(qualified) catch { case _: FileNotFoundException => return Array.empty }
    statuses.filter(_.isFile).map(_.getPath.getName)
      .filterNot(n => n.startsWith(".") || n.startsWith("_")).sorted
  }

  private def resolve(path: String, conf: Configuration): (FileSystem, Path) = {
    val p = new Path(path)
    val fs = p.getFileSystem(conf)
    (fs, fs.makeQualified(p))
  }

  private def createLocal(path: Path, bytes: Array[Byte]): Boolean = {
    val target = Paths.get(path.toUri)
    Files.createDirectories(target.getParent)
    val temp = target.resolveSibling(s".${target.getFileName}.${UUID.randomUUID()}.tmp")
    try {
      val channel = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
      try {
        val buffer = ByteBuffer.wrap(bytes)
        while (buffer.hasRemaining) channel.write(buffer)
        channel.force(true)
      } finally channel.close()
      try {
        Files.createLink(target, temp)
        true
      } catch {
        case _: NioFileExists => false
        case _: UnsupportedOperationException | _: FileSystemException if !Files.exists(target) =>
          createLocalExclusive(target, bytes)
      }
    } finally Files.deleteIfExists(temp)
  }

  /** The fallback without hard links: one exclusive create, then the content. */
  private def createLocalExclusive(target: java.nio.file.Path, bytes: Array[Byte]): Boolean = {
    val channel =
      try FileChannel.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
      catch { case _: NioFileExists => return false }
    try {
      val buffer = ByteBuffer.wrap(bytes)
      while (buffer.hasRemaining) channel.write(buffer)
      channel.force(true)
    } finally channel.close()
    true
  }

  private def createWithHadoop(fs: FileSystem, path: Path, bytes: Array[Byte]): Boolean = {
    val out =
      try fs.create(path, false)
      catch {
        case _: FileAlreadyExistsException => return false
        case e: RemoteException
            if Set("org.apache.hadoop.fs.FileAlreadyExistsException",
              "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException").contains(e.getClassName) =>
          return false
      }
    try out.write(bytes) finally out.close()
    true
  }
}
