package hsbloom.format

import org.apache.spark.sql.SparkSession

import hsbloom.conf.HsbloomConf

/**
 * Where an index's log and data live, and the names the log uses: the single
 * definition (the Python tests read its constants through the jar: tests/jar_log.py).
 *
 * {{{
 *   <system path>/<index name>/_hsbloom_log/00000000000000000000.json   operation log
 *   <system path>/<index name>/v__=<N>/files/                          file-level index table
 *   <system path>/<index name>/v__=<N>/global/                         global filters
 *   <system path>/<index name>/v__=<N>/blocks/                         the file filters, block-major
 *   <system path>/<index name>/v__=<N>/zones/                          row-group filters (optional: zones)
 * }}}
 *
 * The system path is `spark.hsbloom.system.path`, by default `_hsbloom` under
 * `spark.sql.warehouse.dir`: the leading underscore makes Spark's file listing
 * skip it, so it is never mistaken for a table's data.
 */
object Layout {
  /** The system path's directory under the warehouse when the setting is unset. */
  val DefaultSystemDir = "_hsbloom"
  /** The operation log's directory in an index's directory. */
  val LogDir = "_hsbloom_log"
  /** Digits of a log entry's zero-padded id: entry N is `<N, 20 digits>.json`. */
  val LogEntryDigits = 20
  /** The log entries' format (`log_format`), which a reader must know. */
  val LogFormatVersion = 1
  /** Data version N lives in `v__=N`. */
  val VersionPrefix = "v__="
  val FilesTable = "files"
  val GlobalTable = "global"
  val BlocksDir = "blocks"
  /** Encrypted columns' rows, filters inline, under their columns' keys (`SealedTable`). */
  val SealedTable = "sealed"
  /** Encrypted columns' zone rows (`TableSchemas.ZoneInput`), filters inline, under their columns' keys (`SealedTable`). */
  val SealedZonesTable = "sealed_zones"
  /** Encrypted columns' global filters and their counts, under their columns' keys (`SealedGlobal`). */
  val SealedGlobalTable = "sealed_global"
  /** Optional since data layout 3: written only for `granularity="row_group"`; a reader that lacks it reads files whole. */
  val ZonesTable = "zones"
  /**
   * How a data directory is stored, recorded in log entries as `data_layout`:
   * 4 is file tables whose filters are stored once, in block-addressable side
   * files (`blocks/`), with checksums, and which list every source file of the
   * version (the log entry does not). 3 kept each filter whole in the file
   * table as well; 2 had no checksums.
   */
  val DataLayout = 4

  val Creating = "CREATING"
  val Active = "ACTIVE"
  val Deleting = "DELETING"
  val Deleted = "DELETED"
  val Restoring = "RESTORING"
  val Vacuuming = "VACUUMING"
  val Refreshing = "REFRESHING"
  val DoesNotExist = "DOESNOTEXIST"
  val States: Seq[String] = Seq(Creating, Active, Deleting, Deleted, Restoring, Vacuuming, Refreshing, DoesNotExist)
  /** States an operation ends in; the latest entry in one of them describes the index. */
  val StableStates: Set[String] = Set(Active, Deleted, DoesNotExist)

  /**
   * Bounds on what a log entry may hold, so that nothing of a crafted entry
   * becomes a path, a size or a class (docs/security.md).
   * A data version names the directory `v__=N`; the next version is the
   * largest used + 1, which must still be an int.
   */
  val MaxDataVersion: Long = Int.MaxValue - 1L
  /** File ids number the source files of one version. */
  val MaxFileId: Long = Int.MaxValue.toLong
  /**
   * The data directories one entry's version may read (`data_parts`): a bound on what a reader accepts, far above
   * what a refresh makes (`HsbloomConf.DefaultMaxReferredParts`).
   */
  val MaxEntryDataParts = 1024
  /** An entry larger than this is damage: readers check the size before reading it. */
  val MaxLogEntryBytes: Long = 8L * 1024 * 1024
  /** The formats an index is built from (a format name is also a class name to Spark). */
  val SourceFormats: Seq[String] = Seq("parquet", "orc", "csv", "json", "delta")

  /** The name of data version `version`'s directory; a version out of range is refused, never made a name. */
  def versionDir(version: Long): String = {
    require(version >= 0 && version <= MaxDataVersion, s"data version $version is not from 0 to $MaxDataVersion")
    s"$VersionPrefix$version"
  }

  private val VersionDirName = "v__=(0|[1-9][0-9]{0,9})".r

  /** N for a directory named `v__=N` with N in range, else None. */
  def versionOf(directoryName: String): Option[Long] = directoryName match {
    case VersionDirName(n) => Some(n.toLong).filter(_ <= MaxDataVersion)
    case _ => None
  }

  /**
   * The directory that holds this session's indexes, not yet qualified:
   * `spark.hsbloom.system.path` without trailing slashes (blank counts as
   * unset), else `_hsbloom` under `spark.sql.warehouse.dir`.
   */
  def systemPath(spark: SparkSession): String =
    systemPath(HsbloomConf.SystemPath.get(spark), spark.conf.get("spark.sql.warehouse.dir"))

  /** The system path from the setting's value (None when unset or blank) and the warehouse directory. */
  def systemPath(configured: Option[String], warehouseDir: String): String =
    configured.map(withoutTrailingSlash).getOrElse(withoutTrailingSlash(warehouseDir) + "/" + DefaultSystemDir)

  private def withoutTrailingSlash(path: String): String = {
    val stripped = path.replaceAll("/+$", "")
    if (stripped.isEmpty && path.nonEmpty) "/" else stripped
  }
}
