package hsbloom.index

import java.net.URI
import java.nio.file.Files
import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path, RawLocalFileSystem}
import org.apache.hadoop.fs.permission.{AclEntry, AclEntryScope, AclEntryType, AclStatus, FsAction, FsPermission}
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.index.IndexPermissions.{Reach, Root, Target}
import hsbloom.shim.CollectionConverters._

/** The local file system under the scheme `other:`: to Hadoop, another file system than `file:`. */
class OtherLocalFileSystem extends RawLocalFileSystem {
  override def getUri: URI = URI.create("other:///")
}

/**
 * The local file system under the scheme `acl:`, with ACL entries kept in memory as HDFS keeps them (the
 * extended entries; `setAcl` takes the base ones too): the local file system has no ACLs to test with.
 */
class AclLocalFileSystem extends RawLocalFileSystem {
  override def getUri: URI = URI.create("acl:///")
  private def key(p: Path): String = p.toUri.getPath
  private lazy val local = {
    val fs = new RawLocalFileSystem()
    fs.initialize(URI.create("file:///"), new Configuration())
    fs
  }
  // The local status reads the permission through a `file:` path only.
  override def getFileStatus(p: Path): FileStatus = local.getFileStatus(new Path("file://" + key(p)))
  override def getAclStatus(p: Path): AclStatus = new AclStatus.Builder().owner("").group("")
    .addEntries(AclLocalFileSystem.entries.getOrDefault(key(p), Nil).asJava).build()
  override def setAcl(p: Path, spec: java.util.List[AclEntry]): Unit = {
    val base = Set(AclEntryType.USER, AclEntryType.MASK, AclEntryType.OTHER)
    AclLocalFileSystem.entries.put(key(p), spec.asScala.toSeq.filterNot(e => e.getName == null && base(e.getType)))
    AclLocalFileSystem.specs.put(key(p), spec.asScala.toSeq)
  }
  override def removeAcl(p: Path): Unit = AclLocalFileSystem.entries.remove(key(p))
}

object AclLocalFileSystem {
  val entries = new ConcurrentHashMap[String, Seq[AclEntry]]()
  val specs = new ConcurrentHashMap[String, Seq[AclEntry]]() // the last whole ACL given to setAcl
}

class IndexPermissionsSuite extends AnyFunSuite {
  private def mode(octal: String): FsPermission = new FsPermission(octal)

  private def root(permission: String, group: String, isDirectory: Boolean = true,
      acl: Option[Seq[AclEntry]] = None): Root =
    Root(new FileStatus(0, isDirectory, 1, 0, 0, 0, mode(permission), "alice", group, new Path("/t")), acl)

  private def entry(kind: AclEntryType, name: String, action: FsAction): AclEntry =
    new AclEntry.Builder().setScope(AclEntryScope.ACCESS).setType(kind).setName(name).setPermission(action).build()

  test("the index gets the roots' modes intersected, their group when all share it, and rwx for its owner") {
    def of(roots: Root*): Target = IndexPermissions.of(roots)
    assert(of(root("755", "staff")) == Target(mode("755"), Some("staff"), Nil))
    assert(of(root("555", "staff")) == Target(mode("755"), Some("staff"), Nil))
    assert(of(root("775", "staff"), root("750", "staff")) == Target(mode("750"), Some("staff"), Nil))
    assert(of(root("755", "staff"), root("755", "web")) == Target(mode("755"), None, Nil))
    assert(of(root("755", "staff"), root("700", "staff")).permission == mode("700"))
  }

  test("a class that cannot read the root gets nothing; reading a root file is reading a directory") {
    assert(IndexPermissions.of(Seq(root("711", "staff"))).permission == mode("700"))
    assert(IndexPermissions.of(Seq(root("733", "staff"))).permission == mode("700"))
    assert(IndexPermissions.of(Seq(root("644", "staff", isDirectory = false))).permission == mode("755"))
    assert(IndexPermissions.of(Seq(root("640", "staff", isDirectory = false))).permission == mode("750"))
    val traverseOnly = Some(Seq(entry(AclEntryType.USER, "dave", FsAction.EXECUTE)))
    assert(IndexPermissions.of(Seq(root("750", "staff", acl = traverseOnly))).aclEntries ==
      Seq(entry(AclEntryType.USER, "dave", FsAction.NONE)))
  }

  test("ACL entries are copied when every root has the same; else the group class is the owning group's entry") {
    val carol = entry(AclEntryType.USER, "carol", FsAction.READ_EXECUTE)
    val group = entry(AclEntryType.GROUP, null, FsAction.NONE)
    val acl = Some(Seq(carol, group))
    // With named entries, the group bits are the mask (r-x here), which bounds carol.
    assert(IndexPermissions.of(Seq(root("750", "staff", acl = acl), root("750", "staff", acl = acl))) ==
      Target(mode("750"), Some("staff"), Seq(carol, group)))
    // Roots with other entries: carol's is dropped, and the group gets what its own entry gives (nothing).
    assert(IndexPermissions.of(Seq(root("750", "staff", acl = acl), root("750", "staff", acl = Some(Nil)))) ==
      Target(mode("700"), Some("staff"), Nil))
  }

  test("a class reaches a root only through directories above that let every one of its members through") {
    def dir(permission: String, group: String, acl: AclEntry*): (FileStatus, Seq[AclEntry]) =
      (new FileStatus(0, true, 1, 0, 0, 0, mode(permission), "alice", group, new Path("/d")), acl)
    def through(above: (FileStatus, Seq[AclEntry])*): Reach = Reach.through(above, "staff")
    assert(through() == Reach.Everyone)
    assert(through(dir("755", "root"), dir("711", "root")) == Reach.Everyone)
    assert(through(dir("755", "root"), dir("700", "root")) == Reach(group = false, others = false)) // a closed home
    assert(through(dir("750", "staff")) == Reach(group = true, others = false))
    assert(through(dir("750", "web")) == Reach(group = false, others = false))
    assert(through(dir("705", "root")) == Reach(group = false, others = false)) // its group is stopped; so are we
    assert(through(dir("655", "staff")) == Reach(group = false, others = false)) // its owner is stopped
    val bobStopped = entry(AclEntryType.USER, "bob", FsAction.NONE)
    assert(through(dir("755", "staff", bobStopped)) == Reach(group = false, others = false))
    val defaultOnly = new AclEntry.Builder().setScope(AclEntryScope.DEFAULT).setType(AclEntryType.USER)
      .setName("bob").setPermission(FsAction.NONE).build()
    assert(through(dir("755", "staff", defaultOnly)) == Reach.Everyone) // a default entry governs new files only

    val acl = Some(Seq(entry(AclEntryType.USER, "carol", FsAction.READ_EXECUTE),
      entry(AclEntryType.GROUP, null, FsAction.READ_EXECUTE)))
    def of(reach: Reach): Target = IndexPermissions.of(Seq(root("755", "staff", acl = acl).copy(reach = reach)))
    assert(of(Reach.Everyone) == Target(mode("755"), Some("staff"), acl.get))
    assert(of(Reach(group = true, others = false)) == Target(mode("750"), Some("staff"),
      Seq(entry(AclEntryType.USER, "carol", FsAction.NONE), entry(AclEntryType.GROUP, null, FsAction.READ_EXECUTE))))
    assert(of(Reach(group = false, others = false)).permission == mode("700"))
  }

  private val conf = {
    val c = new Configuration()
    c.set("fs.other.impl", classOf[OtherLocalFileSystem].getName)
    c.set("fs.acl.impl", classOf[AclLocalFileSystem].getName)
    c
  }
  private val local = new RawLocalFileSystem() { initialize(URI.create("file:///"), conf) }

  private def directory(in: java.nio.file.Path, name: String, permission: String, group: String = "root"): Path = {
    val path = new Path(in.resolve(name).toUri)
    local.mkdirs(path)
    local.setOwner(path, null, group)
    local.setPermission(path, mode(permission))
    path
  }

  /** A temporary directory every user may traverse (the JVM makes them 700, which would close every root inside). */
  private def openDirectory(): java.nio.file.Path = {
    val dir = Files.createTempDirectory("permissions")
    local.setPermission(new Path(dir.toUri), mode("755"))
    dir
  }

  private def modeAndGroup(path: Path): (String, String) = {
    val status = local.getFileStatus(path)
    (status.getPermission.toString, status.getGroup)
  }

  // The tests below run as root, as CI does (setOwner to a group needs it); `daemon` is a group every Debian has.
  test("on the local file system: the index directory is created with the intersection and the shared group") {
    val dir = openDirectory()
    val roots = Seq(directory(dir, "a", "750", "daemon"), directory(dir, "b", "755", "daemon"))
    val index = new Path(dir.resolve("system/index").toUri)
    local.mkdirs(index.getParent)
    IndexPermissions.apply(index, roots, conf)
    assert(modeAndGroup(index) == ("rwxr-x---", "daemon"))
    val changed = Files.getAttribute(java.nio.file.Paths.get(index.toUri), "unix:ctime")
    Thread.sleep(20)
    IndexPermissions.apply(index, roots, conf) // nothing to change: nothing is written (the inode is unchanged)
    assert(Files.getAttribute(java.nio.file.Paths.get(index.toUri), "unix:ctime") == changed)

    local.setPermission(roots(1), mode("700")) // closed later: the next application closes the index
    IndexPermissions.apply(index, roots, conf)
    assert(modeAndGroup(index) == ("rwx------", "daemon"))
  }

  test("roots of different groups: the index keeps its own group, which gets only what others get") {
    val dir = openDirectory()
    val index = new Path(dir.resolve("index").toUri)
    IndexPermissions.apply(index, Seq(directory(dir, "a", "750", "daemon"), directory(dir, "b", "750")), conf)
    assert(modeAndGroup(index) == ("rwx------", "root"))
    IndexPermissions.apply(index, Seq(directory(dir, "c", "775", "daemon"), directory(dir, "d", "755")), conf)
    assert(modeAndGroup(index) == ("rwxr-xr-x", "root"))
  }

  test("on the local file system: a table in a closed directory gets a closed index; a gone table closes it") {
    val dir = openDirectory()
    val home = directory(dir, "home", "700")
    val table = directory(java.nio.file.Paths.get(home.toUri), "table", "755")
    val index = new Path(dir.resolve("index").toUri)
    IndexPermissions.apply(index, Seq(table), conf)
    assert(modeAndGroup(index) == ("rwx------", "root"))

    val team = directory(dir, "team", "750", "daemon")
    val shared = directory(java.nio.file.Paths.get(team.toUri), "table", "755", "daemon")
    IndexPermissions.apply(index, Seq(shared), conf)
    assert(modeAndGroup(index) == ("rwxr-x---", "daemon"))

    local.delete(shared, true)
    intercept[IndexPermissions.NotApplied](IndexPermissions.apply(index, Seq(shared), conf))
    IndexPermissions.apply(index, Seq(shared), conf, IndexPermissions.Missing.Close)
    assert(modeAndGroup(index)._1 == "rwx------")
  }

  test("a source on another file system gives its owner only, whatever its mode") {
    val dir = openDirectory()
    val source = directory(dir, "table", "755")
    val index = new Path(dir.resolve("index").toUri)
    IndexPermissions.apply(index, Seq(new Path("other://" + source.toUri.getPath)), conf)
    assert(modeAndGroup(index) == ("rwx------", "root"))
  }

  test("a root that cannot be read fails, naming the root and the way out") {
    val dir = openDirectory()
    val index = new Path(dir.resolve("index").toUri)
    val missing = new Path(dir.resolve("gone").toUri)
    val e = intercept[IndexPermissions.NotApplied](IndexPermissions.apply(index, Seq(missing), conf))
    assert(e.getMessage.contains(missing.toString))
    assert(e.getMessage.contains("spark.hsbloom.index.permissions to inherit"))
    assert(!local.exists(index))
  }

  test("on a file system with ACLs: the source's entries are copied, and entries the source has not are removed") {
    val dir = openDirectory()
    def onAcl(p: Path): Path = new Path("acl://" + p.toUri.getPath)
    val source = onAcl(directory(dir, "table", "750"))
    val carol = entry(AclEntryType.USER, "carol", FsAction.READ_EXECUTE)
    val group = entry(AclEntryType.GROUP, null, FsAction.READ_EXECUTE)
    AclLocalFileSystem.entries.put(source.toUri.getPath, Seq(carol, group))
    val index = onAcl(new Path(dir.resolve("index").toUri))
    IndexPermissions.apply(index, Seq(source), conf)
    val base = Seq(entry(AclEntryType.USER, null, FsAction.ALL), entry(AclEntryType.MASK, null, FsAction.READ_EXECUTE),
      entry(AclEntryType.OTHER, null, FsAction.NONE))
    assert(AclLocalFileSystem.specs.get(index.toUri.getPath).toSet == (base ++ Seq(carol, group)).toSet)

    AclLocalFileSystem.entries.remove(source.toUri.getPath) // the source's ACL removed: so is the index's
    IndexPermissions.apply(index, Seq(source), conf)
    assert(!AclLocalFileSystem.entries.containsKey(index.toUri.getPath))
    assert(modeAndGroup(new Path(index.toUri.getPath)) == ("rwxr-x---", "root"))
  }
}
