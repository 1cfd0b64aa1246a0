package hsbloom.index

import org.apache.hadoop.conf.Configuration
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, Encoders, Row, SparkSession}
import org.apache.spark.sql.functions.lit
import org.apache.spark.sql.types._
import org.apache.spark.util.SerializableConfiguration

import hsbloom.format.{Checksums, Layout}
import hsbloom.format.TableSchemas.{FileTable, FilterOrdinal, FilterSource, GlobalTable, HashedFilter, StoredFileTable,
  StoredGlobalTable}

/**
 * The two Parquet tables of an index version (schemas in docs/design/build.md), and
 * the one place that writes and reads them. Everything that produces rows of
 * a file-level or global table (the build, a refresh carrying rows over from an
 * older version) goes through `writeFileTable` / `writeGlobalTable`, so the
 * physical layout of a version is decided here alone: a file-level row's
 * filter is stored once, in its blocks (`FilterBlocks`), as the row is written,
 * and read back whole by `StoredFilters`.
 */
object IndexTables {
  /** The file-level table's directory inside a version's data directory. */
  def filesPath(dataPath: String): String = new org.apache.hadoop.fs.Path(dataPath, Layout.FilesTable).toString

  /** The global table's directory inside a version's data directory. */
  def globalPath(dataPath: String): String = new org.apache.hadoop.fs.Path(dataPath, Layout.GlobalTable).toString

  /** `writeFileTable` without stored rows (an overload, not a default: Py4J callers see no defaults). */
  def writeFileTable(rows: DataFrame, dataPath: String, mode: String): Unit = writeFileTable(rows, dataPath, mode, None)

  /**
   * Writes rows of `FileTable` (in that column order) into the version at
   * `dataPath`; `mode` is "errorifexists" for the first write, "append" after.
   * `stored`: rows already stored (`storeFileRows`: the files adopted from their
   * own filters, docs/design/adoption.md) written in the same write.
   */
  def writeFileTable(rows: DataFrame, dataPath: String, mode: String, stored: Option[DataFrame]): Unit = {
    val spark = rows.sparkSession
    val conf = new SerializableConfiguration(spark.sessionState.newHadoopConf())
    val source = if (rows.columns.contains(FilterSource)) rows.col(FilterSource) else lit(HashedFilter)
    // A Dataset operation (not an RDD round trip), so that what the caller
    // attached to `rows` (an Observation, for example) still sees the write.
    val withBlocks = rows.select((FileTable.fieldNames.map(rows.col).toIndexedSeq :+ source): _*)
      .mapPartitions((part: Iterator[Row]) => storeFileRows(part, dataPath, conf.value))(Encoders.row(StoredFileTable))
    write(stored.fold(withBlocks)(s => withBlocks.union(s)), mode, filesPath(dataPath))
  }

  /**
   * `writeFileTable` for hashed rows of `FileTable` that an RDD makes (the build's): each filter is stored in
   * the task that made its row, before Spark converts the rows for the writer, so the filter bytes (most of a build's
   * output) are never converted.
   */
  def writeFileTable(spark: SparkSession, rows: RDD[Row], dataPath: String, mode: String,
      stored: Option[DataFrame]): Unit = {
    val conf = new SerializableConfiguration(spark.sessionState.newHadoopConf())
    val storedRows = rows.mapPartitions { part =>
      storeFileRows(part.map(r => Row.fromSeq(r.toSeq :+ HashedFilter)), dataPath, conf.value)
    }
    val table = spark.createDataFrame(storedRows, StoredFileTable)
    write(stored.fold(table)(table.union), mode, filesPath(dataPath))
  }

  /** Writes rows of `StoredFileTable` (`storeFileRows`' output) as the file table of the version at `dataPath`. */
  def writeStoredFileTable(stored: DataFrame, dataPath: String, mode: String): Unit =
    write(stored, mode, filesPath(dataPath))

  /**
   * Rows of `FileTable` followed by their `FilterSource` as rows of `StoredFileTable`: each filter
   * written into this task's side file of `<dataPath>/blocks/` (`FilterBlocks`), the row with its address.
   */
  def storeFileRows(rows: Iterator[Row], dataPath: String, conf: Configuration): Iterator[Row] = {
    val n = FileTable.size
    // FilterBlocks drops the filter and appends after the row's other fields; `filter_source` (then the
    // filter's place) is moved behind them, to the end.
    FilterBlocks.attach(rows, dataPath, conf).map { r =>
      val fields = r.toSeq
      Row.fromSeq(fields.take(n - 1) ++ fields.drop(n) :+ fields(n - 1))
    }
  }

  /** Writes rows of `GlobalTable` into the version at `dataPath`, each with its chunk's checksum. */
  def writeGlobalTable(rows: DataFrame, dataPath: String, mode: String): Unit = {
    val seed = Checksums.directorySeed(dataPath)
    val withChecksums = rows.select(GlobalTable.fieldNames.map(rows.col).toIndexedSeq: _*)
      .map((r: Row) => Row.fromSeq(r.toSeq :+ Checksums.chunk(r.getAs[Array[Byte]](4), r.getString(0), r.getInt(1),
        r.getInt(2), r.getLong(3), seed)))(Encoders.row(StoredGlobalTable))
    writeFilters(withChecksums, mode, globalPath(dataPath))
  }

  /** The side files with the filters' blocks (`FilterBlocks`) inside a version's data directory. */
  def blocksPath(dataPath: String): String = new org.apache.hadoop.fs.Path(dataPath, FilterBlocks.Dir).toString

  /** The file-level table of the version at `dataPath`, filters read back whole (`readFileTables`). */
  def readFileTable(spark: SparkSession, dataPath: String): DataFrame = readFileTables(spark, Seq(dataPath))

  /**
   * The file-level tables of `dataPaths` as rows of `FileTable` then `FilterSource`, each
   * filter read back whole from its blocks (`StoredFilters`), for copying into
   * a new version (and for tests): every row and every stripe of blocks is checked
   * against its checksums as it is read, and the job fails naming the file
   * when one does not match, so damage is never carried into a version whose
   * checksums would vouch for it. A filter that did not parse when it was
   * written comes back empty (and is stored without blocks again).
   */
  def readFileTables(spark: SparkSession, dataPaths: Seq[String]): DataFrame = readFileTables(spark, dataPaths, None)

  /** `readFileTables` of the rows whose `file_id` is in `keptIds` (a one-column DataFrame) only. */
  def readFileTables(spark: SparkSession, dataPaths: Seq[String], keptIds: Option[DataFrame]): DataFrame = {
    import org.apache.spark.sql.functions.{broadcast, col, input_file_name}
    val conf = new SerializableConfiguration(spark.sessionState.newHadoopConf())
    val all = readStoredFileTables(spark, dataPaths)
      .select((StoredFileTable.fieldNames.map(col) :+ input_file_name().as("_part")).toIndexedSeq: _*)
    // A join on file_id keeps it first and the other columns in order.
    val stored = keptIds.map(ids => all.join(broadcast(ids), "file_id")).getOrElse(all)
    stored.mapPartitions { (rows: Iterator[Row]) =>
        val filters = new StoredFilters.Reader(conf.value)
        rows.map { r =>
          val part = new org.apache.hadoop.fs.Path(r.getString(r.length - 1))
          val dataPath = part.getParent.getParent.toString
          val values = r.toSeq.take(FileTable.size - 1) // the stored fields before the block columns
          val source = Option(r.getString(StoredFileTable.fieldIndex(FilterSource))).getOrElse(HashedFilter)
          Row.fromSeq(values.take(FilterOrdinal) ++ Seq(filters.verified(r, part, dataPath)) ++
            values.slice(FilterOrdinal, FileTable.size - 1) :+ source)
        }
      }(Encoders.row(FileTable.add(FilterSource, StringType, nullable = false)))
  }

  /** The stored rows of the file-level tables of `dataPaths` (`StoredFileTable`: no filters). */
  def readStoredFileTables(spark: SparkSession, dataPaths: Seq[String]): DataFrame =
    spark.read.schema(StoredFileTable).parquet(dataPaths.map(filesPath): _*)

  /**
   * The global table of the version at `dataPath`, as a DataFrame of
   * `GlobalTable`; each chunk is checked against its checksum as it is
   * read (the job fails naming the table when one does not match).
   */
  def readGlobalTable(spark: SparkSession, dataPath: String): DataFrame = {
    val seed = Checksums.directorySeed(dataPath)
    val table = globalPath(dataPath)
    spark.read.schema(StoredGlobalTable).parquet(table).map { (r: Row) =>
      // A null checksum: written before checksums (data layout 2), carried as it was trusted then.
      if (!r.isNullAt(5) && Checksums.chunk(r.getAs[Array[Byte]](4), r.getString(0), r.getInt(1), r.getInt(2),
          r.getLong(3), seed) != r.getLong(5)) {
        throw new IllegalStateException(s"damaged index file in $table: chunk ${r.getInt(1)} of the global filter " +
          s"of '${r.getString(0)}' fails its checksum; refresh the index with mode='full'")
      }
      Row.fromSeq(r.toSeq.take(5))
    }(Encoders.row(GlobalTable))
  }

  /**
   * The serialized global filter of `column` (header + bitset) of the version at
   * `dataPath`, read with parquet-java through the Hadoop FileSystem, without a
   * SparkSession: executors load it for the join filters (`GlobalFilter`).
   * Throws when the table is missing, or the column's chunks are incomplete or
   * disagree on their sizes.
   */
  def readGlobalFilter(dataPath: String, column: String, conf: Configuration): Array[Byte] = {
    import org.apache.hadoop.fs.Path
    import org.apache.parquet.hadoop.ParquetReader
    import org.apache.parquet.hadoop.example.GroupReadSupport
    val table = new Path(globalPath(dataPath))
    val fs = table.getFileSystem(conf)
    val parts = fs.listStatus(table).filter(s => s.isFile && !s.getPath.getName.startsWith("_") &&
      !s.getPath.getName.startsWith(".")).map(_.getPath)
    val chunks = scala.collection.mutable.TreeMap[Int, Array[Byte]]()
    var expected: Option[(Int, Long)] = None
    val seed = Checksums.directorySeed(dataPath)
    parts.foreach { part =>
      val reader = ParquetReader.builder(new GroupReadSupport(), part).withConf(conf).build()
      try {
        var row = reader.read()
        while (row != null) {
          if (row.getString("column", 0) == column) {
            if (!row.getType.containsField(Checksums.ChunkChecksum)) {
              throw new IllegalStateException(s"global table file $part has no chunk checksums (written by an " +
                "older hsbloom); refresh the index with mode='full'")
            }
            val shape = (row.getInteger("num_chunks", 0), row.getLong("filter_bytes", 0))
            val index = row.getInteger("chunk_index", 0)
            val chunk = row.getBinary("chunk", 0).getBytes
            if (row.getLong(Checksums.ChunkChecksum, 0) != Checksums.chunk(chunk, column, index, shape._1, shape._2, seed)) {
              val problem = s"chunk $index of the global filter of '$column' fails its checksum"
              IndexDamage.record(part, problem)
              throw new IllegalStateException(s"damaged index file $part: $problem")
            }
            if (expected.exists(_ != shape)) throw new IllegalStateException(s"global table $table: chunks of $column disagree on their sizes")
            expected = Some(shape)
            chunks(index) = chunk
          }
          row = reader.read()
        }
      } finally reader.close()
    }
    val (numChunks, filterBytes) = expected.getOrElse(throw new IllegalStateException(s"global table $table has no filter for $column"))
    val bytes = chunks.values.foldLeft(new java.io.ByteArrayOutputStream())((out, c) => { out.write(c); out }).toByteArray
    if (chunks.size != numChunks || chunks.keys.toSeq != (0 until numChunks) || bytes.length.toLong != filterBytes) {
      val problem = s"the global filter of $column is incomplete (${chunks.size} of $numChunks chunks, " +
        s"${bytes.length} of $filterBytes bytes)"
      IndexDamage.record(new Path(dataPath), table, problem)
      throw new IllegalStateException(s"global table $table: $problem")
    }
    bytes
  }

  /**
   * Writes a table of small columns (the file and zone tables: their filters
   * are in `blocks/`) dictionary-encoded and zstd-compressed: a file's rows
   * repeat its path, the column name, the side file's name and sizes, so a
   * row takes about 27 bytes instead of 225, 16 of them its two checksums,
   * and the index stays near the filter bytes it holds however small its
   * filters (docs/design/scale.md).
   */
  private[index] def write(table: DataFrame, mode: String, path: String): Unit =
    table.write.mode(mode).option("compression", "zstd").option("parquet.enable.dictionary", "true").parquet(path)

  /**
   * Writes a table of filter bytes (the global table): filters are about half
   * ones at random, which no codec or dictionary shrinks, so both are off
   * rather than spending CPU on them.
   */
  private def writeFilters(table: DataFrame, mode: String, path: String): Unit =
    table.write.mode(mode).option("compression", "uncompressed").option("parquet.enable.dictionary", "false").parquet(path)
}
