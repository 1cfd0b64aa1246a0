package hsbloom.refresh

import org.apache.spark.sql.DataFrame

import hsbloom.{HsbloomException, RefreshResult}
import hsbloom.conf.HsbloomConf
import hsbloom.format.{AdoptionSummary, ColumnSummary, IndexSource, Layout, LogEntry, PendingChanges, SourceFile, State, Summary}
import hsbloom.index.{SealedGlobal, SealedTable}
import hsbloom.indexing.EncryptedColumns
import hsbloom.operations.{BuildData, DataVersions, IndexContext, JobGroup, Operation}
import hsbloom.refresh.RefreshData.FileSums

/**
 * Incremental refresh: build only the appended files into a new data directory that the new version reads beside
 * the previous version's (minus the deleted files' ids), or, past the session's
 * `HsbloomConf.RefreshMaxReferredParts` directories, compact: copy the kept rows into one new directory
 * (docs/refresh.md, docs/design/incremental-refresh.md).
 */
object IncrementalRefresh {
  /** Inside a compacted version: the appended files' data, before it is merged in. */
  private val Staging = "_appended"

  /** A refresh whose work is its log entries: `pending` and `change` on the same data. */
  def writeLogOnly(ctx: IndexContext, base: LogEntry, pending: Option[PendingChanges])(change: LogEntry => LogEntry): LogEntry = {
    val op = new Operation(ctx, Some(base), "refresh")
    val begin = op.begins(State.Refreshing)(change)
    op.run(begin)(op.ends(begin, State.Active)(_.copy(pending = pending)))
  }

  /** An incremental refresh keeps old rows: their values must hash as the column's type does now. */
  def checkTypes(name: String, old: IndexSource, current: IndexSource, columns: Seq[String]): Unit = columns.foreach { c =>
    val (before, now) = (old.schemaOf(c), current.schemaOf(c))
    if (before != now) {
      throw HsbloomException.indexState(s"cannot refresh index '$name' incrementally: column '$c' is now " +
        s"${now.getOrElse("None")}, but the index holds ${before.getOrElse("None")} values; refresh it in full mode")
    }
  }

  def apply(ctx: IndexContext, base: LogEntry, df: DataFrame, changes: SourceChanges): RefreshResult = {
    val name = ctx.name
    val baseVersion = base.dataVersion.get
    if (changes.isEmpty) {
      if (base.pending.isEmpty) return RefreshIndex.nothingToDo(name, RefreshResult.Incremental, base, "the source has not changed")
      writeLogOnly(ctx, base, None)(identity) // the recorded changes were undone in the source
      return RefreshResult(name, RefreshResult.Incremental, refreshed = true, 0, 0, baseVersion,
        s"index '$name': the source is back to what the index holds")
    }
    checkTypes(name, base.source.get, changes.current, base.config.get.sourceColumns)
    if (!base.dataLayout.contains(Layout.DataLayout)) {
      throw HsbloomException.indexState(s"cannot refresh index '$name' incrementally: its data was written by an " +
        s"older hsbloom (data layout ${base.dataLayout.getOrElse("None")}, this one writes ${Layout.DataLayout}), " +
        "which this one does not copy or read; refresh it in full mode")
    }
    // New ids above every id the version's directories hold (dropped ones included), so an id names one file.
    val held = changes.kept ++ changes.deleted
    val firstId = (held.map(_.fileId) ++ base.droppedFileIds).foldLeft(-1L)(math.max) + 1
    val appended = changes.appended.sortBy(_.path).zipWithIndex.map { case (f, i) => SourceFile(firstId + i, f.path, f.size, f.mtime) }
    val numFiles = changes.kept.size + appended.size
    val dropped = (base.droppedFileIds.toSet ++ changes.deleted.map(_.fileId)).toSeq.sorted
    // An index over encrypted footers keeps hiding the schema (appended files are checked to agree on the keys).
    val current = changes.current
    val source = if (base.source.get.schemaHidden) current.hidingSchema(base.config.get.indexedColumns) else current
    val numParts = base.parts.size + (if (appended.nonEmpty) 1 else 0)
    if (appended.nonEmpty) { refuseUnsealable(ctx, base, df); refuseNewlySealed(ctx, base, df, appended) }
    // The appended files' sealed global filters at the index's sizes, read with the session's keys before anything is written.
    val sealedBlocks = if (appended.isEmpty) Map.empty[String, Int] else sealedGlobalBlocks(ctx, base, df)
    if (numParts > HsbloomConf.RefreshMaxReferredParts.get(df.sparkSession) || dropped.size > numFiles) {
      return compact(ctx, base, df, changes, appended, source, sealedBlocks)
    }
    if (appended.isEmpty) { // only deletes: the version reads the same directories, with more ids dropped
      val summary = incrementalSummary(base, referringTotals(ctx, base, None, changes.deleted), None, numFiles,
        changes.deleted.size, base.summary.get.indexBytes)
      writeLogOnly(ctx, base, None)(_.copy(source = Some(source), droppedFileIds = dropped, summary = Some(summary)))
      return RefreshResult(name, RefreshResult.Incremental, refreshed = true, 0, changes.deleted.size, baseVersion,
        s"index '$name': dropped ${changes.deleted.size} deleted files")
    }
    writeDirectory(ctx, base, changes, appended, source, Some(dropped)) { (version, description) =>
      val built = buildAppended(ctx, base, df, appended, ctx.dataPath(version).toString, description, numFiles,
        sealedBlocks)
      incrementalSummary(base, referringTotals(ctx, base, Some(built), changes.deleted), Some(built), numFiles,
        changes.deleted.size, base.summary.get.indexBytes + built.indexBytes)
    }
  }

  /**
   * An incremental refresh that writes a new data directory with `work(version, description)` (which returns the
   * summary): a version that also reads `base`'s directories minus `dropped`, or (`dropped` None) a compacted
   * version that reads the new directory alone.
   */
  private def writeDirectory(ctx: IndexContext, base: LogEntry, changes: SourceChanges, appended: Seq[SourceFile],
      source: IndexSource, dropped: Option[Seq[Long]])(work: (Long, String) => Summary): RefreshResult = {
    val version = DataVersions.next(ctx)
    val op = new Operation(ctx, Some(base), "refresh")
    val begin = op.begins(State.Refreshing) { e =>
      val parts = dropped match {
        case None => e.copy(dataParts = None, droppedFileIds = Nil, dataLayout = Some(Layout.DataLayout))
        case Some(d) => e.copy(dataParts = Some(base.parts :+ version), droppedFileIds = d)
      }
      parts.copy(source = Some(source), dataVersion = Some(version), dataPath = Some(ctx.dataPath(version).toString),
        pending = None)
    }
    val description = s"hsbloom: incremental refresh of index '${ctx.name}': ${appended.size} appended and " +
      s"${changes.deleted.size} deleted files (${source.describe})"
    op.run(begin, Some(Operation.Build(description, "so the previous version stays in use"))) {
      op.ends(begin, State.Active)(_.copy(summary = Some(work(version, description))))
    }
    val done = s"built ${appended.size} appended files, dropped ${changes.deleted.size} deleted ones" + (dropped match {
      case None => s", kept ${changes.kept.size}, compacted into data version $version"
      case Some(_) => s" (data version $version; the index reads ${begin.parts.size} data directories)"
    })
    RefreshResult(ctx.name, RefreshResult.Incremental, refreshed = true, appended.size, changes.deleted.size, version,
      s"index '${ctx.name}': $done")
  }

  /**
   * Builds the appended files into `dataPath`, each global filter at the size of the previous version's (so the
   * filters of every data directory of the version line up and can be OR-ed), each file filter at the fpp for the
   * new version's `numFiles`.
   */
  private def buildAppended(ctx: IndexContext, base: LogEntry, df: DataFrame, appended: Seq[SourceFile],
      dataPath: String, description: String, numFiles: Long, sealedBlocks: Map[String, Int]): Summary = {
    val config = base.config.get
    val summary = base.summary.get
    // Value columns only: a substring filter has no global filter.
    val blocks = if (!config.globalFilter) Map.empty[String, Int] else summary.columns.collect {
      case (c, s) if config.indexedColumns.contains(c) => c -> RefreshData.globalFilterBlocks(c, s.globalFilterBytes)
    }.toMap ++ sealedBlocks
    val built = BuildData(df, appended, config, numFiles, dataPath, description, blocks)
    // A sealed column's sizes are checked where its filters are OR-ed (`SealedGlobal.load`), with keys.
    if (config.globalFilter) config.indexedColumns.filter(c => summary.column(c).isDefined).foreach { c =>
      val (want, got) = (summary.column(c).get.globalFilterBytes, built.column(c).get.globalFilterBytes)
      if (want != got) {
        throw HsbloomException.indexState(s"the appended files' global filter of column '$c' has $got bytes, the " +
          s"index's has $want: they cannot be combined; refresh it in full mode")
      }
    }
    built
  }

  /**
   * Refuses, before anything is written, appended files to an index holding sealed columns (no counts in the log)
   * when the source is read without a crypto factory: their encrypted columns cannot be read, nor their rows
   * sealed, so the build would fail inside the operation (or, the global filter's size being sealed too, not
   * begin: `sealedGlobalBlocks`). One refusal, naming the fix, whether the index has global filters or not.
   */
  private def refuseUnsealable(ctx: IndexContext, base: LogEntry, df: DataFrame): Unit = {
    val sealedColumns = base.config.get.indexedColumns.filter(c => base.summary.get.column(c).isEmpty)
    val keyed = EncryptedColumns.readConf(df).exists(_.getTrimmed(EncryptedColumns.CryptoFactory, "").nonEmpty)
    if (sealedColumns.nonEmpty && !keyed) {
      throw HsbloomException.encryptedSource(s"cannot refresh index '${ctx.name}' incrementally: it holds " +
        s"${sealedColumns.map(c => s"column '$c'").mkString(", ")} sealed under the source's keys (docs/design/encryption.md), " +
        s"and the source is read without a crypto factory (${EncryptedColumns.CryptoFactory}), so the appended " +
        "files' rows can be neither read nor sealed: give the session the table's Parquet encryption settings " +
        s"(with ${HsbloomConf.IndexEncryption.key}=${HsbloomConf.EncryptionColumns}), or refresh it in full mode. " +
        "Nothing was written")
    }
  }

  /**
   * Refuses, before anything is written, appended files that would seal a column the index holds in plaintext
   * (its counts in the log): the column's filters, global filter included, would be part plaintext and part
   * sealed, the plaintext part weaker than the files that encrypt it. A full refresh seals it whole.
   */
  private def refuseNewlySealed(ctx: IndexContext, base: LogEntry, df: DataFrame, appended: Seq[SourceFile]): Unit = {
    val columns = base.config.get.indexedColumns
    val sealing = EncryptedColumns.sealing(df, columns, appended)
    sealing.toSeq.flatMap(_.masterKeys).find { case (c, _) => base.summary.get.column(c).isDefined }.foreach {
      case (c, key) => throw HsbloomException.encryptedSource(s"cannot refresh index '${ctx.name}' incrementally: " +
        s"column '$c' is encrypted in appended files (master key $key), but the index holds it in plaintext; a " +
        "sealed part beside plaintext ones would leave the files that encrypt it less protected than they are. " +
        "Refresh it in full mode, which seals the column whole (docs/design/encryption.md). Nothing was written")
    }
  }

  /**
   * Per sealed column with a global filter (`SealedGlobal`), its size in blocks, for the appended files' filter to
   * be built at: read, decrypted, with the session's settings and the source read's. Refused before anything is
   * written when they cannot read it (as compaction is without keys), naming the fix.
   */
  private def sealedGlobalBlocks(ctx: IndexContext, base: LogEntry, df: DataFrame): Map[String, Int] = {
    val config = base.config.get
    val paths = base.parts.map(v => ctx.dataPath(v).toString)
    if (!config.globalFilter || !paths.exists(p => ctx.fs.exists(new org.apache.hadoop.fs.Path(SealedGlobal.path(p))))) {
      return Map.empty
    }
    val conf = EncryptedColumns.readConf(df).getOrElse(ctx.spark.sessionState.newHadoopConf())
    config.indexedColumns.filter(c => base.summary.get.column(c).isEmpty).map { c =>
      val bytes = SealedGlobal.load(paths, c, conf).fold(why => throw HsbloomException.encryptedSource(
        s"cannot refresh index '${ctx.name}' incrementally: the appended files' global filter of '$c' is built at " +
          "the size of the index's, which is sealed under the column's key (docs/design/encryption.md) and cannot " +
          s"be read with this session's settings ($why): give the session the table's Parquet encryption " +
          "settings, or refresh it in full mode. Nothing was written"), _.counts.filterBytes)
      c -> RefreshData.globalFilterBlocks(c, bytes)
    }.toMap
  }

  /**
   * Per column, the counts of a version that reads `base`'s directories and the appended files' one, without the
   * deleted files: the base summary's, plus the appended build's, minus the deleted files' rows.
   */
  private def referringTotals(ctx: IndexContext, base: LogEntry, built: Option[Summary], deleted: Seq[SourceFile])
      : Map[String, FileSums] = {
    val columns = base.config.get.storedKeys
    val removed = if (deleted.isEmpty) Map.empty[String, FileSums] else {
      JobGroup.around(ctx.spark, JobGroup.id("refresh", ctx.name), "hsbloom: counting the deleted files' rows",
        cancelOnFailure = false) {
        RefreshData.fileStatistics(ctx.spark, base.parts.map(v => ctx.dataPath(v).toString), deleted.map(_.fileId).sorted, columns)
      }
    }
    val none = FileSums(0, 0, 0, 0, 0)
    // A sealed column (docs/design/encryption.md) has no counts in the summary, and gets none.
    columns.flatMap(c => base.summary.get.column(c).map(c -> _)).map { case (c, old) =>
      val add = built.flatMap(_.column(c)).map(s => FileSums(s.numRows, s.numNulls, s.ndv, s.fileFilterBytes, 0)).getOrElse(none)
      val gone = removed.getOrElse(c, none)
      c -> FileSums(old.numRows + add.numRows - gone.numRows, old.numNulls + add.numNulls - gone.numNulls,
        old.ndv + add.ndvSum - gone.ndvSum, old.fileFilterBytes + add.fileFilterBytes - gone.fileFilterBytes, 0)
    }.toMap
  }

  /**
   * An incremental refresh that writes one data directory holding the whole version: the kept rows of the
   * previous version's directories copied, the appended files built, the global filters OR-ed.
   */
  private def compact(ctx: IndexContext, base: LogEntry, df: DataFrame, changes: SourceChanges,
      appended: Seq[SourceFile], source: IndexSource, sealedBlocks: Map[String, Int]): RefreshResult = {
    val config = base.config.get
    // Sealed rows (docs/design/encryption.md) are copied decrypted with this session's keys and sealed again with
    // the keys the files name now, before anything is written (a session that cannot is refused, naming it).
    val sealing = if (!base.parts.exists(v => ctx.fs.exists(new org.apache.hadoop.fs.Path(SealedTable.path(
        ctx.dataPath(v).toString))))) None else {
      val files = changes.kept ++ appended
      Some(EncryptedColumns.sealing(df, config.indexedColumns, files).getOrElse(throw HsbloomException.encryptedSource(
        s"cannot refresh index '${ctx.name}' incrementally: its data directories need compacting, which copies " +
          "its sealed rows (docs/design/encryption.md), and the source is read without a crypto factory " +
          s"(${EncryptedColumns.CryptoFactory}) or with ${HsbloomConf.IndexEncryption.key} not " +
          s"${HsbloomConf.EncryptionColumns}: give the session the table's Parquet encryption settings, or refresh " +
          "it in full mode. Nothing was written")))
    }
    val numFiles = changes.kept.size + appended.size
    writeDirectory(ctx, base, changes, appended, source, None) { (version, description) =>
      val dataPath = ctx.dataPath(version).toString
      val staging = if (appended.isEmpty) None else Some(s"$dataPath/$Staging")
      val built = staging.map(buildAppended(ctx, base, df, appended, _, description, numFiles, sealedBlocks))
      val stats = RefreshData.assemble(ctx.spark, base.parts.map(v => ctx.dataPath(v).toString), staging, dataPath,
        changes.kept.map(_.fileId), config.storedKeys, config.globalFilter)
      sealing.foreach(RefreshData.assembleSealed(ctx.spark, base.parts.map(v => ctx.dataPath(v).toString), staging,
        dataPath, changes.kept.map(_.fileId), _))
      val oldPaths = base.parts.map(v => ctx.dataPath(v).toString)
      if (config.globalFilter && oldPaths.exists(p => ctx.fs.exists(new org.apache.hadoop.fs.Path(SealedGlobal.path(p))))) {
        sealing.foreach(RefreshData.assembleSealedGlobal(ctx.spark, oldPaths ++ staging, dataPath, _))
      }
      if (staging.isDefined) ctx.deleteInDataVersion(version, Staging)
      val bytes = ctx.fs.getContentSummary(ctx.dataPath(version)).getLength
      incrementalSummary(base, stats, built, numFiles, changes.deleted.size, bytes)
    }
  }

  /**
   * The new version's summary from `stats` (the totals over its file rows); global filters keep their size; a
   * column's distinct count (`ndvCountsValuesOnce`) grows by the appended files' (an upper bound: deleted files'
   * stay counted), else is the files' sum; the file fpp is the largest its file filters were built for.
   */
  private def incrementalSummary(base: LogEntry, stats: Map[String, FileSums], appended: Option[Summary],
      numFiles: Long, numDeleted: Long, indexBytes: Long): Summary = {
    val config = base.config.get
    val old = base.summary.get
    val columns = config.storedKeys.flatMap(c => old.column(c).map(c -> _)).map { case (c, before) =>
      val now = stats.getOrElse(c, FileSums(0, 0, 0, 0, 0)) // a sealed column has no summary, and gets none
      val added = appended.flatMap(_.column(c))
      val ofColumn = before.ndvCountsValuesOnce && added.forall(_.ndvCountsValuesOnce)
      val ndv = if (ofColumn) math.min(before.ndv + added.fold(0L)(_.ndv), now.numRows - now.numNulls) else now.ndvSum
      c -> ColumnSummary(now.numRows, now.numNulls, ndv, now.fileFilterBytes, before.globalFilterBytes, Some(now.ndvSum),
        Some(ofColumn))
    }
    val (baseFileFpp, sharedFpp) = base.fpps
    val fileFpp = appended.flatMap(_.fileFpp).fold(baseFileFpp)(math.max(baseFileFpp, _))
    Summary(
      numFiles = numFiles,
      numRows = columns.headOption.fold(0L)(_._2.numRows),
      indexBytes = indexBytes,
      fileFpp = Some(fileFpp),
      sharedFpp = Some(sharedFpp),
      columns = columns,
      adoption = adoption(old.adoption, appended.flatMap(_.adoption), numDeleted),
      globalFilterDeletedFiles = if (config.globalFilter) old.globalFilterDeletedFiles + numDeleted else 0)
  }

  /**
   * The adopted-file count after an incremental refresh: the base's plus the appended build's, known only when no
   * file was deleted (which deleted files were adopted is not in the log); the reasons are the appended build's.
   */
  private def adoption(base: Option[AdoptionSummary], appended: Option[AdoptionSummary], numDeleted: Long)
      : Option[AdoptionSummary] = base.filter(_ => numDeleted == 0).map { b =>
    val added = appended.getOrElse(AdoptionSummary(0, Map.empty))
    AdoptionSummary(b.adoptedFiles + added.adoptedFiles, added.hashedFiles)
  }
}
