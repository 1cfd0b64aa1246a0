package hsbloom.conf

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.SparkConf
import org.apache.spark.sql.SparkSession

/**
 * One `spark.hsbloom.*` setting: its key, type, default and a one-line doc.
 * A value that is unset or blank reads as the default. `defaultText` is the
 * default as docs/configuration.md shows it (the value itself, except where
 * the default is computed, as the system path's). An `internal` setting is
 * for tests, not a promise to users (see `HsbloomConf`).
 */
final case class Setting[T](key: String, default: T, defaultText: String, valueType: String, doc: String,
    internal: Boolean = false)(parse: String => T) {
  /** The value from a lookup of keys (a session's or a SparkConf's settings). */
  def from(lookup: String => Option[String]): T =
    lookup(key).map(_.trim).filter(_.nonEmpty).map(parse).getOrElse(default)
  /**
   * The session's value. Read through `contains` first: Spark answers a
   * lookup of an unset key by building an exception, and the rules read
   * their settings many times per query.
   */
  def get(session: SparkSession): T = {
    val conf = session.sessionState.conf
    from(k => if (conf.contains(k)) Option(conf.getConfString(k, null)) else None)
  }
  def get(conf: SparkConf): T = from(conf.getOption)
}

/**
 * Every `spark.hsbloom.*` setting, defined once; the rules read them through
 * here and docs/configuration.md lists them (tests/test_configuration.py
 * checks the page and the code against `json()`). A switch is read through its
 * check here (`isEnabled`, `isJoinEnabled`, ...), so that what turns an area
 * on (joins need hsbloom on too) is decided in one place.
 *
 * Keys are `spark.hsbloom.<area>.<name>` in camelCase, with the unit as the
 * name's suffix (`Bytes`, `Ms`); a setting that switches an area on or off is
 * `<area>.enabled`.
 *
 * Internal settings (`internal = true`, keyed in the area `internal` and then the area they tune) let a test reach
 * in a few operations a state the defaults reach only after many; they are read from the session as any setting
 * (so a test sets and unsets them, and no JVM-wide knob outlives it), listed apart on the page, and may change
 * without notice.
 */
object HsbloomConf {
  private val MiB = 1024L * 1024

  private def long(key: String, default: Long, doc: String): Setting[Long] =
    Setting(key, default, default.toString, "long", doc)(_.toLong)
  private def int(key: String, default: Int, doc: String): Setting[Int] =
    Setting(key, default, default.toString, "int", doc)(_.toInt)
  private def boolean(key: String, default: Boolean, doc: String): Setting[Boolean] =
    Setting(key, default, default.toString, "boolean", doc)(_.toBoolean)
  /** A setting whose value is one of `choices` (any case); another value fails with the key and the choices. */
  private def choice(key: String, choices: Seq[String], doc: String): Setting[String] =
    Setting(key, choices.head, choices.head, choices.mkString(" | "), doc) { value =>
      choices.find(_.equalsIgnoreCase(value)).getOrElse(throw new IllegalArgumentException(
        s"$key must be one of ${choices.mkString(", ")}; got '$value'"))
    }

  val Enabled: Setting[Boolean] = Setting("spark.hsbloom.enabled", false, "false", "boolean",
    "Whether queries use hsbloom's indexes to skip files; any value other than true (any case) is false.")(
    _.equalsIgnoreCase("true"))

  /** Whether queries in `session` use indexes: every rule's and every pruning listing's check, read here only. */
  def isEnabled(session: SparkSession): Boolean = Enabled.get(session)

  val SystemPath: Setting[Option[String]] = Setting[Option[String]]("spark.hsbloom.system.path", None,
    "<spark.sql.warehouse.dir>/_hsbloom", "path",
    "The directory that holds every index of the session (its log and data).")(Some(_))

  /** `IndexPermissions`' values: the index directory gets its source's permission, or the file system's default. */
  val PermissionsSource = "source"
  val PermissionsInherit = "inherit"

  val IndexPermissions: Setting[String] = choice("spark.hsbloom.index.permissions",
    Seq(PermissionsSource, PermissionsInherit),
    "Whose permission an index directory gets at create and every refresh, delete, restore and vacuum: " +
      "source gives it the source directory's (mode bits, group, ACL entries, narrowed by the directories above " +
      "it), inherit leaves it to the file system (umask, parent's ACL).")

  /** `IndexEncryption`'s values: encrypted columns refused, or indexed encrypted with their keys. */
  val EncryptionOff = "off"
  val EncryptionColumns = "columns"

  val IndexEncryption: Setting[String] = choice("spark.hsbloom.index.encryption", Seq(EncryptionOff, EncryptionColumns),
    "Whether create and refresh may index a column encrypted with Parquet modular encryption: off refuses it; " +
      "columns reads the master keys of its files (PropertiesDrivenCryptoFactory only), refuses files that " +
      "disagree, and stores the encrypted columns' filters, counts, zones and global filters sealed under the " +
      "same keys; queries and joins read them with the session's keys.")

  val CatalogRefreshIntervalMs: Setting[Long] = long("spark.hsbloom.catalog.refreshIntervalMs", 10000L,
    "How long a query planner reuses its list of ACTIVE indexes before it reads the logs again (in the " +
      "background: queries keep the list meanwhile; 0 reads them at every query); changes made by another " +
      "process are seen within it and one read.")

  val CacheMaxBytes: Setting[Long] = long("spark.hsbloom.cache.maxBytes", 256 * MiB,
    "Driver memory for the file-level tables of loaded index versions (without their filters, but with the " +
      "decrypted filters of encrypted columns), least recently used first out; a version larger than this is " +
      "loaded again at every query.")

  val CacheBlockBytes: Setting[Long] = long("spark.hsbloom.cache.blockBytes", 64 * MiB,
    "Driver memory, per loaded index version, for the file filters that probes have read.")

  val ZonesEnabled: Setting[Boolean] = boolean("spark.hsbloom.zones.enabled", default = true,
    "Whether scans read only the row groups an index with zones (granularity row_group) finds may match; " +
      "false reads every kept file whole.")

  /** Whether a pruning listing selects row groups in `session` (with hsbloom on: `isEnabled`). */
  def isZonesEnabled(session: SparkSession): Boolean = ZonesEnabled.get(session)

  val BuildAdoptNativeFilters: Setting[Boolean] = boolean("spark.hsbloom.build.adoptNativeFilters", default = true,
    "Whether an index build takes a Parquet file's own Bloom filters of the indexed columns instead of hashing " +
      "the column, where they are exact and strong enough (no global filter).")

  val BuildAdoptRowGroupSizedFilters: Setting[Boolean] = boolean("spark.hsbloom.build.adoptRowGroupSizedFilters",
    default = false, "With zones: whether a file whose native filters each make a good zone filter but whose OR is " +
      "weaker than the index fpp is adopted, with that OR as its file filter (its zones decide; every lookup then " +
      "probes all zones of such files and reads about the zone fpp times their row groups more than with a hashed " +
      "index). false hashes such files.")

  val JoinEnabled: Setting[Boolean] = boolean("spark.hsbloom.join.enabled", default = true,
    "Whether joins use indexes (a global filter on the probe side, pruning by the build side's keys); " +
      "needs spark.hsbloom.enabled too.")

  /** Whether the join rules run in `session`: `JoinEnabled`, and hsbloom on (`isEnabled`). */
  def isJoinEnabled(session: SparkSession): Boolean = isEnabled(session) && JoinEnabled.get(session)

  val JoinCostModel: Setting[Boolean] = boolean("spark.hsbloom.join.costModel", default = true,
    "Whether join features are applied only where the cost model finds they pay; false applies them " +
      "wherever they are correct (for tests).")

  /** Whether the join rules apply a feature only where the cost model finds it pays (`JoinCostModel`). */
  def isJoinCostModelOn(session: SparkSession): Boolean = JoinCostModel.get(session)

  val JoinGlobalFilterMaxBytes: Setting[Long] = long("spark.hsbloom.join.globalFilter.maxBytes", 64 * MiB,
    "The largest global filter a join loads onto the executors; a larger one is not used.")

  val JoinPruningMaxBuildKeys: Setting[Int] = Setting("spark.hsbloom.join.pruning.maxBuildKeys", 100000, "100000",
    "int", "The most distinct build-side keys a join prunes the probe side's files with: of a broadcast join, its " +
      "broadcast's keys (the index then says which files may hold them); of a join whose keys are read in a job of " +
      "their own, the cap on the keys worth waiting for. With more, the probe side is read as planned.") { v =>
    val n = v.toInt
    if (n < 0) {
      throw new IllegalArgumentException(s"spark.hsbloom.join.pruning.maxBuildKeys must be 0 or more; got $n")
    }
    n
  }

  val JoinCacheMaxBytes: Setting[Long] = long("spark.hsbloom.join.cache.maxBytes", 1024 * MiB,
    "Executor memory for the global filters joins have loaded, least recently used first out.")

  /** An incremental refresh refers to at most this many data directories by default; past it, it compacts. */
  val DefaultMaxReferredParts = 8

  val RefreshMaxReferredParts: Setting[Int] = Setting("spark.hsbloom.internal.refresh.maxReferredParts",
    DefaultMaxReferredParts, DefaultMaxReferredParts.toString, "int",
    s"The most data directories an incremental refresh's version refers to (1 to $DefaultMaxReferredParts); past " +
      "it, the refresh compacts them into one. Tests lower it to compact within a few refreshes.",
    internal = true) { v =>
    val n = v.toInt
    if (n < 1 || n > DefaultMaxReferredParts) {
      throw new IllegalArgumentException(
        s"spark.hsbloom.internal.refresh.maxReferredParts must be from 1 to $DefaultMaxReferredParts; got $n")
    }
    n
  }

  /** Every setting, in the order docs/configuration.md lists them (the internal ones last, apart). */
  val all: Seq[Setting[_]] = Seq(Enabled, SystemPath, IndexPermissions, IndexEncryption, CatalogRefreshIntervalMs,
    CacheMaxBytes, CacheBlockBytes,
    ZonesEnabled, BuildAdoptNativeFilters, BuildAdoptRowGroupSizedFilters, JoinEnabled, JoinCostModel, JoinGlobalFilterMaxBytes, JoinPruningMaxBuildKeys, JoinCacheMaxBytes,
    RefreshMaxReferredParts)

  /**
   * The registry as a JSON list of {key, type, default, doc, internal} (the default as `defaultText`), for the
   * page's test.
   */
  def json(): String = {
    val mapper = new ObjectMapper()
    val list = mapper.createArrayNode()
    all.foreach { s =>
      val node = list.addObject()
      node.put("key", s.key)
      node.put("type", s.valueType)
      node.put("default", s.defaultText)
      node.put("doc", s.doc)
      node.put("internal", s.internal)
    }
    mapper.writeValueAsString(list)
  }
}
