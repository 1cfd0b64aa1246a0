package hsbloom.index

import java.io.FileNotFoundException
import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.google.common.cache.{Cache, CacheBuilder}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import hsbloom.catalog.{ReadFacts, ReadOptions}

/**
 * Reading an index's operation log (written by hsbloom/log.py), as the query
 * side needs it: the latest stable entry, and from it what the index covers
 * and where its data lives. Only reads; the log is data, never code.
 *
 * Entry N is `<index>/_hsbloom_log/<N zero-padded to 20 digits>.json`. The
 * newest entry may still be being written (a reader skips it when it does not
 * parse); the latest entry in a stable state (ACTIVE, DELETED, DOESNOTEXIST)
 * describes the index.
 */
object IndexLog {

  /** What an ACTIVE entry says about the index: enough to match a relation and find the data. */
  final case class Entry(
      indexName: String,
      id: Long,
      state: String,
      indexedColumns: Seq[String],
      /** The file filters' false-positive probability (NaN while unknown). */
      fpp: Double,
      format: String,
      rootPaths: Seq[String],
      /** The read options as recorded (`hsbloom.catalog.ReadOptions`): verbatim, hashed, and the hashes' salt. */
      options: ReadOptions.Recorded,
      table: Option[String],
      deltaVersion: Option[Long],
      schema: Map[String, String],
      dataVersion: Option[Long],
      dataPath: Option[String],
      columnSummaries: Map[String, IndexLog.ColumnSummary] = Map.empty,
      dataParts: Seq[Long] = Nil,
      droppedFileIds: Set[Long] = Set.empty,
      readFacts: Option[ReadFacts.Facts] = None,
      /** The global filter's (and zones') false-positive probability (NaN while unknown). */
      sharedFpp: Double = Double.NaN) {
    /** The root paths as `FileKey`s, to match a relation's roots (computed once; entries are cached). */
    lazy val rootKeys: Set[String] = rootPaths.map(FileKey.listed).toSet
    def describe: String = {
      val parts = if (dataParts.size > 1) s" in ${dataParts.size} parts" else ""
      s"$indexName (log entry $id${dataVersion.map(v => s", data version $v$parts").getOrElse("")})"
    }
  }

  /** The data directory `v__=N` of data version `version` of the index at `indexPath`. */
  def dataDirectory(indexPath: Path, version: Long): Path = new Path(indexPath, Layout.versionDir(version))

  /** What the build counted for one indexed column (`summary.columns.<c>` of the entry). */
  final case class ColumnSummary(numRows: Long, numNulls: Long, ndv: Long, globalFilterBytes: Long)

  private val mapper = new ObjectMapper()

  /**
   * The latest stable entry of the index at `indexPath`, None when the log is
   * absent or holds no stable entry yet. An unreadable newest entry is skipped
   * (it may be mid-write); an unreadable older one is an error, since it would
   * hide the state the index is really in.
   */
  def latestStable(indexPath: Path, conf: Configuration): Option[Entry] = {
    val logPath = new Path(indexPath, Layout.LogDir)
    val fs = logPath.getFileSystem(conf)
    val entries = try {
      fs.listStatus(logPath).toSeq.filter(_.isFile).map(s => s -> s.getPath.getName)
        .flatMap { case (s, n) => LogStore.entryId(n).map(s -> _) }
        .sortBy { case (_, id) => -id }.map(_._1)
    } catch { case _: FileNotFoundException => Nil }
    var result: Option[Entry] = None
    var position = 0
    val it = entries.iterator
    while (result.isEmpty && it.hasNext) {
      val status = it.next()
      val parsed = try Some(readCached(status, conf, indexPath.getName)) catch {
        case NonFatal(e) if position == 0 => None // the newest entry may still be being written
      }
      parsed.foreach { entry => if (Layout.StableStates.contains(entry.state)) result = Some(entry) }
      position += 1
    }
    result
  }

  /**
   * Entries parsed before, by file, size and modification time: an entry is
   * written once, so query planning, which looks at the log of every index
   * each refresh interval, parses each entry once, not once a look.
   */
  private val parsed: Cache[(String, Long, Long, String), Entry] =
    CacheBuilder.newBuilder().maximumSize(4096).build[(String, Long, Long, String), Entry]()

  private def readCached(status: FileStatus, conf: Configuration, indexName: String): Entry = {
    val key = (status.getPath.toString, status.getLen, status.getModificationTime, indexName)
    Option(parsed.getIfPresent(key)).getOrElse {
      val entry = read(status.getPath, conf, indexName)
      parsed.put(key, entry)
      entry
    }
  }

  def read(path: Path, conf: Configuration, indexName: String): Entry = {
    val text = LogStore.read(path.toString, conf)
    if (text == null) throw new FileNotFoundException(s"log entry $path does not exist")
    parse(text, indexName)
  }

  /**
   * Parses one entry; throws IllegalArgumentException naming the first field
   * that is not what hsbloom writes. Whoever can write the system path can
   * write an entry, so every value is checked for its type and range before it
   * can become a path (data versions), a size or a class (the format), as
   * Python's `hsbloom.index.stored` checks them.
   */
  def parse(entryText: String, indexName: String): Entry = {
    val root = mapper.readTree(entryText)
    def bad(what: String, node: JsonNode, must: String): Nothing = {
      val shown = Option(node).map(_.toString).getOrElse("nothing")
      throw new IllegalArgumentException(
        s"log entry of index '$indexName': $what must be $must, got ${shown.take(60)}")
    }
    if (root == null || !root.isObject) bad("the entry", root, "a JSON object")
    def opt(node: JsonNode, name: String): Option[JsonNode] = Option(node).flatMap(n => Option(n.get(name))).filterNot(_.isNull)
    def req(node: JsonNode, name: String): JsonNode = opt(node, name)
      .getOrElse(throw new IllegalArgumentException(s"log entry of index '$indexName' lacks '$name'"))
    def long(node: JsonNode, what: String, max: Long = Long.MaxValue): Long =
      if (node.isIntegralNumber && node.canConvertToLong && node.asLong >= 0 && node.asLong <= max) node.asLong
      else bad(what, node, s"an integer from 0 to $max")
    def text(node: JsonNode, what: String): String = if (node.isTextual) node.asText else bad(what, node, "a string")
    def obj(node: JsonNode, what: String): JsonNode = if (node.isObject) node else bad(what, node, "a JSON object")
    def array(node: JsonNode, what: String): Seq[JsonNode] =
      if (node.isArray) node.elements.asScala.toSeq else bad(what, node, "a JSON array")
    def strings(node: Option[JsonNode], what: String): Seq[String] =
      node.map(n => array(n, what).map(text(_, s"an element of $what"))).getOrElse(Nil)
    def stringMap(node: Option[JsonNode], what: String): Map[String, String] = node.map { n =>
      obj(n, what).properties.asScala.map(e => e.getKey -> text(e.getValue, s"$what.${e.getKey}")).toMap
    }.getOrElse(Map.empty)
    def probability(node: JsonNode, what: String): Double =
      if (node.isNumber && node.asDouble > 0 && node.asDouble < 1) node.asDouble
      else bad(what, node, "a number strictly between 0 and 1")

    val format = req(root, "log_format")
    if (!format.isIntegralNumber || format.asLong != Layout.LogFormatVersion) {
      throw new IllegalArgumentException(
        s"log entry of index '$indexName' has format $format; this hsbloom reads ${Layout.LogFormatVersion}")
    }
    val state = text(req(root, "state"), "state")
    if (!Layout.States.contains(state)) bad("state", req(root, "state"), Layout.States.mkString("one of ", ", ", ""))
    val config = opt(root, "config").map(obj(_, "config"))
    val source = opt(root, "source").map(obj(_, "source"))
    val summary = opt(root, "summary").map(obj(_, "summary"))
    config.flatMap(opt(_, "index_name")).foreach(text(_, "config.index_name"))
    val dataVersion = opt(root, "data_version").map(long(_, "data_version", Layout.MaxDataVersion))
    // A version made of several data directories (an incremental refresh referring to earlier ones): oldest first,
    // ending with data_version. Absent (entries before hsbloom referred to parts): data_version alone.
    val dataParts = opt(root, "data_parts").map(n => array(n, "data_parts"))
      .filter(_.nonEmpty).map(_.map(long(_, "an element of data_parts", Layout.MaxDataVersion)))
      .getOrElse(dataVersion.toSeq)
    if (dataParts.size > Layout.MaxDataParts || (dataParts.nonEmpty &&
        (dataParts.lastOption != dataVersion || dataParts.distinct.size != dataParts.size))) {
      throw new IllegalArgumentException(s"log entry of index '$indexName' lists data parts " +
        s"${dataParts.take(10).mkString(", ")} that are not distinct, at most ${Layout.MaxDataParts}, and ending " +
        s"with its data version ${dataVersion.getOrElse("(none)")}")
    }
    val sourceFormat = source.flatMap(opt(_, "format")).map(text(_, "source.format")).getOrElse("")
    if (source.isDefined && !Layout.SourceFormats.contains(sourceFormat)) {
      bad("source.format", source.get.get("format"), Layout.SourceFormats.mkString("one of ", ", ", ""))
    }
    // As built (the summary), else as configured (entries from before the fpp was sized from the file count).
    def fppOf(built: String): Double = summary.flatMap(opt(_, built)).map(probability(_, s"summary.$built"))
      .orElse(config.flatMap(opt(_, "fpp")).map(probability(_, "config.fpp"))).getOrElse(Double.NaN)
    Entry(
      indexName = indexName, // the directory's: paths are made from it, never from the entry
      id = long(req(root, "id"), "id"),
      state = state,
      indexedColumns = strings(config.flatMap(opt(_, "indexed_columns")), "config.indexed_columns"),
      fpp = fppOf("file_fpp"),
      format = sourceFormat,
      rootPaths = strings(source.flatMap(opt(_, "root_paths")), "source.root_paths"),
      options = ReadOptions.Recorded(stringMap(source.flatMap(opt(_, "options")), "source.options")
          .map { case (k, v) => k.toLowerCase(java.util.Locale.ROOT) -> v }, // older entries kept the user's spelling
        stringMap(source.flatMap(opt(_, "hashed_options")), "source.hashed_options"),
        source.flatMap(opt(_, "options_salt")).map(text(_, "source.options_salt")).getOrElse("")),
      table = source.flatMap(opt(_, "table")).map(text(_, "source.table")),
      deltaVersion = source.flatMap(opt(_, "delta_version")).map(long(_, "source.delta_version")),
      schema = stringMap(source.flatMap(opt(_, "schema")), "source.schema"),
      dataVersion = dataVersion,
      dataPath = opt(root, "data_path").map(text(_, "data_path")),
      columnSummaries = summary.flatMap(opt(_, "columns")).map(obj(_, "summary.columns").properties.asScala.map { e =>
        val c = obj(e.getValue, s"summary.columns.${e.getKey}")
        def count(name: String): Long = opt(c, name).map(long(_, s"summary.columns.${e.getKey}.$name")).getOrElse(-1L)
        e.getKey -> ColumnSummary(count("num_rows"), count("num_nulls"), count("ndv"), count("global_filter_bytes"))
      }.toMap).getOrElse(Map.empty),
      dataParts = dataParts,
      droppedFileIds = opt(root, "dropped_file_ids").map(n => array(n, "dropped_file_ids")
        .map(long(_, "an element of dropped_file_ids", Layout.MaxFileId)).toSet).getOrElse(Set.empty),
      readFacts = source.flatMap(opt(_, "read_facts")).map(n => stringMap(Some(n), "source.read_facts")),
      sharedFpp = fppOf("shared_fpp"))
  }
}
