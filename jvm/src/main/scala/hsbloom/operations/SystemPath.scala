package hsbloom.operations

import java.util.UUID

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession

import hsbloom.HsbloomException
import hsbloom.conf.HsbloomConf
import hsbloom.format.Layout

/**
 * Checks that the system path can hold indexes, made before an operation writes anything. Each failure is
 * `HsbloomException.SystemPath` naming the path, what is wrong and the fix: an unknown scheme, a path that is
 * (or lies under) a regular file, a directory this session cannot write (found by writing and removing a probe
 * file, since permission bits say nothing for root or for object stores), and a system path inside the source's
 * directory or containing it (index directories inside a table would become part of it, and an index must never
 * break the data it indexes).
 */
object SystemPath {
  private val Fix = s"set ${HsbloomConf.SystemPath.key} to a directory this session can create and write"

  /** The session's system path with scheme and authority. */
  def qualified(spark: SparkSession): Path = {
    val configured = Layout.systemPath(spark)
    try {
      val p = new Path(configured)
      p.getFileSystem(spark.sessionState.newHadoopConf()).makeQualified(p)
    } catch {
      case NonFatal(e) => throw HsbloomException.systemPath(s"the system path '$configured' cannot be used: " +
        s"${firstLine(e)}; $Fix (a local path, or a URI of a file system Hadoop is configured for: hdfs://, s3a://, " +
        "abfss://)", e)
    }
  }

  /** Creates `root` if needed and writes and removes a hidden probe file in it. */
  def checkWritable(ctx: IndexContext): Unit = {
    val root = ctx.systemPath
    try {
      val fs = root.getFileSystem(ctx.conf)
      var ancestor = root
      while (ancestor != null && !fs.exists(ancestor)) ancestor = ancestor.getParent
      if (ancestor != null && !fs.getFileStatus(ancestor).isDirectory) {
        val where = if (ancestor == root) "is" else s"lies under '$ancestor', which is"
        throw HsbloomException.systemPath(s"the system path '$root' $where a regular file, not a directory; $Fix")
      }
      if (!fs.mkdirs(root)) throw HsbloomException.systemPath(s"the system path '$root' could not be created; $Fix")
      val probe = new Path(root, s".hsbloom-probe-${UUID.randomUUID().toString.replace("-", "")}")
      fs.create(probe, false).close()
      fs.delete(probe, false)
    } catch {
      case e: HsbloomException => throw e
      case NonFatal(e) => throw HsbloomException.systemPath(s"the system path '$root' is not writable: ${firstLine(e)}; $Fix", e)
    }
  }

  /** Refuses a system path inside one of `sourceRoots` or containing one. */
  def checkApartFromSource(ctx: IndexContext, sourceRoots: Seq[String]): Unit = {
    val mine = normalized(ctx.systemPath.toString)
    sourceRoots.foreach { sourceRoot =>
      val p = new Path(sourceRoot)
      val theirs = normalized(p.getFileSystem(ctx.conf).makeQualified(p).toString)
      if (mine == theirs || mine.startsWith(theirs + "/")) {
        throw HsbloomException.systemPath(s"the system path '${ctx.systemPath}' is inside the source's directory " +
          s"'$sourceRoot': index files there would become part of the table and break reading it; $Fix outside the table")
      }
      if (theirs.startsWith(mine + "/")) {
        throw HsbloomException.systemPath(s"the system path '${ctx.systemPath}' contains the source's directory " +
          s"'$sourceRoot': an index named like a directory on the way to the table would be written into it; $Fix " +
          "apart from the table")
      }
    }
  }

  private def normalized(path: String): String = path.replaceAll("/+$", "") match { case "" => "/"; case p => p }

  /** The head of an exception's message (its full trace stays on the cause). */
  def firstLine(e: Throwable, limit: Int = 300): String = {
    val text = Option(e.toString).map(_.trim).filter(_.nonEmpty).map(_.linesIterator.next()).getOrElse(e.getClass.getSimpleName)
    if (text.length <= limit) text else text.take(limit) + "..."
  }
}
