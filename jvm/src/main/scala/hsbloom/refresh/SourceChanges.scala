package hsbloom.refresh

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.{DataType, StructType}
import org.slf4j.LoggerFactory

import hsbloom.catalog.Sources
import hsbloom.format.{FileFingerprint, FileKey, IndexSource, LogEntry, PendingChanges, SourceFile}

/**
 * How a source differs from the files an index version holds: `appended` (new files, and new contents of changed
 * ones), `deleted` (files of the version that are gone or changed) and `kept`. `current` is the source now;
 * `listing` its full listing when it was listed (else empty: a Delta table's changes come from its log).
 */
final case class SourceChanges(
    current: IndexSource,
    listing: Option[Seq[SourceFile]],
    appended: Seq[FileFingerprint],
    deleted: Seq[SourceFile],
    kept: Seq[SourceFile]) {
  def isEmpty: Boolean = appended.isEmpty && deleted.isEmpty

  /** The changes as a quick refresh records them (None: nothing changed). */
  def pending: Option[PendingChanges] =
    if (isEmpty) None
    else Some(PendingChanges(System.currentTimeMillis(), current.deltaVersion, appended.sortBy(_.path),
      deleted.map(_.fileId).sorted))
}

/**
 * Finding the changes, by file fingerprint (path, size, modification time): for Delta from the add and remove
 * actions of the commits since the version the data covers, otherwise (and for a Delta log that was cleaned up)
 * by comparing a new listing with the one the version holds.
 */
object SourceChanges {
  private val logger = LoggerFactory.getLogger(getClass)

  /** The source as it is now, read the way the index recorded it (the latest version of a Delta table). */
  def currentDataFrame(spark: SparkSession, source: IndexSource): DataFrame = source.table match {
    case Some(table) => spark.table(table)
    case None =>
      val reader = spark.read.format(source.format).options(source.options.verbatim)
      val withSchema = source.userSchema.fold(reader)(s => reader.schema(DataType.fromJson(s).asInstanceOf[StructType]))
      withSchema.load(source.rootPaths: _*)
  }

  /** The changes between `held`, the files `base`'s data holds, and the source `df` reads now. */
  def compare(spark: SparkSession, base: LogEntry, held: Seq[SourceFile], df: DataFrame): SourceChanges = {
    val columns = base.config.get.sourceColumns
    val old = base.source.get
    val fromLog = if (old.format != "delta") None else {
      val current = Sources.describe(df, columns, withFiles = false).source
      deltaChanges(spark, old, held, current)
    }
    fromLog.getOrElse {
      val described = Sources.describe(df, columns)
      listingChanges(held, described.source, described.files)
    }
  }

  private def listingChanges(held: Seq[SourceFile], current: IndexSource, listing: Seq[SourceFile]): SourceChanges = {
    val now = listing.map(f => FileKey.listed(f.path) -> f).toMap
    val (kept, deleted) = held.partition { f =>
      now.get(FileKey.listed(f.path)).exists(l => l.size == f.size && l.mtime == f.mtime)
    }
    val keptKeys = kept.map(f => FileKey.listed(f.path)).toSet
    val appended = listing.filterNot(f => keptKeys.contains(FileKey.listed(f.path))).map(f => FileFingerprint(f.path, f.size, f.mtime))
    SourceChanges(current, Some(listing), appended, deleted, kept)
  }

  /** From the Delta log's commits since `old.deltaVersion`; None when they cannot be read (compare listings then). */
  private def deltaChanges(spark: SparkSession, old: IndexSource, held: Seq[SourceFile], current: IndexSource)
      : Option[SourceChanges] = {
    val (from, to) = (old.deltaVersion.get, current.deltaVersion.get)
    if (to == from) return Some(SourceChanges(current, None, Nil, Nil, held))
    if (to < from) return None // the table was re-created: compare listings
    val touched = RefreshData.deltaChanges(spark, old.rootPaths.head, from + 1, to).getOrElse {
      logger.warn(s"hsbloom: Delta commits after version $from are gone; comparing listings")
      return None
    }
    val byKey = held.map(f => FileKey.listed(f.path) -> f).toMap
    val appended = Seq.newBuilder[FileFingerprint]
    val deleted = Seq.newBuilder[SourceFile]
    touched.foreach { t =>
      val indexed = byKey.get(t.key)
      // The same physical file (e.g. a new deletion vector): its filter still holds.
      val same = indexed.exists(i => t.present && i.size == t.size && i.mtime == t.mtime)
      if (!same) {
        if (t.present) appended += FileFingerprint(t.path, t.size, t.mtime)
        indexed.foreach(deleted += _)
      }
    }
    val gone = deleted.result().map(_.fileId).toSet
    Some(SourceChanges(current, None, appended.result(), deleted.result(), held.filterNot(f => gone.contains(f.fileId))))
  }
}
