package hsbloom.format

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.BFIndexConfig
import hsbloom.log.IndexLog
import hsbloom.shim.CollectionConverters._

/** The log entry format: what `LogJson` writes, reads back, and refuses (docs/design/log.md). */
class LogJsonSuite extends AnyFunSuite {
  private val mapper = new ObjectMapper()

  private val source = IndexSource("delta", Seq("file:/data/events"),
    ReadOptions.Recorded(Map("mergeschema" -> "false"), Map("x" -> "hmac"), "00ff"), Some("spark_catalog.default.events"),
    Some(7L), Seq("user_id" -> "bigint", "name" -> "string"), Seq("day"), Map("column.user_id" -> "name=user_id"), None)

  private def entry(id: Long = 0, state: State = State.Creating): LogEntry = LogEntry(
    id = id, state = state, operation = "create", writer = Writer("host", 42, "op"), timestampMs = 1000,
    hsbloomVersion = "0.1.0", config = Some(BFIndexConfig("events_ids", Seq("user_id"), fpp = Some(0.001))),
    source = Some(source), dataVersion = Some(3), dataPath = Some("file:/idx/events_ids/v__=3"),
    summary = Some(Summary(2, 5, 64, Some(0.001), Some(0.001), Seq("user_id" -> ColumnSummary(5, 0, 5, 40, 0)),
      Some(AdoptionSummary(0, Map("why" -> 2L))))))

  private def json(e: LogEntry): ObjectNode = mapper.readTree(LogJson.write(e)).asInstanceOf[ObjectNode]

  test("an entry round-trips through plain JSON with the log's field names, and names no class") {
    val e = entry()
    val text = LogJson.write(e)
    assert(LogJson.parse(text) == e)
    val fields = Seq("log_format", "id", "state", "operation", "timestamp_ms", "hsbloom_version", "writer", "config",
      "source", "data_version", "data_path", "data_parts", "dropped_file_ids", "data_layout", "summary", "message", "pending")
    assert(json(e).fieldNames().asScala.toSeq == fields)
    assert(!json(e).get("source").has("files")) // the version's tables list the files, not the entry
    assert(json(e).get("source").get("delta_version").asLong == 7)
    assert(!text.contains("hsbloom.") && !text.toLowerCase.contains("class"))
    // An entry written before the files' distinct sum was recorded reads as None; one with it, as itself.
    val measured = e.copy(summary = e.summary.map(s => s.copy(columns = Seq("user_id" -> ColumnSummary(5, 0, 5, 40, 8, Some(6L))))))
    assert(LogJson.parse(LogJson.write(measured)) == measured)
    assert(measured.summary.get.columns.head._2.filesPerKey.contains(1.2) && e.summary.get.columns.head._2.filesPerKey.isEmpty)
    // ndv_scope: recorded, it says whether ndv counts each value once; absent (older entries), only a global
    // filter's estimate did. A file-level index's count over the column gives the spread as one with a global filter.
    def column(c: ColumnSummary) = e.copy(summary = e.summary.map(_.copy(columns = Seq("user_id" -> c))))
    for (c <- Seq(ColumnSummary(5, 0, 5, 40, 0, Some(6L), Some(true)), ColumnSummary(5, 0, 6, 40, 0, Some(6L), Some(false)))) {
      assert(LogJson.parse(LogJson.write(column(c))) == column(c))
    }
    assert(json(column(ColumnSummary(5, 0, 5, 40, 0, Some(6L), Some(true)))).get("summary").get("columns").get("user_id")
      .get("ndv_scope").asText == "column")
    assert(ColumnSummary(5, 0, 5, 40, 0, Some(6L), Some(true)).filesPerKey.contains(1.2))
    assert(ColumnSummary(5, 0, 6, 40, 0, Some(6L), Some(false)).filesPerKey.isEmpty)
    assert(ColumnSummary(5, 0, 5, 40, 8, Some(6L), None).ndvCountsValuesOnce)
    assert(!ColumnSummary(5, 0, 5, 40, 0, Some(6L), None).ndvCountsValuesOnce)
    val quick = e.copy(pending = Some(PendingChanges(5, Some(8), Seq(FileFingerprint("file:/c.parquet", 30, 3000)), Seq(0))))
    assert(LogJson.parse(LogJson.write(quick)) == quick)
    assert(json(quick).get("pending").toString ==
      """{"checked_ms":5,"delta_version":8,"appended":[{"path":"file:/c.parquet","size":30,"mtime":3000}],"deleted_file_ids":[0]}""")
  }

  test("an older entry's file list is read (its summary may lack a file count), and a newer one never writes it") {
    val older = json(entry())
    older.get("source").asInstanceOf[ObjectNode].putArray("files").addObject()
      .put("id", 1).put("path", "file:/b.parquet").put("size", 20).put("mtime", 2000)
    older.get("summary").asInstanceOf[ObjectNode].remove("num_files")
    val parsed = LogJson.parse(older.toString)
    assert(parsed.source.get.legacyFiles == Seq(SourceFile(1, "file:/b.parquet", 20, 2000)))
    assert(parsed.summary.get.numFiles == 1)
    assert(!LogJson.write(parsed).contains("\"files\""))
  }

  test("a source over encrypted footers records only the indexed columns of its schema, and says so") {
    val hidden = entry().copy(source = Some(source.hidingSchema(Seq("user_id"))))
    assert(LogJson.parse(LogJson.write(hidden)) == hidden)
    assert(json(hidden).get("source").get("schema").toString == """{"user_id":"bigint"}""")
    assert(json(hidden).get("source").get("schema_hidden").asBoolean)
    assert(!json(entry()).get("source").has("schema_hidden")) // written only when true: older readers read the rest
    val wrong = json(hidden); wrong.get("source").asInstanceOf[ObjectNode].put("schema_hidden", "yes")
    assert(intercept[IllegalArgumentException](LogJson.parse(wrong.toString)).getMessage.contains("schema_hidden"))
  }

  test("a version of several data directories, and an older entry without them, read their directories") {
    val e = entry(state = State.Active).copy(dataParts = Some(Seq(1L, 3L)), droppedFileIds = Seq(4L, 0L), dataLayout = Some(2))
    assert(LogJson.parse(LogJson.write(e)) == e && e.parts == Seq(1L, 3L))
    val view = IndexLog.Entry.of(e, "events_ids")
    assert(view.dataParts == Seq(1L, 3L) && view.droppedFileIds == Set(0L, 4L) && view.describe.contains("data version 3 in 2 parts"))
    val old = json(entry(state = State.Active))
    Seq("data_parts", "dropped_file_ids", "data_layout").foreach(old.remove)
    assert(LogJson.parse(old.toString).parts == Seq(3L) && LogJson.parse(old.toString).dataLayout.isEmpty)
    val wrong = json(e); wrong.putArray("data_parts").add(3).add(1)
    val refused = intercept[IllegalArgumentException](LogJson.parse(wrong.toString))
    assert(refused.getMessage.contains("data_parts [3, 1] must be distinct and end with data_version 3"))
  }

  test("an entry without fpps reads the configured one, else the default, in the one parser both sides use") {
    val e = entry(state = State.Active).copy(summary = entry().summary.map(_.copy(fileFpp = None, sharedFpp = None)))
    assert(LogJson.parse(LogJson.write(e)).fpps == ((0.001, 0.001)))
    val unconfigured = e.copy(config = e.config.map(_.copy(fpp = None)))
    assert(IndexLog.Entry.of(LogJson.parse(LogJson.write(unconfigured)), "x").fileFpp == BFIndexConfig.DefaultFpp)
  }

  test("the config's granularity is written only when not the default, so an older hsbloom reads the entry") {
    val e = entry()
    assert(!json(e).get("config").has("granularity") && LogJson.parse(LogJson.write(e)).config.get.granularity == "file")
    val zoned = e.copy(config = e.config.map(_.copy(granularity = "row_group")))
    assert(json(zoned).get("config").get("granularity").asText == "row_group")
    assert(LogJson.parse(LogJson.write(zoned)) == zoned)
  }

  test("substring filters are written only when the index has some, so an older hsbloom reads the other entries") {
    val e = entry()
    assert(!json(e).get("config").has("substring_columns") && !json(e).get("config").has("ngram_size"))
    val grams = e.copy(config = e.config.map(_.copy(substringColumns = Seq("message", "url"),
      ngramSizes = Map("message" -> 6, "url" -> 4))))
    assert(json(grams).get("config").get("ngram_sizes").toString == """{"message":6,"url":4}""")
    assert(LogJson.parse(LogJson.write(grams)) == grams)
    assert(grams.config.get.storedKeys.takeRight(2) == Seq("ngram6(message)", "ngram4(url)"))
  }

  test("an entry written when n was one for all substring columns (ngram_size) reads as that n for each") {
    val node = json(entry())
    val config = node.get("config").asInstanceOf[ObjectNode]
    config.putArray("substring_columns").add("message").add("url")
    config.put("ngram_size", 5)
    assert(LogJson.parse(node.toString).config.get.ngramSizes == Map("message" -> 5, "url" -> 5))
    config.remove("ngram_size")
    config.putObject("ngram_sizes").put("message", 3)
    val missing = intercept[IllegalArgumentException](LogJson.parse(node.toString)).getMessage
    assert(missing.contains("config.ngram_sizes") && missing.contains("url has none"), missing)
    config.putObject("ngram_sizes").put("message", 3).put("url", 9)
    assert(intercept[IllegalArgumentException](LogJson.parse(node.toString)).getMessage
      .contains("ngram_size must be from 2 to 8 bytes, got 9 for 'url'"))
  }

  test("an unknown format, state or config field is refused") {
    def refused(change: ObjectNode => Unit): String = {
      val node = json(entry()); change(node)
      intercept[IllegalArgumentException](LogJson.parse(node.toString)).getMessage
    }
    assert(refused(_.put("log_format", 2)).contains("log format 2; this hsbloom reads format 1"))
    assert(refused(_.put("state", "EXPLODED")).contains("state must be one of"))
    assert(refused(_.get("config").asInstanceOf[ObjectNode].put("shiny", 1)).contains("unknown config fields shiny"))
    assert(refused(_.get("config").asInstanceOf[ObjectNode].put("index_name", "a..b")).contains("contains '..'"))
    def scope(value: ObjectNode => Unit): String = refused { node =>
      value(node.get("summary").get("columns").get("user_id").asInstanceOf[ObjectNode])
    }
    for (crafted <- Seq[ObjectNode => Unit](_.put("ndv_scope", "both"), _.put("ndv_scope", 1), _.put("ndv_scope", true))) {
      assert(scope(crafted).contains("summary.columns.user_id.ndv_scope must be \"column\" or \"files\""))
    }
  }

  test("every transition of docs/design/log.md is allowed, and no other") {
    import State._
    val allowed = Seq(None -> Creating, Some(DoesNotExist) -> Creating, Some(Creating) -> Active,
      Some(Creating) -> DoesNotExist, Some(Active) -> Deleting, Some(Deleting) -> Deleted, Some(Deleted) -> Restoring,
      Some(Restoring) -> Active, Some(Active) -> Vacuuming, Some(Deleted) -> Vacuuming, Some(Vacuuming) -> DoesNotExist,
      Some(Active) -> Refreshing, Some(Refreshing) -> Active)
    allowed.foreach { case (p, n) => State.checkTransition(p, n) }
    val refused = Seq(None -> Active, None -> Deleting, Some(Active) -> Creating, Some(Active) -> Active,
      Some(Deleted) -> Deleting, Some(Active) -> Restoring, Some(DoesNotExist) -> Deleting, Some(Creating) -> Deleting,
      Some(Deleted) -> Refreshing)
    refused.foreach { case (p, n) =>
      assert(intercept[IllegalArgumentException](State.checkTransition(p, n)).getMessage.contains("cannot follow"), s"$p -> $n")
    }
    assert(State.all.filter(_.stable).toSet == Set(Active, Deleted, DoesNotExist))
  }

}
