package hsbloom.log

import java.io.FileNotFoundException

import scala.util.control.NonFatal

import com.google.common.cache.{Cache, CacheBuilder}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

import hsbloom.format.{ColumnSummary, FileKey, Layout, LogEntry, LogJson, ReadFacts, ReadOptions}

/**
 * The operation log as query planning reads it: the latest stable entry of an index, and from it what the
 * index covers and where its data lives. Entries are parsed by `LogJson`, the one parser, and cached: an entry
 * is written once, and planning looks at every index's log each refresh interval.
 */
object IndexLog {

  /** What a stable entry says about the index: enough to match a relation and find the data. */
  final case class Entry(
      indexName: String,
      id: Long,
      state: String,
      indexedColumns: Seq[String],
      /** The file filters' false-positive probability. */
      fileFpp: Double,
      format: String,
      rootPaths: Seq[String],
      /** The read options as recorded (`hsbloom.format.ReadOptions`): verbatim, hashed, and the hashes' salt. */
      options: ReadOptions.Recorded,
      table: Option[String],
      deltaVersion: Option[Long],
      schema: Map[String, String],
      dataVersion: Option[Long],
      dataPath: Option[String],
      columnSummaries: Map[String, ColumnSummary] = Map.empty,
      dataParts: Seq[Long] = Nil,
      droppedFileIds: Set[Long] = Set.empty,
      readFacts: Option[ReadFacts.Facts] = None,
      /** The global filter's (and zones') false-positive probability. */
      sharedFpp: Double = hsbloom.BFIndexConfig.DefaultFpp,
      /** Whether the index has global filters (a sealed column's, with no summary, is in `sealed_global/`). */
      globalFilter: Boolean = false,
      /** The substring filters (docs/substring.md): per substring column, its stored key and n. */
      grams: Seq[hsbloom.BFIndexConfig.StoredColumn] = Nil,
      /** The source files the version holds (0: no summary). */
      numFiles: Long = 0) {
    /** The root paths as `FileKey`s, to match a relation's roots (computed once; entries are cached). */
    lazy val rootKeys: Set[String] = rootPaths.map(FileKey.listed).toSet
    /** The source columns the index read: the indexed ones, then the substring ones not among them. */
    def sourceColumns: Seq[String] = (indexedColumns ++ grams.map(_.source)).distinct
    def describe: String = {
      val parts = if (dataParts.size > 1) s" in ${dataParts.size} parts" else ""
      s"$indexName (log entry $id${dataVersion.map(v => s", data version $v$parts").getOrElse("")})"
    }
  }

  object Entry {
    /** The query side's view of `e`, an entry of the index in directory `indexName`. */
    def of(e: LogEntry, indexName: String): Entry = {
      val (fileFpp, sharedFpp) = e.fpps
      Entry(
        indexName = indexName, // the directory's: paths are made from it, never from the entry
        id = e.id,
        state = e.state.name,
        indexedColumns = e.config.map(_.indexedColumns).getOrElse(Nil),
        grams = e.config.map(_.storedColumns.filter(_.ngram.isDefined)).getOrElse(Nil),
        fileFpp = fileFpp,
        format = e.source.map(_.format).getOrElse(""),
        rootPaths = e.source.map(_.rootPaths).getOrElse(Nil),
        options = e.source.map(_.options).getOrElse(ReadOptions.Recorded(Map.empty, Map.empty, "")),
        table = e.source.flatMap(_.table),
        deltaVersion = e.source.flatMap(_.deltaVersion),
        schema = e.source.map(_.schema.toMap).getOrElse(Map.empty),
        dataVersion = e.dataVersion,
        dataPath = e.dataPath,
        columnSummaries = e.summary.map(_.columns.toMap).getOrElse(Map.empty),
        numFiles = e.summary.map(_.numFiles).getOrElse(0L),
        dataParts = e.parts,
        droppedFileIds = e.droppedFileIds.toSet,
        readFacts = e.source.map(_.readFacts).filter(_.nonEmpty),
        sharedFpp = sharedFpp,
        globalFilter = e.config.exists(_.globalFilter))
    }
  }

  /** The data directory `v__=N` of data version `version` of the index at `indexPath`. */
  def dataDirectory(indexPath: Path, version: Long): Path = new Path(indexPath, Layout.versionDir(version))

  /**
   * The latest stable entry of the index at `indexPath`, None when the log is absent or holds no stable entry
   * yet. An unreadable newest entry is skipped (it may be mid-write); an unreadable older one is an error, since
   * it would hide the state the index is really in.
   */
  def latestStable(indexPath: Path, conf: Configuration): Option[Entry] = {
    val logPath = new Path(indexPath, Layout.LogDir)
    val fs = logPath.getFileSystem(conf)
    val entries = try {
      fs.listStatus(logPath).toSeq.filter(_.isFile).map(s => s -> s.getPath.getName)
        .flatMap { case (s, n) => LogStore.entryId(n).map(s -> _) }
        .sortBy { case (_, id) => -id }.map(_._1)
    } catch { case _: FileNotFoundException => Nil }
    entries.iterator.zipWithIndex.map { case (status, position) =>
      try Some(readCached(status, conf, indexPath.getName)) catch {
        case NonFatal(_) if position == 0 => None // the newest entry may still be being written
      }
    }.collectFirst { case Some(e) if Layout.StableStates.contains(e.state) => e }
  }

  /** Entries parsed before, by file, size and modification time (an entry is written once). */
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
    Entry.of(LogJson.parse(text), indexName)
  }
}
