package hsbloom.index

import java.io.FileNotFoundException
import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.google.common.cache.{Cache, CacheBuilder}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import hsbloom.catalog.ReadFacts

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
      options: Map[String, String],
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
        .filter { case (_, n) => n.endsWith(".json") && !n.startsWith(".") && n.dropRight(5).forall(_.isDigit) && n.length > 5 }
        .sortBy { case (_, n) => -n.dropRight(5).toLong }.map(_._1)
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
    val fs = path.getFileSystem(conf)
    val in = fs.open(path)
    val text = try new String(in.readAllBytes(), UTF_8) finally in.close()
    parse(text, indexName)
  }

  /** Parses one entry; throws IllegalArgumentException naming what is wrong. */
  def parse(text: String, indexName: String): Entry = {
    val root = mapper.readTree(text)
    def req(node: JsonNode, name: String): JsonNode = Option(node.get(name)).filterNot(_.isNull)
      .getOrElse(throw new IllegalArgumentException(s"log entry of index '$indexName' lacks '$name'"))
    def opt(node: JsonNode, name: String): Option[JsonNode] = Option(node).flatMap(n => Option(n.get(name))).filterNot(_.isNull)
    val format = req(root, "log_format").asInt
    if (format != Layout.LogFormatVersion) {
      throw new IllegalArgumentException(s"log entry of index '$indexName' has format $format; this hsbloom reads ${Layout.LogFormatVersion}")
    }
    val state = req(root, "state").asText
    val config = opt(root, "config")
    val source = opt(root, "source")
    def strings(node: Option[JsonNode]): Seq[String] = node.map(_.elements.asScala.map(_.asText).toSeq).getOrElse(Nil)
    def stringMap(node: Option[JsonNode]): Map[String, String] =
      node.map(_.properties.asScala.map(e => e.getKey -> e.getValue.asText).toMap).getOrElse(Map.empty)
    val dataVersion = opt(root, "data_version").map(_.asLong)
    // A version made of several data directories (an incremental refresh referring to earlier ones): oldest first,
    // ending with data_version. Absent (entries before hsbloom referred to parts): data_version alone.
    val dataParts = opt(root, "data_parts").map(_.elements.asScala.map(_.asLong).toSeq).getOrElse(dataVersion.toSeq)
    if (dataParts.nonEmpty && (dataParts.lastOption != dataVersion || dataParts.distinct.size != dataParts.size)) {
      throw new IllegalArgumentException(s"log entry of index '$indexName' lists data parts " +
        s"${dataParts.mkString(", ")} that do not end with its data version ${dataVersion.getOrElse("(none)")}")
    }
    // As built (the summary), else as configured (entries from before the fpp was sized from the file count).
    def fppOf(built: String): Double = opt(root, "summary").flatMap(opt(_, built))
      .orElse(config.flatMap(opt(_, "fpp")).filterNot(_.isNull)).map(_.asDouble).getOrElse(Double.NaN)
    Entry(
      indexName = config.flatMap(opt(_, "index_name")).map(_.asText).getOrElse(indexName),
      id = req(root, "id").asLong,
      state = state,
      indexedColumns = strings(config.flatMap(opt(_, "indexed_columns"))),
      fpp = fppOf("file_fpp"),
      format = source.flatMap(opt(_, "format")).map(_.asText).getOrElse(""),
      rootPaths = strings(source.flatMap(opt(_, "root_paths"))),
      options = stringMap(source.flatMap(opt(_, "options"))),
      table = source.flatMap(opt(_, "table")).map(_.asText),
      deltaVersion = source.flatMap(opt(_, "delta_version")).map(_.asLong),
      schema = stringMap(source.flatMap(opt(_, "schema"))),
      dataVersion = dataVersion,
      dataPath = opt(root, "data_path").map(_.asText),
      columnSummaries = opt(root, "summary").flatMap(opt(_, "columns")).map(_.properties.asScala.map { e =>
        val c = e.getValue
        def count(name: String): Long = opt(c, name).map(_.asLong).getOrElse(-1L)
        e.getKey -> ColumnSummary(count("num_rows"), count("num_nulls"), count("ndv"), count("global_filter_bytes"))
      }.toMap).getOrElse(Map.empty),
      dataParts = dataParts,
      droppedFileIds = opt(root, "dropped_file_ids").map(_.elements.asScala.map(_.asLong).toSet).getOrElse(Set.empty),
      readFacts = source.flatMap(opt(_, "read_facts")).map(n => stringMap(Some(n))),
      sharedFpp = fppOf("shared_fpp"))
  }
}
