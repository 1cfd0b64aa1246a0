package hsbloom.refresh

import scala.util.control.NonFatal

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.slf4j.LoggerFactory

import hsbloom.{HsbloomException, RefreshResult}
import hsbloom.catalog.Sources
import hsbloom.format.{Layout, LogEntry, SourceFile, State}
import hsbloom.index.{IndexDamage, SourceListing}
import hsbloom.operations.{CreateIndex, DataVersions, IndexContext, JobGroup, Operation, Recovery, Substrings}

/**
 * Refreshing an index: following a source that changed, cheaply and without a wrong answer in between
 * (docs/refresh.md). Three modes:
 *
 *  - full: build every current file into a new data version, as create does;
 *  - incremental: build only the appended (or changed) files into a new data directory that the new version reads
 *    with the previous version's, minus the deleted files' ids (`IncrementalRefresh`);
 *  - quick: compare the source and record what changed in the log, writing no data. Queries read files the data
 *    does not hold and never list deleted ones, so they stay correct.
 *
 * Each follows the protocol of `Operation`: until the new ACTIVE entry is written, readers use the previous one.
 */
object RefreshIndex {
  private val logger = LoggerFactory.getLogger(getClass)

  def apply(spark: SparkSession, name: String, mode: String): RefreshResult = {
    if (!RefreshResult.Modes.contains(mode)) {
      throw HsbloomException.invalidArgument(s"refresh mode must be one of ${RefreshResult.Modes.mkString(", ")}; got '$mode'")
    }
    val ctx = IndexContext.open(spark, name)
    val base = Recovery.requireState(ctx, Set(State.Active), "refresh")
    val source = base.source.get
    val config = base.config.get
    // Every refresh, even one with nothing to do: the table may have been closed since the last.
    ctx.giveSourcePermission(source.rootPaths)
    val comparing = s"hsbloom: comparing index '$name' with its source"
    val (df, changes) = JobGroup.around(spark, JobGroup.id("refresh", name), comparing, cancelOnFailure = false) {
      val df = SourceChanges.currentDataFrame(spark, source)
      val changes = SourceChanges.compare(spark, base, held(ctx, base, mode), df)
      if (mode != RefreshResult.Full) { // these keep the files the index holds; a full refresh checks every file
        CreateIndex.refuseEncrypted(df, config.indexedColumns, appendedAsListed(changes), s"refresh index '$name'")
      }
      if (mode != RefreshResult.Quick) Substrings.refuseUnfit(df, config) // a build follows: before anything is written
      (df, changes)
    }
    source.readFactsDifference(changes.current).filter(_ => mode != RefreshResult.Full).foreach { stale =>
      if (mode == RefreshResult.Incremental) IncrementalRefresh.checkTypes(name, source, changes.current, config.sourceColumns)
      throw HsbloomException.indexState(s"cannot refresh index '$name' in $mode mode: the index no longer matches how " +
        s"its source is read ($stale), so every file must be indexed again; refresh it in full mode")
    }
    val result = mode match {
      case RefreshResult.Quick => quick(ctx, base, changes)
      case RefreshResult.Incremental => IncrementalRefresh(ctx, base, df, changes)
      case _ => full(ctx, base, df, changes)
    }
    logger.info(s"hsbloom: ${result.message}")
    result
  }

  def appendedAsListed(changes: SourceChanges): Seq[SourceFile] =
    changes.appended.zipWithIndex.map { case (f, i) => SourceFile(i, f.path, f.size, f.mtime) }

  /**
   * The files `base` holds. A full refresh rebuilds from the source alone, so damaged tables only make it count
   * every file as appended; the other modes keep the data and need the whole listing.
   */
  private def held(ctx: IndexContext, base: LogEntry, mode: String): Seq[SourceFile] = {
    if (!base.dataLayout.contains(Layout.DataLayout)) return base.source.get.legacyFiles.sortBy(_.path)
    val dataPaths = base.parts.map(v => ctx.dataPath(v).toString)
    val (files, damaged) = try SourceListing.held(dataPaths, base.droppedFileIds.toSet, ctx.conf) catch {
      case NonFatal(e) if mode == RefreshResult.Full => return Nil
      case NonFatal(e) => throw HsbloomException.indexState(s"cannot refresh index '${ctx.name}' in $mode mode: the " +
        s"files its data holds cannot be read from its file tables ($e); refresh it in full mode", e)
    }
    val expected = base.summary.map(_.numFiles)
    if ((damaged > 0 || !expected.contains(files.size.toLong)) && mode != RefreshResult.Full) {
      throw HsbloomException.indexState(s"cannot refresh index '${ctx.name}' in $mode mode: its file tables are " +
        s"damaged or incomplete (they hold ${files.size} intact source files, the log says ${expected.getOrElse("None")}; " +
        s"verifying the index names the files); refresh it in full mode")
    }
    files
  }

  /** Records the changes in the log; the data stays as it is. */
  private def quick(ctx: IndexContext, base: LogEntry, changes: SourceChanges): RefreshResult = {
    val pending = changes.pending
    val recorded = base.pending
    val same = (pending, recorded) match {
      case (None, None) => true
      case (Some(p), Some(r)) => (p.appended, p.deletedFileIds, p.deltaVersion) == (r.appended, r.deletedFileIds, r.deltaVersion)
      case _ => false
    }
    if (same) {
      return nothingToDo(ctx.name, RefreshResult.Quick, base,
        if (pending.isEmpty) "the source has not changed" else "these changes are already recorded")
    }
    IncrementalRefresh.writeLogOnly(ctx, base, pending)(identity)
    RefreshResult(ctx.name, RefreshResult.Quick, refreshed = true, changes.appended.size, changes.deleted.size,
      base.dataVersion.get, s"index '${ctx.name}': recorded ${changes.appended.size} appended and " +
        s"${changes.deleted.size} deleted files; queries read the appended files until an incremental or full refresh")
  }

  private def full(ctx: IndexContext, base: LogEntry, df: DataFrame, changes: SourceChanges): RefreshResult = {
    val config = base.config.get
    // Damage this JVM found (queries' checksums, verify) is repaired by rebuilding (docs/design/integrity.md).
    val damage = IndexDamage.of(base.parts.map(v => ctx.dataPath(v).toString))
    val current = damage.isEmpty && changes.isEmpty && base.source.get.readFactsDifference(changes.current).isEmpty &&
      base.pending.isEmpty && base.summary.forall(_.globalFilterDeletedFiles == 0) &&
      base.dataLayout.contains(Layout.DataLayout)
    if (current) {
      return nothingToDo(ctx.name, RefreshResult.Full, base,
        "the source and how it is read have not changed, and the global filters are exact")
    }
    val described = changes.listing match {
      case Some(files) => Sources.Described(changes.current, config.sourceColumns, files)
      case None => Sources.describe(df, config.sourceColumns)
    }
    val checking = s"hsbloom: checking the source of index '${ctx.name}' for encrypted columns"
    val footersHidden = JobGroup.around(ctx.spark, JobGroup.id("refresh", ctx.name), checking, cancelOnFailure = false) {
      CreateIndex.refuseEncrypted(df, config.indexedColumns, described.files, s"refresh index '${ctx.name}'")
    }
    val source = if (footersHidden) described.source.hidingSchema(config.indexedColumns) else described.source
    val version = DataVersions.next(ctx)
    val op = new Operation(ctx, Some(base), "refresh")
    val begin = op.begins(State.Refreshing)(_.copy(source = Some(source), dataVersion = Some(version),
      dataPath = Some(ctx.dataPath(version).toString), dataParts = None, droppedFileIds = Nil,
      dataLayout = Some(Layout.DataLayout), pending = None))
    CreateIndex.wholeBuild(op, begin, df, described.files, "so the previous version stays in use")
    val repaired = damage.headOption.map { case (file, problem) =>
      s"; the previous data was damaged (${damage.size} problem(s), first: $file: $problem)"
    }.getOrElse("")
    RefreshResult(ctx.name, RefreshResult.Full, refreshed = true, changes.appended.size, changes.deleted.size, version,
      s"index '${ctx.name}': rebuilt from ${described.files.size} files (data version $version)$repaired")
  }

  def nothingToDo(name: String, mode: String, base: LogEntry, why: String): RefreshResult =
    RefreshResult(name, mode, refreshed = false, 0, 0, base.dataVersion.get, s"index '$name': nothing to refresh ($why)")
}
