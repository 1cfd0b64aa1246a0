package hsbloom.format

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

import hsbloom.{BFIndexConfig, HsbloomException}

/**
 * The one reader and writer of log entries (docs/design/log.md has the format). An entry is input, not trusted
 * state: whoever can write the system path can write one, so `parse` checks every field for its type and range
 * before anything can use it, and nothing of an entry becomes a path, a size or a class unchecked (a version
 * that is a string would become a directory to delete; a format name is a class name to Spark).
 */
object LogJson {
  private val mapper = new ObjectMapper()
  /** A name, a host, a path or a message: no legitimate one is longer. */
  val MaxText: Int = 64 * 1024
  private val ConfigFields = Set("index_name", "indexed_columns", "expected_num_items", "fpp", "global_filter", "granularity",
    "substring_columns", "ngram_size", "ngram_sizes",
    "substring_case_insensitive")

  /** The entry as one compact JSON object, with the log's field names. */
  def write(e: LogEntry): String = {
    val root = mapper.createObjectNode()
    root.put("log_format", Layout.LogFormatVersion)
    root.put("id", e.id)
    root.put("state", e.state.name)
    root.put("operation", e.operation)
    root.put("timestamp_ms", e.timestampMs)
    root.put("hsbloom_version", e.hsbloomVersion)
    val w = root.putObject("writer")
    w.put("host", e.writer.host); w.put("pid", e.writer.pid); w.put("operation_id", e.writer.operationId)
    e.config match { case Some(c) => writeConfig(root.putObject("config"), c); case None => root.putNull("config") }
    e.source match { case Some(s) => writeSource(root.putObject("source"), s); case None => root.putNull("source") }
    e.dataVersion.fold(root.putNull("data_version"))(v => root.put("data_version", v))
    e.dataPath.fold(root.putNull("data_path"))(p => root.put("data_path", p))
    e.dataParts.filter(_.nonEmpty) match {
      case Some(parts) => val a = root.putArray("data_parts"); parts.foreach(a.add(_))
      case None => root.putNull("data_parts")
    }
    val dropped = root.putArray("dropped_file_ids"); e.droppedFileIds.foreach(dropped.add(_))
    e.dataLayout.fold(root.putNull("data_layout"))(l => root.put("data_layout", l))
    e.summary match { case Some(s) => writeSummary(root.putObject("summary"), s); case None => root.putNull("summary") }
    e.message.fold(root.putNull("message"))(m => root.put("message", m))
    e.pending match { case Some(p) => writePending(root.putObject("pending"), p); case None => root.putNull("pending") }
    mapper.writeValueAsString(root)
  }

  private def writeConfig(o: ObjectNode, c: BFIndexConfig): Unit = {
    o.put("index_name", c.indexName)
    val cols = o.putArray("indexed_columns"); c.indexedColumns.foreach(cols.add)
    c.expectedNumItems.fold(o.putNull("expected_num_items"))(n => o.put("expected_num_items", n))
    c.fpp.fold(o.putNull("fpp"))(p => o.put("fpp", p))
    o.put("global_filter", c.globalFilter)
    // The default is left out, so an hsbloom from before zones still reads the entry.
    if (c.granularity != BFIndexConfig.FileGranularity) o.put("granularity", c.granularity)
    // Left out without substring filters, so an hsbloom from before them still reads the entry.
    if (c.substringColumns.nonEmpty) {
      val subs = o.putArray("substring_columns"); c.substringColumns.foreach(subs.add)
      val sizes = o.putObject("ngram_sizes"); c.substringColumns.foreach(s => sizes.put(s, c.ngramOf(s)))
      if (c.substringCaseInsensitive) o.put("substring_case_insensitive", true)
    }
  }

  private def writeSource(o: ObjectNode, s: IndexSource): Unit = {
    o.put("format", s.format)
    val roots = o.putArray("root_paths"); s.rootPaths.foreach(roots.add)
    putMap(o.putObject("options"), s.options.verbatim.toSeq.sortBy(_._1))
    s.table.fold(o.putNull("table"))(t => o.put("table", t))
    s.deltaVersion.fold(o.putNull("delta_version"))(v => o.put("delta_version", v))
    putMap(o.putObject("schema"), s.schema)
    if (s.schemaHidden) o.put("schema_hidden", true) // left out otherwise, so older hsbloom reads the entry
    val parts = o.putArray("partition_columns"); s.partitionColumns.foreach(parts.add)
    putMap(o.putObject("read_facts"), s.readFacts.toSeq.sorted)
    s.userSchema.fold(o.putNull("user_schema"))(u => o.put("user_schema", u))
    putMap(o.putObject("hashed_options"), s.options.hashed.toSeq.sortBy(_._1))
    o.put("options_salt", s.options.salt)
  }

  private def putMap(o: ObjectNode, pairs: Seq[(String, String)]): Unit = pairs.foreach { case (k, v) => o.put(k, v) }

  private def writeSummary(o: ObjectNode, s: Summary): Unit = {
    o.put("num_files", s.numFiles); o.put("num_rows", s.numRows); o.put("index_bytes", s.indexBytes)
    s.fileFpp.foreach(o.put("file_fpp", _)); s.sharedFpp.foreach(o.put("shared_fpp", _))
    val columns = o.putObject("columns")
    s.columns.foreach { case (name, c) =>
      val n = columns.putObject(name)
      n.put("num_rows", c.numRows); n.put("num_nulls", c.numNulls); n.put("ndv", c.ndv)
      n.put("file_filter_bytes", c.fileFilterBytes); n.put("global_filter_bytes", c.globalFilterBytes)
      c.fileNdvSum.foreach(n.put("file_ndv_sum", _))
      c.ndvOfColumn.foreach(ofColumn => n.put("ndv_scope", NdvScope.name(ofColumn)))
    }
    s.adoption.foreach { a =>
      val n = o.putObject("adoption")
      n.put("adopted_files", a.adoptedFiles)
      val why = n.putObject("hashed_files"); a.hashedFiles.toSeq.sorted.foreach { case (k, v) => why.put(k, v) }
    }
    o.put("global_filter_deleted_files", s.globalFilterDeletedFiles)
  }

  private def writePending(o: ObjectNode, p: PendingChanges): Unit = {
    o.put("checked_ms", p.checkedMs)
    p.deltaVersion.fold(o.putNull("delta_version"))(v => o.put("delta_version", v))
    val appended = o.putArray("appended")
    p.appended.foreach { f => val n = appended.addObject(); n.put("path", f.path); n.put("size", f.size); n.put("mtime", f.mtime) }
    val deleted = o.putArray("deleted_file_ids"); p.deletedFileIds.foreach(deleted.add(_))
  }

  /**
   * The entry `text` holds, every field checked; anything that is not what hsbloom writes throws
   * IllegalArgumentException naming the first field at fault (the log turns it into CorruptLog).
   */
  def parse(text: String): LogEntry = {
    val root = try mapper.readTree(text) catch {
      case e: com.fasterxml.jackson.core.JsonProcessingException =>
        throw new IllegalArgumentException(s"not JSON (${e.getOriginalMessage.take(120)})")
    }
    val r = new Fields(root, "the entry")
    val format = r.required("log_format")
    if (!format.isIntegralNumber || format.asLong != Layout.LogFormatVersion) {
      throw new IllegalArgumentException(s"log format ${shown(format)}; this hsbloom reads format ${Layout.LogFormatVersion}")
    }
    val stateName = r.text("state")
    val state = State.of(stateName).getOrElse(Fields.bad("state", r.required("state"), State.all.mkString("one of ", ", ", "")))
    val writer = r.obj("writer")
    val dataVersion = r.optional("data_version").map(Fields.long(_, "data_version", Layout.MaxDataVersion))
    val source = r.optionalObj("source").map(parseSource)
    LogEntry(
      id = r.long("id"),
      state = state,
      operation = r.text("operation"),
      writer = Writer(writer.text("host"), writer.long("pid", Int.MaxValue), writer.text("operation_id")),
      timestampMs = r.long("timestamp_ms"),
      hsbloomVersion = r.text("hsbloom_version"),
      config = r.optionalObj("config").map(parseConfig),
      source = source,
      dataVersion = dataVersion,
      dataPath = r.optionalText("data_path"),
      dataParts = dataParts(r, dataVersion),
      droppedFileIds = r.longs("dropped_file_ids", Layout.MaxFileId),
      dataLayout = r.optional("data_layout").map(Fields.long(_, "data_layout", 1000).toInt),
      summary = r.optionalObj("summary").map(parseSummary(_, source.map(_.legacyFiles.size.toLong).getOrElse(0L))),
      message = r.optionalText("message"),
      pending = r.optionalObj("pending").map(parsePending))
  }

  private def dataParts(r: Fields, version: Option[Long]): Option[Seq[Long]] = {
    val parts = r.longs("data_parts", Layout.MaxDataVersion)
    if (parts.isEmpty) None
    else if (parts.size > Layout.MaxEntryDataParts) {
      throw new IllegalArgumentException(s"data_parts lists ${parts.size} versions; at most ${Layout.MaxEntryDataParts} are allowed")
    } else if (!version.contains(parts.last) || parts.distinct.size != parts.size) {
      throw new IllegalArgumentException(s"data_parts ${parts.take(10).mkString("[", ", ", "]")} must be distinct and " +
        s"end with data_version ${version.getOrElse("(none)")}")
    } else Some(parts)
  }

  private def parseConfig(c: Fields): BFIndexConfig = {
    val unknown = c.names.filterNot(ConfigFields.contains)
    if (unknown.nonEmpty) throw new IllegalArgumentException(s"unknown config fields ${unknown.sorted.mkString(", ")}; written by a newer hsbloom?")
    val substringColumns = c.optional("substring_columns").map(_ => c.texts("substring_columns")).getOrElse(Nil)
    val config = try BFIndexConfig(
      indexName = c.text("index_name"),
      indexedColumns = c.texts("indexed_columns"),
      expectedNumItems = c.optional("expected_num_items").map(Fields.long(_, "config.expected_num_items")),
      fpp = c.optional("fpp").map(Fields.probability(_, "config.fpp")),
      globalFilter = c.optional("global_filter").map(Fields.boolean(_, "config.global_filter")).getOrElse(true),
      granularity = c.optionalText("granularity").getOrElse(BFIndexConfig.FileGranularity),
      substringColumns = substringColumns,
      ngramSizes = ngramSizes(c, substringColumns),
      substringCaseInsensitive = c.optional("substring_case_insensitive")
        .exists(Fields.boolean(_, "config.substring_case_insensitive")))
    catch { case e: HsbloomException => throw new IllegalArgumentException(s"config: ${e.text}") }
    if (config.ngramSizesToChoose.nonEmpty) {
      Fields.bad("config.ngram_sizes", null, s"an n for each substring column (${config.ngramSizesToChoose.mkString(", ")} has none)")
    }
    config
  }

  /**
   * Each substring column's n: `ngram_sizes` (column -> n), or from an entry written before n was chosen per column,
   * `ngram_size` for all of them. A column without one is refused (`BFIndexConfig` names it).
   */
  private def ngramSizes(c: Fields, columns: Seq[String]): Map[String, Int] =
    c.optionalObj("ngram_sizes") match {
      case Some(given) =>
        given.names.map(name => name -> given.long(name, 64).toInt).toMap
      case None => c.optional("ngram_size").map(v => Fields.long(v, "config.ngram_size", 64).toInt)
        .orElse(if (columns.isEmpty) None else Some(BFIndexConfig.DefaultNgramSize))
        .fold(Map.empty[String, Int])(n => columns.map(_ -> n).toMap)
    }

  private def parseSource(s: Fields): IndexSource = {
    val format = s.text("format")
    if (!Layout.SourceFormats.contains(format)) Fields.bad("source.format", s.required("format"), Layout.SourceFormats.mkString("one of ", ", ", ""))
    IndexSource(
      format = format,
      rootPaths = s.texts("root_paths"),
      // Older entries kept the user's spelling of option names.
      options = ReadOptions.Recorded(s.textMap("options").map { case (k, v) => k.toLowerCase(java.util.Locale.ROOT) -> v }.toMap,
        s.textMap("hashed_options").toMap, s.optionalText("options_salt").getOrElse("")),
      table = s.optionalText("table"),
      deltaVersion = s.optional("delta_version").map(Fields.long(_, "source.delta_version")),
      schema = s.textMap("schema"),
      partitionColumns = s.texts("partition_columns"),
      readFacts = s.textMap("read_facts").toMap,
      userSchema = s.optionalText("user_schema"),
      schemaHidden = s.optional("schema_hidden").exists(Fields.boolean(_, "source.schema_hidden")),
      legacyFiles = s.objs("files").map(f =>
        SourceFile(f.long("id", Layout.MaxFileId), f.text("path"), f.long("size"), f.long("mtime"))))
  }

  /** `legacyFiles`: the number of files an older entry lists, its file count when the summary has none. */
  private def parseSummary(s: Fields, legacyFiles: Long): Summary = {
    val adoption = s.optionalObj("adoption").flatMap { a =>
      a.optional("adopted_files").map(Fields.long(_, "summary.adoption.adopted_files")).map { adopted =>
        AdoptionSummary(adopted, a.optionalObj("hashed_files").map(h => h.names.map(k => k -> h.long(k)).toMap).getOrElse(Map.empty))
      }
    }
    val columns = s.optionalObj("columns").map { cs =>
      cs.names.map { name =>
        val c = cs.obj(name)
        name -> ColumnSummary(c.long("num_rows"), c.long("num_nulls"), c.long("ndv"), c.long("file_filter_bytes"),
          c.long("global_filter_bytes"),
          c.optional("file_ndv_sum").map(Fields.long(_, s"summary.columns.$name.file_ndv_sum")),
          c.optional("ndv_scope").map { n =>
            if (n.isTextual && n.asText == NdvScope.Column) true
            else if (n.isTextual && n.asText == NdvScope.Files) false
            else Fields.bad(s"summary.columns.$name.ndv_scope", n, "\"" + NdvScope.Column + "\" or \"" + NdvScope.Files + "\"")
          })
      }
    }.getOrElse(Nil)
    Summary(
      numFiles = s.optional("num_files").map(Fields.long(_, "summary.num_files")).getOrElse(legacyFiles),
      numRows = s.optional("num_rows").map(Fields.long(_, "summary.num_rows")).getOrElse(0L),
      indexBytes = s.optional("index_bytes").map(Fields.long(_, "summary.index_bytes")).getOrElse(0L),
      fileFpp = s.optional("file_fpp").map(Fields.probability(_, "summary.file_fpp")),
      sharedFpp = s.optional("shared_fpp").map(Fields.probability(_, "summary.shared_fpp")),
      columns = columns,
      adoption = adoption,
      globalFilterDeletedFiles = s.optional("global_filter_deleted_files")
        .map(Fields.long(_, "summary.global_filter_deleted_files")).getOrElse(0L))
  }

  private def parsePending(p: Fields): PendingChanges = PendingChanges(
    checkedMs = p.long("checked_ms"),
    deltaVersion = p.optional("delta_version").map(Fields.long(_, "pending.delta_version")),
    appended = p.objs("appended").map(f => FileFingerprint(f.text("path"), f.long("size"), f.long("mtime"))),
    deletedFileIds = p.longs("deleted_file_ids", Layout.MaxFileId))

  private[format] def shown(node: JsonNode): String = Option(node).map(_.toString).getOrElse("nothing").take(60)
}
