package hsbloom.refresh

import java.net.URI

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{broadcast, col, count, input_file_name, lit, sum}
import org.apache.spark.sql.types.{LongType, StructType}

import hsbloom.format.{FileKey, TableSchemas}
import hsbloom.index.IndexTables
import hsbloom.sbbf.Sbbf
import hsbloom.shim.CollectionConverters._

/**
 * The work on data and tables behind a refresh (`RefreshIndex`, `IncrementalRefresh`):
 *
 *  - `deltaChanges`: which data files Delta commits added and removed between
 *    two table versions, read from the commit files of `_delta_log`;
 *  - `globalFilterBlocks`: the global filters' sizes in blocks, so the
 *    appended files' values can be built at the same sizes;
 *  - `fileStatistics`: the counts of some files' rows in a version's tables
 *    (to take dropped files out of the summary of a version that refers to
 *    earlier data directories);
 *  - `assemble`: a compacted version: the kept rows of the previous version's
 *    data directories plus the appended files' rows, and each global filter
 *    the OR of theirs.
 *
 * Tables are read and written only through `IndexTables`.
 */
object RefreshData {
  /** A data file a Delta commit touched: `present` is whether it is part of the table after the last commit read. */
  final case class Touched(path: String, key: String, size: Long, mtime: Long, present: Boolean)

  /** Per column, sums over some files' rows of a version's file tables. */
  final case class FileSums(numRows: Long, numNulls: Long, ndvSum: Long, fileFilterBytes: Long, numFiles: Long)

  /**
   * The data files that Delta commits `fromVersion` to `toVersion` (inclusive)
   * touched, sorted by key: `present` is whether the file is part of the table
   * after `toVersion` (added by the last commit that touched it), `path` is
   * absolute (relative paths resolved against the table root as Delta does)
   * and `key` is the file key the index matches files by. None when a commit
   * file is missing (the log was cleaned up): the caller then compares full
   * listings instead.
   *
   * A commit that removes and re-adds one path (a new deletion vector) leaves
   * the file present: the index holds filters over a file's physical rows, so a
   * deletion vector does not change them (docs/refresh.md).
   */
  def deltaChanges(spark: SparkSession, tablePath: String, fromVersion: Long, toVersion: Long): Option[Seq[Touched]] = {
    val root = new Path(tablePath)
    val logDir = new Path(root, "_delta_log")
    val fs = logDir.getFileSystem(spark.sessionState.newHadoopConf())
    val commits = (fromVersion to toVersion).map(v => v -> new Path(logDir, f"$v%020d.json"))
    if (commits.isEmpty) return Some(Nil)
    if (!commits.forall { case (_, p) => fs.exists(p) }) return None
    val version = commits.map { case (v, p) => FileKey.of(fs.makeQualified(p).toUri) -> v }.toMap
    val schema = StructType.fromDDL(
      "add struct<path: string, size: long, modificationTime: long>, remove struct<path: string>")
    val actions = spark.read.schema(schema).json(commits.map(_._2.toString): _*)
      .where(col("add").isNotNull || col("remove").isNotNull)
      .select(input_file_name(), col("add.path"), col("add.size"), col("add.modificationTime"), col("remove.path"))
      .collect()
    // Per path: the last commit that touched it decides; within a commit, an add wins (a deletion-vector update).
    final case class Touch(version: Long, added: Boolean, size: Long, mtime: Long)
    val last = scala.collection.mutable.HashMap[String, (String, Touch)]()
    actions.foreach { r =>
      val v = version(FileKey.scanned(r.getString(0)))
      val added = !r.isNullAt(1)
      val path = absolute(root, if (added) r.getString(1) else r.getString(4)).toString
      val touch = if (added) Touch(v, added = true, r.getLong(2), r.getLong(3)) else Touch(v, added = false, 0L, 0L)
      val key = FileKey.listed(path)
      val keep = last.get(key).forall { case (_, t) => t.version < v || (t.version == v && added) }
      if (keep) last(key) = path -> touch
    }
    Some(last.toSeq.sortBy(_._1).map { case (key, (path, t)) => Touched(path, key, t.size, t.mtime, t.added) })
  }

  /** A Delta action's path (a URI, relative to the table root unless absolute) as a Hadoop path. */
  private def absolute(root: Path, actionPath: String): Path = {
    val p = new Path(new URI(actionPath))
    if (p.isAbsolute) p else new Path(root, p)
  }

  /**
   * The number of 32-byte blocks of a global filter whose serialization is
   * `total` bytes long (the build summary's `global_filter_bytes`); no table is read.
   */
  def globalFilterBlocks(column: String, total: Long): Int = {
    // The serialization is a header of a few bytes and a power-of-two bitset (at least 2 KiB for a global filter).
    val bitset = java.lang.Long.highestOneBit(total)
    if (bitset > Int.MaxValue || Sbbf.header(bitset.toInt).length + bitset != total) {
      throw new IllegalStateException(s"global filter of '$column': impossible size $total")
    }
    (bitset / 32).toInt
  }

  /**
   * Per column of `columns`, the sums over the rows of the files `ids` in the
   * file tables of `dataPaths`. Reads only small columns.
   */
  def fileStatistics(spark: SparkSession, dataPaths: Seq[String], ids: Seq[Long], columns: Seq[String]): Map[String, FileSums] =
    columnSums(IndexTables.readStoredFileTables(spark, dataPaths).where(col("file_id").isin(ids: _*)), columns)

  /** Per column of `columns`, the sums over `stored`, rows of `TableSchemas.StoredFileTable` (its small columns only). */
  private def columnSums(stored: DataFrame, columns: Seq[String]): Map[String, FileSums] = {
    val sums = stored
      .groupBy("column", "bitset_bytes")
      .agg(sum("num_rows"), sum("num_nulls"), sum("ndv"), count(lit(1)))
      .collect()
    columns.map { c =>
      val rows = sums.filter(_.getString(0) == c)
      // The stored filter is the Parquet header for its bitset size, then the bitset (none when it did not parse).
      val filterBytes = rows.map { r =>
        val bitset = r.getInt(1)
        r.getLong(5) * (if (bitset == 0) 0L else Sbbf.header(bitset).length.toLong + bitset)
      }.sum
      c -> FileSums(rows.map(_.getLong(2)).sum, rows.map(_.getLong(3)).sum, rows.map(_.getLong(4)).sum, filterBytes,
        rows.map(_.getLong(5)).sum)
    }.toMap
  }

  /**
   * The sealed table (`SealedTable`) of a compacted version at `newPath`: the sealed rows of `oldPaths` whose
   * file ids are in `keptIds` and those built for the appended files at `appendedPath`, read with the session's
   * settings and the source read's (`sealing.readOptions`: its crypto factory), sealed again as a build seals
   * (`sealing`: the keys the files name now). A compacted version has no zones, sealed or not.
   */
  def assembleSealed(spark: SparkSession, oldPaths: Seq[String], appendedPath: Option[String], newPath: String,
      keptIds: Seq[Long], sealing: hsbloom.indexing.EncryptedColumns.Sealing): Unit = {
    import hsbloom.index.SealedTable
    def read(paths: Seq[String]): Option[DataFrame] = {
      val tables = paths.map(SealedTable.path).filter { p =>
        val path = new Path(p)
        path.getFileSystem(spark.sessionState.newHadoopConf()).exists(path)
      }
      if (tables.isEmpty) None
      else Some(spark.read.options(sealing.readOptions).schema(TableSchemas.FileTable).parquet(tables: _*))
    }
    val kept = spark.createDataFrame(keptIds.map(id => Row(id)).asJava,
      new StructType().add("file_id", LongType, nullable = false))
    val carried = read(oldPaths).map(_.join(broadcast(kept), "file_id"))
    val rows = (carried.toSeq ++ read(appendedPath.toSeq)).map(_.select(TableSchemas.FileTable.fieldNames.map(col)
      .toIndexedSeq: _*)).reduceOption(_.unionByName(_))
    rows.foreach(SealedTable.write(_, newPath, sealing.masterKeys, sealing.options))
  }

  /**
   * The sealed global filters (`SealedGlobal`) of a compacted version at `newPath`: per sealed column of `sealing`
   * the OR of its filters in `paths` (the previous version's directories and the appended files'), decrypted
   * with the session's settings and the source read's, and their counts summed (upper bounds, as the filter keeps
   * the deleted files' values), sealed again with the keys the files name now. Read whole on the driver (a global
   * filter is at most `spark.hsbloom.join.globalFilter.maxBytes`-sized to be used at all). Throws when one cannot
   * be read: the refresh fails and the previous version stays.
   */
  def assembleSealedGlobal(spark: SparkSession, paths: Seq[String], newPath: String,
      sealing: hsbloom.indexing.EncryptedColumns.Sealing): Unit = {
    import hsbloom.index.SealedGlobal
    val conf = spark.sessionState.newHadoopConfWithOptions(sealing.readOptions)
    val loaded = sealing.masterKeys.keys.toSeq.sorted.map { c =>
      c -> SealedGlobal.load(paths, c, conf).fold(why => throw new IllegalStateException(
        s"the sealed global filter of '$c' cannot be read with this session's keys: $why"), identity)
    }
    val chunks = spark.createDataFrame(loaded.map { case (c, l) =>
      Row(c, 0, 1, l.serialized.length.toLong, l.serialized) }.asJava, TableSchemas.GlobalTable)
    SealedGlobal.write(spark, chunks, loaded.map { case (c, l) => c -> l.counts }.toMap, newPath, sealing.masterKeys,
      sealing.options)
  }

  /**
   * Writes a compacted version at `newPath`: the rows of the file tables of
   * `oldPaths` (the previous version's data directories) whose file ids are
   * in `keptIds`, the rows built for the appended files at `appendedPath`
   * (None: no file was appended), and (with `withGlobal`) each global filter
   * as the OR of the filters of all those directories, chunk by chunk (all
   * built at one size, so their chunks line up). Returns per column of
   * `columns` the sums over the new file table, read back once it is written
   * (its small columns only): Spark 3.5 never fulfils an `Observation` of
   * this write, so the sums are not observed during it.
   */
  def assemble(spark: SparkSession, oldPaths: Seq[String], appendedPath: Option[String], newPath: String,
      keptIds: Seq[Long], columns: Seq[String], withGlobal: Boolean): Map[String, FileSums] = {
    val keptRows = keptIds.map(id => Row(id))
    val kept = spark.createDataFrame(keptRows.asJava, new StructType().add("file_id", LongType, nullable = false))
    // File ids are unique across a version's directories (docs/refresh.md), so the kept ids pick each row once.
    val carried = IndexTables.readFileTables(spark, oldPaths, Some(kept))
    val appended = appendedPath.map(p => IndexTables.readFileTables(spark, Seq(p)))
    IndexTables.writeFileTable(appended.map(carried.unionByName(_)).getOrElse(carried), newPath, "errorifexists")
    if (withGlobal) writeMergedGlobal(spark, oldPaths ++ appendedPath, newPath)
    columnSums(IndexTables.readStoredFileTables(spark, Seq(newPath)), columns)
  }

  /** A global filter chunk OR-ed over `parts` data directories. */
  private final case class Chunk(numChunks: Int, filterBytes: Long, bytes: Array[Byte], parts: Int)

  /** Each global chunk as the OR of the same chunk of every one of `paths`; any mismatch is an error. */
  private def writeMergedGlobal(spark: SparkSession, paths: Seq[String], newPath: String): Unit = {
    val all = paths.map(IndexTables.readGlobalTable(spark, _)).reduce(_.unionByName(_))
    val described = paths.mkString(", ")
    val merged = all.rdd.map { r =>
      (r.getString(0), r.getInt(1)) -> Chunk(r.getInt(2), r.getLong(3), r.getAs[Array[Byte]](4), 1)
    }.reduceByKey { (a, b) =>
      if (a.numChunks != b.numChunks || a.filterBytes != b.filterBytes || a.bytes.length != b.bytes.length) {
        throw new IllegalStateException(s"global filter chunks do not line up between $described; run a full refresh")
      }
      val or = new Array[Byte](a.bytes.length)
      var i = 0
      while (i < or.length) { or(i) = (a.bytes(i) | b.bytes(i)).toByte; i += 1 }
      Chunk(a.numChunks, a.filterBytes, or, a.parts + b.parts)
    }.map { case ((column, index), c) =>
      if (c.parts != paths.size) {
        throw new IllegalStateException(s"global filter chunk $index of column '$column' is in ${c.parts} of " +
          s"${paths.size} data directories ($described); run a full refresh")
      }
      Row(column, index, c.numChunks, c.filterBytes, c.bytes)
    }
    IndexTables.writeGlobalTable(spark.createDataFrame(merged, TableSchemas.GlobalTable), newPath, "errorifexists")
  }
}
