package hsbloom.indexing

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.storage.StorageLevel

import hsbloom.format.TableSchemas
import hsbloom.index.{IndexTables, SealedTable, ZoneTable}
import hsbloom.sbbf.Sbbf

/**
 * How a build writes its file and zone rows into the version: each table once, the adopted files' stored rows in
 * the same write, and a sealed column's rows only into its sealed table (`SealedTable`), never in plaintext.
 */
private[indexing] object BuildTables {
  /**
   * Writes `rows` (of `TableSchemas.FileTable`) into the file table of the version, but the sealed columns' rows into
   * its sealed table (`SealedTable`). With sealed columns the rows are computed once: cached while both tables are
   * written (the filters go to executors' block stores as they go to the build's shuffle), so statistics are
   * counted once.
   */
  def writeFileRows(spark: SparkSession, rows: RDD[Row], request: BuildRequest, mode: String,
      stored: Option[DataFrame]): Unit = {
    val sealing = request.sealing.getOrElse(
      return IndexTables.writeFileTable(spark, rows, request.dataPath, mode, stored))
    val cached = spark.createDataFrame(rows, TableSchemas.FileTable).persist(StorageLevel.MEMORY_AND_DISK)
    try {
      // Each file keeps a plaintext row, so the table lists it: a listing row when all its columns are sealed.
      val sealedOnly = request.columns.forall(request.sealedColumns)
      val listing = cached.where(col("column") === request.columns.head).select(col("file_id"), col("file_path"),
          col("file_size"), col("file_mtime"), lit(SealedTable.ListingColumn).as("column"), lit(0L).as("num_rows"),
          lit(0L).as("num_nulls"), lit(0L).as("ndv"), lit(Sbbf.ofBytes(Sbbf.MinBytes).toBytes).as("filter"))
      val plain = cached.where(!col("column").isin(request.sealedColumns.toSeq: _*))
      IndexTables.writeFileTable(if (sealedOnly) listing else plain, request.dataPath, mode, stored)
      SealedTable.write(cached, request.dataPath, sealing.masterKeys, sealing.options)
    } finally cached.unpersist()
  }

  /**
   * Writes `rows` (of `TableSchemas.ZoneInput`) into the zone table of the version, but the sealed columns' rows,
   * filters inline, into its sealed zone table (`SealedTable`): no block of theirs is in plaintext `blocks/`.
   * Computed once, cached while both tables are written, as `writeFileRows` does.
   */
  def writeZoneRows(rows: DataFrame, request: BuildRequest, stored: Option[DataFrame]): Unit = {
    val sealing = request.sealing.getOrElse(return ZoneTable.write(rows, request.dataPath, "errorifexists", stored))
    val cached = rows.persist(StorageLevel.MEMORY_AND_DISK)
    try {
      ZoneTable.write(cached.where(!col("column").isin(request.sealedColumns.toSeq: _*)), request.dataPath,
        "errorifexists", stored)
      SealedTable.write(cached, request.dataPath, sealing.masterKeys, sealing.options, zones = true)
    } finally cached.unpersist()
  }
}
