package hsbloom.indexing

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode

import hsbloom.format.{AdoptionSummary, ColumnSummary, NdvScope, Summary}

/** One row of the file-level table, without its filter: what the summary needs. */
final case class FileStats(fileId: Long, column: String, rows: Long, nulls: Long, ndv: Long, filterBytes: Long)

/** What the build counted for one indexed column. */
final case class ColumnBuildSummary(
    numRows: Long,
    numNulls: Long,
    /**
     * The column's distinct values, each counted once (the build's HyperLogLog estimate over every file) when
     * `ndvOfColumn`; else the sum of the files' counts, an upper bound (files adopted from their own filters
     * were not scanned, so their values were not counted).
     */
    ndv: Long,
    fileFilterBytes: Long,
    globalFilterBytes: Long,
    /** Each file's distinct values, summed over the files: over `ndv`, in how many files a key is. */
    fileNdvSum: Long,
    ndvOfColumn: Boolean)

/**
 * What a build made, as the index log records it (`summary` of the entry).
 * Serialized once, by `toJson`, with the log's field names; the tests' build
 * entry (`hsbloom.testkit.JsonBuild`) returns that JSON (tests/build_support.py reads it as it is).
 */
final case class BuildSummary(
    numFiles: Int,
    numRows: Long,
    indexBytes: Long,
    /** In the order the columns were requested. */
    columns: Seq[(String, ColumnBuildSummary)],
    /** Files whose filters were adopted from their native Parquet filters (docs/design/adoption.md). */
    adoptedFiles: Int = 0,
    /** Per reason, how many files were hashed instead of adopted. */
    hashedWhy: Map[String, Int] = Map.empty) {

  def toJson: String = {
    val mapper = new ObjectMapper()
    val root = mapper.createObjectNode()
    root.put("num_files", numFiles)
    root.put("num_rows", numRows)
    root.put("index_bytes", indexBytes)
    val byColumn: ObjectNode = root.putObject("columns")
    columns.foreach { case (name, c) =>
      val node = byColumn.putObject(name)
      node.put("num_rows", c.numRows)
      node.put("num_nulls", c.numNulls)
      node.put("ndv", c.ndv)
      node.put("file_filter_bytes", c.fileFilterBytes)
      node.put("global_filter_bytes", c.globalFilterBytes)
      node.put("file_ndv_sum", c.fileNdvSum)
      node.put("ndv_scope", NdvScope.name(c.ndvOfColumn))
    }
    val adoption = root.putObject("adoption")
    adoption.put("adopted_files", adoptedFiles)
    val why = adoption.putObject("hashed_files")
    hashedWhy.toSeq.sortBy(_._1).foreach { case (reason, n) => why.put(reason, n) }
    mapper.writeValueAsString(root)
  }

  /** The summary a log entry records of this whole build (create, full refresh), its filters built for `fileFpp`
   *  and `sharedFpp`. */
  def logSummary(fileFpp: Double, sharedFpp: Double): Summary = Summary(
    numFiles = numFiles,
    numRows = numRows,
    indexBytes = indexBytes,
    fileFpp = Some(fileFpp),
    sharedFpp = Some(sharedFpp),
    columns = columns.map { case (c, s) =>
      c -> ColumnSummary(s.numRows, s.numNulls, s.ndv, s.fileFilterBytes, s.globalFilterBytes, Some(s.fileNdvSum),
        Some(s.ndvOfColumn))
    },
    adoption = Some(AdoptionSummary(adoptedFiles, hashedWhy.map { case (k, v) => k -> v.toLong })))
}

object BuildSummary {
  /**
   * The summary of a build of `request` from its files' statistics, per column with a global filter its
   * (distinct estimate, serialized bytes), and per column without one the distinct estimate over the scanned
   * files (`distinct`); `indexBytes` is the size of what was written.
   */
  def of(request: BuildRequest, stats: Seq[FileStats], global: Map[String, (Long, Long)], distinct: Map[String, Long],
      indexBytes: Long, adoption: Adoption.Outcome): BuildSummary = {
    val byColumn = stats.groupBy(_.column)
    // The sealed columns' counts and filter sizes are encrypted facts: the summary (the log) leaves them out.
    val columns = request.columns.filterNot(request.sealedColumns).map { c =>
      val rows = byColumn.getOrElse(c, Nil)
      // A global filter's count covers every file; the scan's only when no file was adopted (adopted files are not
      // scanned).
      val ofColumn = global.get(c).map(_._1).orElse(distinct.get(c).filter(_ => adoption.adopted.isEmpty))
      c -> ColumnBuildSummary(
        numRows = rows.map(_.rows).sum,
        numNulls = rows.map(_.nulls).sum,
        ndv = ofColumn.getOrElse(rows.map(_.ndv).sum),
        fileFilterBytes = rows.map(_.filterBytes).sum,
        globalFilterBytes = global.get(c).map(_._2).getOrElse(0L),
        fileNdvSum = rows.map(_.ndv).sum,
        ndvOfColumn = ofColumn.isDefined)
    }
    BuildSummary(
      numFiles = request.files.size,
      // Encrypted footers hide the files' row counts: not recorded (0).
      numRows = if (request.sealing.exists(_.footerEncrypted)) 0L
        else byColumn.get(request.columns.head).map(_.map(_.rows).sum).getOrElse(0L),
      indexBytes = indexBytes,
      columns = columns,
      adoptedFiles = adoption.adopted.size,
      hashedWhy = adoption.hashedWhy)
  }
}
