package hsbloom.operations

import org.apache.spark.sql.DataFrame

import hsbloom.{BFIndexConfig, HsbloomException}
import hsbloom.catalog.Sources
import hsbloom.format.{Layout, LogEntry, SourceFile, State}
import hsbloom.indexing.EncryptedColumns

/** create: the first version of an index, built from every file of its source. */
object CreateIndex {
  /** Formats whose files are Parquet, so a zone (a row group) exists. */
  val ZoneFormats: Set[String] = Set("parquet", "delta")

  /** Builds the index `config` describes over the files `df` scans; returns its ACTIVE entry. */
  def apply(df: DataFrame, requested: BFIndexConfig): LogEntry = {
    val spark = df.sparkSession
    val ctx = IndexContext.open(spark, requested.indexName)
    val listing = s"hsbloom: listing and checking the source of index '${ctx.name}'"
    // Typed: Scala 2.12 would read `source = ` below as an assignment to the `val source` that follows.
    val described: Sources.Described = JobGroup.around(spark, JobGroup.id("create", ctx.name), listing,
        cancelOnFailure = false) {
      val d = Sources.describe(df, requested.sourceColumns) // Delta runs jobs to list
      val footersHidden = refuseEncrypted(df, d.columns, d.files, s"create index '${ctx.name}'")
      if (footersHidden) d.copy(source = d.source.hidingSchema(d.columns)) else d
    }
    val resolved = requested.sourceColumns.zip(described.columns).toMap
    val named = requested.copy(indexedColumns = requested.indexedColumns.map(resolved),
      substringColumns = requested.substringColumns.map(resolved),
      ngramSizes = requested.ngramSizes.map { case (c, n) => resolved(c) -> n })
    Substrings.refuseUnfit(df, named)
    val source = described.source
    if (named.zones && !ZoneFormats.contains(source.format)) {
      throw HsbloomException.invalidConfig("granularity='row_group' needs a Parquet or Delta source (zones are the " +
        s"row groups of Parquet files); this source is ${source.format}: use granularity='file'")
    }
    SystemPath.checkApartFromSource(ctx, source.rootPaths)
    SystemPath.checkWritable(ctx)
    val base = Recovery.latestSettled(ctx)
    base.filter(b => b.state == State.Active || b.state == State.Deleted).foreach { b =>
      val advice = if (b.state == State.Active) "delete and vacuum it first, or choose another name"
        else "restore it, or vacuum it to free the name"
      throw HsbloomException.indexExists(s"index '${ctx.name}' already exists (${b.state}); $advice")
    }
    val config = JobGroup.around(spark, JobGroup.id("create", ctx.name),
        s"hsbloom: measuring the substring columns of index '${ctx.name}'", cancelOnFailure = false) {
      Substrings.chooseNgramSizes(df, named, described.files)
    }
    ctx.giveSourcePermission(source.rootPaths) // before the first log entry
    val version = DataVersions.next(ctx)
    val op = new Operation(ctx, base, "create")
    val begin = LogEntry(id = base.map(_.id + 1).getOrElse(0L), state = State.Creating, operation = "create",
      writer = op.writer, config = Some(config), source = Some(source), dataVersion = Some(version),
      dataPath = Some(ctx.dataPath(version).toString), dataLayout = Some(Layout.DataLayout))
    val created = wholeBuild(op, begin, df, described.files, "so it was not created")
    Substrings.warnFilled(created)
    created
  }

  /**
   * Runs `op` from `begin`, building every one of `files` into `begin`'s data version (create, full refresh);
   * returns the ACTIVE entry that completes it.
   */
  def wholeBuild(op: Operation, begin: LogEntry, df: DataFrame, files: Seq[SourceFile], outcome: String): LogEntry = {
    val config = begin.config.get
    val source = begin.source.get
    val dataPath = op.ctx.dataPath(begin.dataVersion.get).toString
    val description = s"hsbloom: ${begin.operation} index '${op.ctx.name}' on ${config.indexedColumns.mkString(", ")} " +
      s"over ${files.size} files (${source.describe})"
    op.run(begin, Some(Operation.Build(description, outcome))) {
      val summary = BuildData(df, files, config, files.size, dataPath, description)
      op.ends(begin, State.Active)(_.copy(summary = Some(summary)))
    }
  }

  /**
   * `EncryptedSource` (naming a column or file, and the fix) when `doing` would index `columns` of `df` over
   * `files` although an indexed column is encrypted in one of them, or one's footer is (docs/security.md); else
   * whether their footers are encrypted (indexed sealed: the log then hides the source's schema).
   */
  def refuseEncrypted(df: DataFrame, columns: Seq[String], files: Seq[SourceFile], doing: String): Boolean =
    EncryptedColumns.check(df, columns, files).fold(
      why => throw HsbloomException.encryptedSource(s"cannot $doing: $why. Nothing was written"), identity)
}
