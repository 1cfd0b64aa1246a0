package hsbloom.index

import java.io.{FileNotFoundException, IOException}
import java.nio.file.{Files, NoSuchFileException, Paths}
import java.nio.file.attribute.{PosixFileAttributes, PosixFilePermissions}

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}
import org.apache.hadoop.fs.permission.{AclEntry, AclEntryScope, AclEntryType, FsAction, FsPermission}
import org.apache.hadoop.ipc.RemoteException
import org.slf4j.LoggerFactory

import hsbloom.conf.HsbloomConf
import hsbloom.shim.CollectionConverters._

/**
 * Gives an index directory its source's permission (`spark.hsbloom.index.permissions`, docs/security.md).
 *
 * Read access to an index is read access to membership of the indexed values: whoever reads the filters can
 * confirm that a value is in the table. So the directory `<system path>/<name>` gets the permission of the
 * source's root directories, at create and at every refresh: their mode bits (of several roots, the
 * intersection), their group (when all share one) and their ACL entries (on file systems that have them).
 * Only the index directory is set: POSIX and HDFS check traversal at every lookup, so a closed directory
 * closes everything under it, whatever mode Spark writes the files with.
 *
 * What is copied never opens the index more than the source:
 *  - the owner is the user who writes the index and gets rwx (it read the whole source to index it, and must
 *    write and later refresh or delete the index);
 *  - a class (group, others, a named ACL entry) that cannot read the source's directory gets nothing: the
 *    index's paths can be guessed, the table's file names cannot; reading a root that is a file counts as
 *    reading a directory;
 *  - when the index cannot take the source's group (the roots' groups differ, or the writer is not a member),
 *    the index's group gets only what others get;
 *  - a source on another file system than the index (S3 and HDFS, two HDFS clusters) has users, groups and
 *    bits that mean nothing here: the index gets its owner only;
 *  - the directories above a root count too: a 755 table inside a 700 home is closed to everyone but its
 *    owner, and so is its index. A class keeps its bits only where every directory above lets every one of its
 *    members through (see `Reach`);
 *  - a root that no longer exists gives the owner only, where the operation allows it (`Missing.Close`: delete,
 *    restore and vacuum, which must work on the index of a table that is gone).
 *
 * The directory is created closed (its owner only) before anything is written in it, then opened to what the
 * source allows, never more than that at any moment. A failure throws `NotApplied`, naming the problem and
 * the fix, before the operation writes anything.
 */
object IndexPermissions {
  private val log = LoggerFactory.getLogger(getClass)

  /** A directory only its owner may use: how an index directory is created, and what a foreign source gives. */
  private val OwnerOnly = new FsPermission(FsAction.ALL, FsAction.NONE, FsAction.NONE)

  /**
   * A root of the source as read: its status, its ACL entries beyond the mode bits (None: its FS has no ACLs)
   * and which of the index's classes can reach it through the directories above it.
   */
  final case class Root(status: FileStatus, aclEntries: Option[Seq[AclEntry]], reach: Reach = Reach.Everyone)

  /**
   * Who can traverse every directory above a root, conservatively (a class that might be stopped counts as
   * stopped): the root's group (`group`) and everyone else, named ACL entries included (`others`).
   *
   * A user's access to a directory is decided by the first class that matches it: its owner's bits, a named ACL
   * entry, its group's bits (or a named group's entry), else the others' bits. Any user who is not the index's
   * owner may be any of these at a directory above, so others pass a directory only when its owner, group and
   * other bits all have `x` and no ACL entry lacks it. The root's group passes a directory of the same group
   * when the owner and group bits have `x`, and otherwise as others do.
   */
  final case class Reach(group: Boolean, others: Boolean)

  object Reach {
    val Everyone: Reach = Reach(group = true, others = true)

    /** The reach through the directories `above` (their statuses and extended ACL entries) of a root of group `group`. */
    def through(above: Seq[(FileStatus, Seq[AclEntry])], group: String): Reach =
      above.foldLeft(Everyone) { case (reach, (dir, acl)) =>
        val p = dir.getPermission
        val ownerAndGroup = p.getUserAction.implies(FsAction.EXECUTE) && p.getGroupAction.implies(FsAction.EXECUTE) &&
          acl.filter(_.getScope == AclEntryScope.ACCESS).forall(_.getPermission.implies(FsAction.EXECUTE))
        val others = ownerAndGroup && p.getOtherAction.implies(FsAction.EXECUTE)
        Reach(reach.group && ownerAndGroup && (others || dir.getGroup == group), reach.others && others)
      }
  }

  /** What a root that does not exist gives: a failure (create, refresh), or the owner only (delete, restore, vacuum). */
  sealed trait Missing
  object Missing {
    case object Fail extends Missing
    case object Close extends Missing
  }

  /**
   * What the index directory gets: its mode bits, the group they are meant for (None: no group can be given,
   * so the group bits are narrowed to the others') and the ACL entries beyond the bits, as
   * `FileSystem.getAclStatus` lists them (with named entries, the group bits are the ACL's mask).
   */
  final case class Target(permission: FsPermission, group: Option[String], aclEntries: Seq[AclEntry]) {
    override def toString: String =
      s"mode $permission, group ${group.getOrElse("(none in common)")}, ${aclEntries.size} ACL entries"
  }

  /** The permission could not be read from the source or given to the index directory. */
  final class NotApplied(message: String, cause: Throwable) extends IOException(message, cause)

  private val InheritFix = s"or set ${HsbloomConf.IndexPermissions.key} to ${HsbloomConf.PermissionsInherit} " +
    "and protect the system path yourself (docs/security.md)"

  /**
   * Gives `indexDir` the permission of the source's roots `sourceRoots`, creating it closed if absent, whatever
   * the setting (`IndexContext.giveSourcePermission` reads it, before an operation's first log entry).
   */
  def apply(indexDir: Path, sourceRoots: Seq[Path], conf: Configuration, missing: Missing = Missing.Fail): Unit = {
    val fs = indexDir.getFileSystem(conf)
    val dir = fs.makeQualified(indexDir)
    val above = scala.collection.mutable.Map.empty[Path, (FileStatus, Seq[AclEntry])] // shared by the roots
    val target = sourceRoots.map(read(fs, _, conf, missing, above)) match {
      case roots if roots.nonEmpty && roots.forall(_.isDefined) => of(roots.flatten)
      case _ => Target(OwnerOnly, None, Nil) // a root on another file system, or no root at all
    }
    try giveTo(fs, dir, target)
    catch {
      case NonFatal(e) => throw new NotApplied(s"cannot give the index directory $dir its source's permission " +
        s"($target): $e. Run hsbloom as the owner of that directory (or a superuser), $InheritFix", e)
    }
    log.debug(s"hsbloom: index directory $dir has its source's permission: $target")
  }

  /**
   * A root's status, ACL entries and reach; None when it is on another file system than the index, or (with
   * `Missing.Close`) does not exist. `above` keeps the directories above read so far: roots share most of them.
   */
  private def read(indexFs: FileSystem, root: Path, conf: Configuration, missing: Missing,
      above: scala.collection.mutable.Map[Path, (FileStatus, Seq[AclEntry])]): Option[Root] =
    try {
      val fs = root.getFileSystem(conf)
      if (fs.getUri != indexFs.getUri) None
      else {
        val qualified = fs.makeQualified(root)
        val status = statusOf(fs, qualified)
        val directoriesAbove = Iterator.iterate(qualified.getParent)(_.getParent).takeWhile(_ != null)
          .map(p => above.getOrElseUpdate(p, (statusOf(fs, p), aclEntries(fs, p).getOrElse(Nil)))).toList
        Some(Root(status, aclEntries(fs, qualified), Reach.through(directoriesAbove, status.getGroup)))
      }
    } catch {
      case _: FileNotFoundException if missing == Missing.Close => None
      case NonFatal(e) => throw new NotApplied(s"cannot read the permission of the source's directory $root ($e): " +
        s"it must exist and the user running hsbloom must be able to read its status, $InheritFix", e)
    }

  /** What the index gets from the roots of its source (all on the index's file system; at least one). */
  def of(roots: Seq[Root]): Target = {
    require(roots.nonEmpty, "a source has at least one root")
    // What a class (or a named ACL entry) may do with the index, from what it may do with a root.
    def asDirectory(root: Root, action: FsAction): FsAction =
      if (!action.implies(FsAction.READ)) FsAction.NONE
      else if (root.status.isDirectory) action
      else action.or(FsAction.EXECUTE)
    // A named entry passes the directories above as others do; the owning group's entry as the group does.
    def reached(root: Root, e: AclEntry): FsAction =
      if (if (isOwningGroup(e)) root.reach.group else root.reach.others) asDirectory(root, e.getPermission)
      else FsAction.NONE
    val entries = roots.map(r => r.aclEntries.getOrElse(Nil).map(e => withAction(e, reached(r, e))))
    val copied = entries.distinct match {
      case Seq(same) => same
      case _ => Nil // the roots' ACLs differ: none of them is known to hold for the others
    }
    // Where named entries are not copied, a root's group class is its owning group's entry, as the mask bounds it.
    val groupActions = roots.zip(entries).map { case (root, rootEntries) =>
      val bits = if (root.reach.group) asDirectory(root, root.status.getPermission.getGroupAction) else FsAction.NONE
      if (copied.nonEmpty) bits else rootEntries.find(isOwningGroup).fold(bits)(_.getPermission.and(bits))
    }
    val other = roots.map { r =>
      if (r.reach.others) asDirectory(r, r.status.getPermission.getOtherAction) else FsAction.NONE
    }.reduce(_.and(_))
    val groups = roots.map(_.status.getGroup).distinct
    val shared = if (groups.size == 1) Option(groups.head).filter(_.nonEmpty) else None
    Target(new FsPermission(FsAction.ALL, groupActions.reduce(_.and(_)), other), shared, copied)
  }

  /**
   * Creates `dir` closed if absent, then gives it `target`, never more open than `target` on the way. What is
   * already as it should be is not written again (on HDFS every change is a NameNode edit; refreshes are many).
   */
  private def giveTo(fs: FileSystem, dir: Path, target: Target): Unit = {
    val status = try statusOf(fs, dir) catch {
      case _: FileNotFoundException =>
        fs.mkdirs(dir, OwnerOnly)
        fs.setPermission(dir, OwnerOnly) // mkdirs applies the umask
        statusOf(fs, dir)
    }
    var mode = status.getPermission
    def setMode(permission: FsPermission): Unit = if (permission != mode) {
      fs.setPermission(dir, permission)
      mode = permission
    }
    val narrowed = narrow(target.permission)
    val hasGroup = target.group match {
      case None => false
      case Some(group) if group == status.getGroup => true
      case Some(group) =>
        setMode(narrowed) // whichever group the directory has meanwhile gets only what others get
        try { fs.setOwner(dir, null, group); true }
        catch { case _: IOException => false } // not a member of the group: the index keeps its own, narrowed
    }
    val permission = if (hasGroup) target.permission else narrowed
    val entries = if (hasGroup) target.aclEntries else target.aclEntries.map { e =>
      if (isOwningGroup(e)) withAction(e, e.getPermission.and(permission.getOtherAction)) else e
    }
    aclEntries(fs, dir) match {
      case None => setMode(permission)
      case Some(current) if entries.nonEmpty =>
        if (current.toSet != entries.toSet || mode != permission) fs.setAcl(dir, wholeAcl(permission, entries).asJava)
      case Some(current) if current.nonEmpty => // e.g. taken from the system path's default ACL
        fs.removeAcl(dir)
        fs.setPermission(dir, permission)
      case Some(_) => setMode(permission)
    }
  }

  /**
   * A path's status with its mode bits and group. On `file:` the JVM reads them itself: without its native
   * library (as in pyspark), Hadoop's local file system forks `stat` for them, about 10 ms a path.
   */
  private def statusOf(fs: FileSystem, path: Path): FileStatus =
    if (path.toUri.getScheme != "file") fs.getFileStatus(path)
    else {
      val attributes = try Files.readAttributes(Paths.get(path.toUri), classOf[PosixFileAttributes])
      catch { case e: NoSuchFileException => throw new FileNotFoundException(s"$path does not exist ($e)") }
      val mode = FsPermission.valueOf("-" + PosixFilePermissions.toString(attributes.permissions))
      new FileStatus(0, attributes.isDirectory, 1, 0, 0, 0, mode, attributes.owner.getName, attributes.group.getName,
        path)
    }

  /** `permission` whose group gets only what others get: for a group the source did not name. */
  private def narrow(permission: FsPermission): FsPermission =
    new FsPermission(permission.getUserAction, permission.getGroupAction.and(permission.getOtherAction),
      permission.getOtherAction)

  private def isOwningGroup(e: AclEntry): Boolean =
    e.getScope == AclEntryScope.ACCESS && e.getType == AclEntryType.GROUP && e.getName == null

  /**
   * The whole ACL `setAcl` takes: the base entries from the mode bits and the extended entries, as HDFS stores
   * them (with extended access entries, the group bits are the mask; else the owning group's).
   */
  private def wholeAcl(permission: FsPermission, extended: Seq[AclEntry]): Seq[AclEntry] = {
    val groupKind = if (extended.exists(_.getScope == AclEntryScope.ACCESS)) AclEntryType.MASK else AclEntryType.GROUP
    Seq(entry(AclEntryType.USER, permission.getUserAction), entry(groupKind, permission.getGroupAction),
      entry(AclEntryType.OTHER, permission.getOtherAction)) ++ extended
  }

  private def entry(kind: AclEntryType, action: FsAction): AclEntry =
    new AclEntry.Builder().setScope(AclEntryScope.ACCESS).setType(kind).setPermission(action).build()

  private def withAction(e: AclEntry, action: FsAction): AclEntry =
    new AclEntry.Builder().setScope(e.getScope).setType(e.getType).setName(e.getName).setPermission(action).build()

  /** The ACL entries beyond the mode bits; None where the file system has no ACLs. */
  private def aclEntries(fs: FileSystem, path: Path): Option[Seq[AclEntry]] =
    try Some(fs.getAclStatus(path).getEntries.asScala.toSeq)
    catch {
      case _: UnsupportedOperationException => None // the local file system, object stores
      case e: IOException if className(e) == "org.apache.hadoop.hdfs.protocol.AclException" =>
        None // HDFS with dfs.namenode.acls.enabled=false: no path has ACL entries
    }

  /** An exception's class, or for one the server sent, the server's. */
  private def className(e: IOException): String = e match {
    case remote: RemoteException => remote.getClassName
    case _ => e.getClass.getName
  }
}
