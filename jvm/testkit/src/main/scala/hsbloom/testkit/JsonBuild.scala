package hsbloom.testkit

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.DataFrame

import hsbloom.BFIndexConfig
import hsbloom.format.SourceFile
import hsbloom.indexing.{BuildInput, BuildRequest, IndexBuild, JobDescription}
import hsbloom.shim.CollectionConverters._

/**
 * A build of one data directory without an operation around it, from a JSON request, for the Python tests
 * (tests/build_support.py, through py4j): they build with sizes and files of their choosing and check the bytes.
 * Not in the shipped jar (jvm/testkit); the operations build through `hsbloom.operations.BuildData`.
 */
object JsonBuild {
  /** The build of the request `requestJson` over its listed files of `df`'s relation; its summary as JSON. */
  def run(df: DataFrame, requestJson: String): String = {
    val request = fromJson(requestJson)
    JobDescription.around(df.sparkSession.sparkContext, request.description) {
      IndexBuild.build(BuildInput.of(df, Some(request.files.map(_.path))), request)
    }.toJson
  }

  /**
   * The request, from the JSON tests/build_support.py writes, with its field names: `fpp` is the file filters', and
   * the shared one's too unless `shared_fpp` is given; `granularity` "row_group" builds zones. An optional field
   * absent or null takes its default.
   */
  def fromJson(json: String): BuildRequest = {
    val root = new ObjectMapper().readTree(json)
    def field(name: String): JsonNode =
      Option(root.get(name)).getOrElse(throw new IllegalArgumentException(s"build request lacks '$name'"))
    def optional(name: String): Option[JsonNode] = Option(root.get(name)).filterNot(_.isNull)
    val files = (0 until field("files").size).map { i =>
      val f = field("files").get(i)
      SourceFile(f.get("file_id").asLong, f.get("path").asText, f.get("size").asLong, f.get("mtime").asLong)
    }
    BuildRequest(
      columns = (0 until field("columns").size).map(i => field("columns").get(i).asText),
      files = files,
      expectedNumItems = optional("expected_num_items").map(_.asLong),
      fileFpp = field("fpp").asDouble,
      sharedFpp = optional("shared_fpp").getOrElse(field("fpp")).asDouble,
      globalFilter = field("global_filter").asBoolean,
      zones = optional("granularity").map(_.asText).contains(BFIndexConfig.RowGroupGranularity),
      dataPath = field("data_path").asText,
      description = field("description").asText,
      maxBufferedHashes = optional("max_buffered_hashes").map(_.asInt).getOrElse(BuildRequest.DefaultMaxBufferedHashes),
      globalFilterBlocks = optional("global_filter_blocks")
        .map(_.properties.asScala.map(e => e.getKey -> e.getValue.asInt).toMap).getOrElse(Map.empty),
      globalHeldHashes = optional("global_held_hashes").map(_.asLong).getOrElse(BuildRequest.DefaultGlobalHeldHashes))
  }
}
