package hsbloom.operations

import java.io.FileNotFoundException

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.spark.sql.SparkSession

import hsbloom.{BFIndexConfig, HsbloomException}
import hsbloom.conf.HsbloomConf
import hsbloom.format.Layout
import hsbloom.index.{IndexDirectories, IndexPermissions}
import hsbloom.log.{IndexLog, OperationLog}

/**
 * The session and the paths, file system and log of one index. Every path is made here from the system path
 * (the session's setting, qualified) and the index's name (validated as at creation) and versions (checked by
 * `Layout.versionDir`), never from what storage holds.
 */
final class IndexContext private (val spark: SparkSession, val name: String, val systemPath: Path) {
  val conf: Configuration = spark.sessionState.newHadoopConf()
  val indexPath: Path = new Path(systemPath, name)
  lazy val fs: FileSystem = indexPath.getFileSystem(conf)
  val log: OperationLog = new OperationLog(name, new Path(indexPath, Layout.LogDir), conf)

  /** The data directory `v__=N` of data version `version` (a version out of range is refused). */
  def dataPath(version: Long): Path = IndexLog.dataDirectory(indexPath, version)

  /** The versions of the index's data directories on storage. */
  def versionDirectories(): Set[Long] =
    try fs.listStatus(indexPath).filter(_.isDirectory).flatMap(s => Layout.versionOf(s.getPath.getName)).toSet
    catch { case _: FileNotFoundException => Set.empty }

  /** Removes data version `version` (nothing when absent): through `IndexDirectories`, the only deletes hsbloom makes. */
  def deleteDataVersion(version: Long): Unit = IndexDirectories.deleteVersion(indexPath.toString, version, conf)

  /** Removes `child`, a directory hsbloom writes inside data version `version`. */
  def deleteInDataVersion(version: Long, child: String): Unit =
    IndexDirectories.deleteInVersion(indexPath.toString, version, child, conf)

  def exists(path: Path): Boolean = path.getFileSystem(conf).exists(path)

  /**
   * Gives the index directory its source's permission (creating it closed if absent) before an operation writes
   * anything: read access to an index is read access to membership of the indexed values (docs/security.md).
   * With `Missing.Close`, a root that is gone closes the index to its owner instead of failing.
   */
  def giveSourcePermission(sourceRoots: Seq[String],
      missing: IndexPermissions.Missing = IndexPermissions.Missing.Fail): Unit = {
    val setting = try HsbloomConf.IndexPermissions.get(spark) catch {
      case e: IllegalArgumentException => throw HsbloomException.indexPermissions(e.getMessage, e)
    }
    if (setting == HsbloomConf.PermissionsInherit) return
    try IndexPermissions(indexPath, sourceRoots.map(new Path(_)), conf, missing)
    catch { case NonFatal(e) => throw HsbloomException.indexPermissions(String.valueOf(e.getMessage), e) }
  }
}

object IndexContext {
  /** The index `name` of the session's system path; the name is checked as at creation. */
  def open(spark: SparkSession, name: String): IndexContext = {
    BFIndexConfig.validateName(name)
    new IndexContext(spark, name, SystemPath.qualified(spark))
  }
}
