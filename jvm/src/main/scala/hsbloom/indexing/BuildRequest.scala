package hsbloom.indexing

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import hsbloom.format.SourceFile

/** What to build: made by `BuildData`, or read from JSON (`fromJson`) by `IndexBuild.run`, which tests drive. */
final case class BuildRequest(
    columns: Seq[String],
    files: Seq[SourceFile],
    expectedNumItems: Option[Long],
    /** The file filters' false-positive probability (`BFIndexConfig.fileFpp`: they are probed once per file). */
    fileFpp: Double,
    /** The global filter's and the zones' false-positive probability (`BFIndexConfig.sharedFpp`: their false
     *  positives do not add up over files). */
    sharedFpp: Double,
    globalFilter: Boolean,
    /** Whether to build a filter per row group too (`BFIndexConfig.zones`; the source is Parquet, checked at
     *  create). */
    zones: Boolean,
    dataPath: String,
    description: String,
    maxBufferedHashes: Int = BuildRequest.DefaultMaxBufferedHashes,
    /** Per column, a fixed size (in 32-byte blocks) for the global filter, so a refresh can OR it with the
     *  previous version's filter of that size; columns not listed are sized from their distinct count. */
    globalFilterBlocks: Map[String, Int] = Map.empty,
    /** Hashes a global-filter task holds before it builds at the largest size and folds (a tuning knob). */
    globalHeldHashes: Long = BuildRequest.DefaultGlobalHeldHashes,
    /** How the rows of encrypted indexed columns are sealed (`hsbloom.index.SealedTable`); None: none is. */
    sealing: Option[EncryptedColumns.Sealing] = None) {
  /** The indexed columns whose rows go to the sealed table, not to the plaintext tables. */
  def sealedColumns: Set[String] = sealing.fold(Set.empty[String])(_.masterKeys.keySet)
}

object BuildRequest {
  /** Hashes one file's column may buffer before its filter is built at a fixed large size instead. */
  val DefaultMaxBufferedHashes: Int = 1 << 22
  /** Hashes a global-filter reducer holds before the filter's size is known (64 MiB); see GlobalReducer. */
  val DefaultGlobalHeldHashes: Long = 1L << 23

  def fromJson(json: String): BuildRequest = {
    val root = new ObjectMapper().readTree(json)
    def field(name: String): JsonNode =
      Option(root.get(name)).getOrElse(throw new IllegalArgumentException(s"build request lacks '$name'"))
    val files = (0 until field("files").size).map { i =>
      val f = field("files").get(i)
      SourceFile(f.get("file_id").asLong, f.get("path").asText, f.get("size").asLong, f.get("mtime").asLong)
    }
    val expected = field("expected_num_items")
    BuildRequest(
      columns = (0 until field("columns").size).map(i => field("columns").get(i).asText),
      files = files,
      expectedNumItems = if (expected.isNull) None else Some(expected.asLong),
      fileFpp = field("fpp").asDouble,
      globalFilter = field("global_filter").asBoolean,
      dataPath = field("data_path").asText,
      description = field("description").asText,
      maxBufferedHashes = Option(root.get("max_buffered_hashes")).map(_.asInt).getOrElse(DefaultMaxBufferedHashes),
      globalFilterBlocks = Option(root.get("global_filter_blocks")).filterNot(_.isNull)
        .map(_.properties.asScala.map(e => e.getKey -> e.getValue.asInt).toMap).getOrElse(Map.empty),
      globalHeldHashes = Option(root.get("global_held_hashes")).map(_.asLong).getOrElse(DefaultGlobalHeldHashes),
      zones = Option(root.get("granularity")).filterNot(_.isNull).map(_.asText)
        .contains(hsbloom.BFIndexConfig.RowGroupGranularity),
      sharedFpp = Option(root.get("shared_fpp")).filterNot(_.isNull).getOrElse(field("fpp")).asDouble)
  }
}
