package hsbloom.operations

import org.apache.spark.sql.DataFrame

import hsbloom.BFIndexConfig
import hsbloom.format.{SourceFile, Summary}
import hsbloom.indexing.{BuildInput, BuildRequest, EncryptedColumns, IndexBuild, JobDescription}

/**
 * The distributed build of one data directory (the work itself is `hsbloom.indexing.IndexBuild`): the request
 * made from the config, and the scan of exactly the listed files of the DataFrame's relation, every row stored in
 * them (`BuildInput`; for Delta that includes rows a deletion vector hides, so a file's filter stays valid at every
 * table version: docs/refresh.md).
 */
object BuildData {
  /**
   * Builds `files` of `df` into `dataPath`: each file's filter at `config.fileFpp(versionFiles)` (the number of
   * files of the version the directory belongs to), the global filters and zones at `config.sharedFpp`, the
   * global filters at `globalFilterBlocks` blocks where given (so a refresh can OR them with earlier ones).
   */
  def apply(df: DataFrame, files: Seq[SourceFile], config: BFIndexConfig, versionFiles: Long, dataPath: String,
      description: String, globalFilterBlocks: Map[String, Int] = Map.empty): Summary = {
    val fileFpp = config.fileFpp(versionFiles)
    val request = BuildRequest(
      columns = config.storedKeys,
      grams = config.storedColumns.flatMap(s => s.ngram.map(n => (s.source, n, s.lower))),
      files = files,
      expectedNumItems = config.expectedNumItems,
      fileFpp = fileFpp,
      globalFilter = config.globalFilter,
      dataPath = dataPath,
      description = description,
      globalFilterBlocks = globalFilterBlocks,
      zones = config.zones,
      sharedFpp = config.sharedFpp,
      sealing = EncryptedColumns.sealing(df, config.indexedColumns, files))
    val scan = BuildInput.of(df, Some(files.map(_.path)))
    val built = JobDescription.around(df.sparkSession.sparkContext, description)(IndexBuild.build(scan, request))
    built.logSummary(fileFpp, config.sharedFpp)
  }
}
