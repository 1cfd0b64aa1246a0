package hsbloom

import org.apache.spark.sql.{DataFrame, Encoders, Row, SparkSession}
import org.apache.spark.sql.types._
import org.apache.spark.util.SerializableConfiguration

/**
 * The two Parquet tables of an index version (schemas in docs/build.md), and
 * the one place that writes and reads them. Everything that produces rows of
 * a file-level or global table (the build, a refresh carrying rows over from an
 * older version) goes through `writeFileTable` / `writeGlobalTable`, so the
 * physical layout of a version is decided here alone: the file-level table
 * gets the block-addressable copy of its filters (`FilterBlocks`) as it is written.
 */
object IndexTables {
  val FileTableSchema: StructType = new StructType()
    .add("file_id", LongType, nullable = false)
    .add("file_path", StringType, nullable = false)
    .add("file_size", LongType, nullable = false)
    .add("file_mtime", LongType, nullable = false)
    .add("column", StringType, nullable = false)
    .add("num_rows", LongType, nullable = false)
    .add("num_nulls", LongType, nullable = false)
    .add("ndv", LongType, nullable = false)
    .add("filter", BinaryType, nullable = false)

  val GlobalTableSchema: StructType = new StructType()
    .add("column", StringType, nullable = false)
    .add("chunk_index", IntegerType, nullable = false)
    .add("num_chunks", IntegerType, nullable = false)
    .add("filter_bytes", LongType, nullable = false)
    .add("chunk", BinaryType, nullable = false)

  /** The file-level table's directory inside a version's data directory. */
  def filesPath(dataPath: String): String = new org.apache.hadoop.fs.Path(dataPath, "files").toString

  /** The global table's directory inside a version's data directory. */
  def globalPath(dataPath: String): String = new org.apache.hadoop.fs.Path(dataPath, "global").toString

  /**
   * Writes rows of `FileTableSchema` (in that column order) into the version at
   * `dataPath`; `mode` is "errorifexists" for the first write, "append" after.
   */
  def writeFileTable(rows: DataFrame, dataPath: String, mode: String): Unit = {
    val spark = rows.sparkSession
    val conf = new SerializableConfiguration(spark.sessionState.newHadoopConf())
    // A Dataset operation (not an RDD round trip), so that what the caller
    // attached to `rows` (an Observation, for example) still sees the write.
    val withBlocks = rows.select(FileTableSchema.fieldNames.map(rows.col).toIndexedSeq: _*)
      .mapPartitions((part: Iterator[Row]) => FilterBlocks.attach(part, dataPath, conf.value))(
        Encoders.row(StoredFileTableSchema))
    write(withBlocks, mode, filesPath(dataPath))
  }

  /** The file-level table as stored: `FileTableSchema` and the filters' block addresses (`FilterBlocks`). */
  val StoredFileTableSchema: StructType = StructType(FileTableSchema.fields ++ FilterBlocks.Columns)

  /** Writes rows of `GlobalTableSchema` into the version at `dataPath`. */
  def writeGlobalTable(rows: DataFrame, dataPath: String, mode: String): Unit =
    write(rows.select(GlobalTableSchema.fieldNames.map(rows.col).toIndexedSeq: _*), mode, globalPath(dataPath))

  /** The side files with the filters' blocks (`FilterBlocks`) inside a version's data directory. */
  def blocksPath(dataPath: String): String = new org.apache.hadoop.fs.Path(dataPath, FilterBlocks.Dir).toString

  /** The file-level table of the version at `dataPath`, as a DataFrame (for refresh and tests). */
  def readFileTable(spark: SparkSession, dataPath: String): DataFrame = readFileTables(spark, Seq(dataPath))

  /** The file-level tables of several data directories (the parts of one version) as one DataFrame. */
  def readFileTables(spark: SparkSession, dataPaths: Seq[String]): DataFrame =
    spark.read.schema(FileTableSchema).parquet(dataPaths.map(filesPath): _*)

  /** Like `readFileTables`, with the block columns `writeFileTable` stores (`StoredFileTableSchema`). */
  def readStoredFileTables(spark: SparkSession, dataPaths: Seq[String]): DataFrame =
    spark.read.schema(StoredFileTableSchema).parquet(dataPaths.map(filesPath): _*)

  /** The global table of the version at `dataPath`, as a DataFrame. */
  def readGlobalTable(spark: SparkSession, dataPath: String): DataFrame =
    spark.read.schema(GlobalTableSchema).parquet(globalPath(dataPath))

  /**
   * The serialized global filter of `column` (header + bitset) of the version at
   * `dataPath`, read with parquet-java through the Hadoop FileSystem, without a
   * SparkSession: executors load it for the join filters (`GlobalFilter`).
   * Throws when the table is missing, or the column's chunks are incomplete or
   * disagree on their sizes.
   */
  def readGlobalFilter(dataPath: String, column: String, conf: org.apache.hadoop.conf.Configuration): Array[Byte] = {
    import org.apache.hadoop.fs.Path
    import org.apache.parquet.hadoop.ParquetReader
    import org.apache.parquet.hadoop.example.GroupReadSupport
    val table = new Path(globalPath(dataPath))
    val fs = table.getFileSystem(conf)
    val parts = fs.listStatus(table).filter(s => s.isFile && !s.getPath.getName.startsWith("_") &&
      !s.getPath.getName.startsWith(".")).map(_.getPath)
    val chunks = scala.collection.mutable.TreeMap[Int, Array[Byte]]()
    var expected: Option[(Int, Long)] = None
    parts.foreach { part =>
      val reader = ParquetReader.builder(new GroupReadSupport(), part).withConf(conf).build()
      try {
        var row = reader.read()
        while (row != null) {
          if (row.getString("column", 0) == column) {
            val shape = (row.getInteger("num_chunks", 0), row.getLong("filter_bytes", 0))
            if (expected.exists(_ != shape)) throw new IllegalStateException(s"global table $table: chunks of $column disagree on their sizes")
            expected = Some(shape)
            chunks(row.getInteger("chunk_index", 0)) = row.getBinary("chunk", 0).getBytes
          }
          row = reader.read()
        }
      } finally reader.close()
    }
    val (numChunks, filterBytes) = expected.getOrElse(throw new IllegalStateException(s"global table $table has no filter for $column"))
    val bytes = chunks.values.foldLeft(new java.io.ByteArrayOutputStream())((out, c) => { out.write(c); out }).toByteArray
    if (chunks.size != numChunks || chunks.keys.toSeq != (0 until numChunks) || bytes.length.toLong != filterBytes) {
      throw new IllegalStateException(s"global table $table: the filter of $column is incomplete " +
        s"(${chunks.size} of $numChunks chunks, ${bytes.length} of $filterBytes bytes)")
    }
    bytes
  }

  /**
   * Filters are about half ones at random, which no codec or dictionary
   * shrinks, so both are off rather than spending CPU on them.
   */
  private def write(table: DataFrame, mode: String, path: String): Unit =
    table.write.mode(mode).option("compression", "uncompressed").option("parquet.enable.dictionary", "false").parquet(path)
}
