package hsbloom.index

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetReader
import org.apache.parquet.hadoop.example.GroupReadSupport
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.sql.types.{LongType, StructType}

import hsbloom.format.{Layout, TableSchemas}
import hsbloom.sbbf.Sbbf

/**
 * The global filters of encrypted columns (docs/design/encryption.md): per data directory, `sealed_global/`, the
 * rows of `TableSchemas.GlobalTable` (the filter in chunks) with the column's counts, written as `SealedTable`
 * writes `sealed/` (through the source's crypto factory, every field under the column's master key, one write per
 * key). Each column also has one counts row (`chunk_index` -1, no chunk): its rows, nulls, distinct estimate and
 * filter size, which the log leaves out for sealed columns. No checksums: AES-GCM authenticates every page.
 *
 * Read whole, on the driver, with the session's keys (`load`); a join's executors get the driver's decrypted
 * copy through a broadcast of that job (`Plain`), as the plaintext filter would reach them from storage.
 */
object SealedGlobal {
  val Dir: String = Layout.SealedGlobalTable

  /** The row of a column's counts: `chunk_index` is this, `chunk` empty. */
  val CountsRow: Int = -1

  val Schema: StructType = TableSchemas.GlobalTable
    .add("num_rows", LongType, nullable = false)
    .add("num_nulls", LongType, nullable = false)
    .add("ndv", LongType, nullable = false)

  /** What a sealed column's global filter counts (over the files a data directory was built from). */
  final case class Counts(numRows: Long, numNulls: Long, ndv: Long, filterBytes: Long)

  /** A version's sealed global filter of a column: the OR of its directories' filters, and their counts summed. */
  final case class Loaded(serialized: Array[Byte], counts: Counts)

  def path(dataPath: String): String = new Path(dataPath, Dir).toString

  /** Whether the version at `dataPath` has a sealed global table. */
  def exists(dataPath: String, conf: Configuration): Boolean = {
    val dir = new Path(path(dataPath))
    dir.getFileSystem(conf).exists(dir)
  }

  /**
   * Writes `chunks` (rows of `TableSchemas.GlobalTable`) of the columns of `masterKeys` (column -> master key) and each
   * such column's `counts` into the sealed global table of `dataPath`, one write per master key;
   * `options(masterKey, fields)`: `SealedTable.writeOptions`.
   */
  def write(spark: SparkSession, chunks: DataFrame, counts: Map[String, Counts], dataPath: String,
      masterKeys: Map[String, String], options: (String, Seq[String]) => Map[String, String]): Unit = {
    val countRows = counts.toSeq.filter(c => masterKeys.contains(c._1)).map { case (c, n) =>
      Row(c, CountsRow, 0, n.filterBytes, Array.emptyByteArray, n.numRows, n.numNulls, n.ndv)
    }
    val rows = chunks.select(TableSchemas.GlobalTable.fieldNames.map(col).toIndexedSeq: _*)
      .withColumn("num_rows", lit(0L)).withColumn("num_nulls", lit(0L)).withColumn("ndv", lit(0L))
      .unionByName(spark.createDataFrame(spark.sparkContext.parallelize(countRows, 1), Schema))
    val fields = Schema.fieldNames.toSeq
    masterKeys.groupBy(_._2).toSeq.sortBy(_._1).foreach { case (key, columns) =>
      rows.where(col("column").isin(columns.keys.toSeq: _*)).coalesce(1)
        .write.mode("append").options(options(key, fields))
        .option("compression", "uncompressed").option("parquet.enable.dictionary", "false")
        .parquet(path(dataPath))
    }
  }

  /**
   * The sealed global filters of `column` in `dataPaths`, OR-ed, and their counts summed (rows, nulls and
   * distinct values: upper bounds for the version, whose deleted files' values stay in the filter), read whole
   * with `conf`'s keys; Left why not (no keys, a KMS that refuses, a failed authentication, filters that do not
   * line up).
   */
  def load(dataPaths: Seq[String], column: String, conf: Configuration): Either[String, Loaded] = try {
    val each = dataPaths.map(p => readOne(p, column, conf))
    each.collectFirst { case Left(why) => why }.toLeft(each.collect { case Right(l) => l }).flatMap { all =>
      val first = all.head
      if (all.exists(_.serialized.length != first.serialized.length)) {
        Left(s"the sealed global filters of '$column' in ${dataPaths.mkString(", ")} differ in size")
      } else {
        val header = Sbbf.parseHeader(first.serialized)
        val or = first.serialized.clone()
        all.tail.foreach { l =>
          var i = header.headerLength
          while (i < or.length) { or(i) = (or(i) | l.serialized(i)).toByte; i += 1 }
        }
        val c = all.map(_.counts)
        Right(Loaded(or, Counts(c.map(_.numRows).sum, c.map(_.numNulls).sum, c.map(_.ndv).sum, or.length.toLong)))
      }
    }
  } catch {
    case NonFatal(e) => Left(firstLine(e))
  }

  private def firstLine(e: Throwable): String =
    Option(e.getMessage).flatMap(_.linesIterator.toList.headOption).getOrElse(e.getClass.getSimpleName)

  /** The filter and counts of `column` in the sealed global table of `dataPath`; Left why not. */
  private def readOne(dataPath: String, column: String, conf: Configuration): Either[String, Loaded] = {
    val dir = new Path(path(dataPath))
    val fs = dir.getFileSystem(conf)
    if (!fs.exists(dir)) return Left(s"$dir does not exist")
    val chunks = scala.collection.mutable.TreeMap[Int, Array[Byte]]()
    var counts: Option[Counts] = None
    var shape: Option[(Int, Long)] = None
    fs.listStatus(dir).toSeq.map(_.getPath).filter(p => !p.getName.startsWith("_") && !p.getName.startsWith("."))
      .sortBy(_.getName).foreach { part =>
        val reader = ParquetReader.builder(new GroupReadSupport(), part).withConf(conf).build()
        try {
          var r = reader.read()
          while (r != null) {
            if (r.getString("column", 0) == column) {
              val index = r.getInteger("chunk_index", 0)
              if (index == CountsRow) {
                counts = Some(Counts(r.getLong("num_rows", 0), r.getLong("num_nulls", 0), r.getLong("ndv", 0),
                  r.getLong("filter_bytes", 0)))
              } else {
                val s = (r.getInteger("num_chunks", 0), r.getLong("filter_bytes", 0))
                if (shape.exists(_ != s)) return Left(s"$dir: the chunks of '$column' disagree on their sizes")
                shape = Some(s)
                chunks(index) = r.getBinary("chunk", 0).getBytes
              }
            }
            r = reader.read()
          }
        } finally reader.close()
      }
    val (numChunks, filterBytes) = shape.getOrElse(return Left(s"$dir has no global filter of '$column'"))
    val n = counts.getOrElse(return Left(s"$dir has no counts of '$column'"))
    val out = new java.io.ByteArrayOutputStream()
    chunks.values.foreach(c => out.write(c))
    val bytes = out.toByteArray
    if (chunks.keys.toSeq != (0 until numChunks) || bytes.length.toLong != filterBytes || n.filterBytes != filterBytes) {
      return Left(s"$dir: the global filter of '$column' is incomplete (${chunks.size} of $numChunks chunks)")
    }
    Right(Loaded(bytes, n))
  }

  /**
   * The decrypted filter a join's executors probe: the driver's copy, broadcast, cached on the driver per version,
   * column and crypto settings (`SealedTable.cryptoSettings`), so a session with other settings (none, say) never
   * gets it. Equal (and cached on executors, `GlobalFilter`) by those and the broadcast's id only.
   */
  final case class Plain(crypto: String, broadcastId: Long)(val bytes: Broadcast[Array[Byte]])

  private final case class Key(dataPaths: Seq[String], column: String, crypto: String)

  @volatile private var driverCache: WeighedCache[Key, (Counts, Plain)] = _

  private def cache(maxBytes: Long): WeighedCache[Key, (Counts, Plain)] = {
    if (driverCache == null) synchronized {
      if (driverCache == null) {
        driverCache = WeighedCache[Key, (Counts, Plain)](maxBytes, _._1.filterBytes)
      }
    }
    driverCache
  }

  /**
   * On the driver: the sealed global filter of `column` in `dataPaths`, read with `spark`'s session settings (as
   * planning reads `sealed/`: `IndexCatalog.indexData`), its counts and its broadcast copy; Left why it cannot be
   * read. Loaded once per version, column and crypto settings.
   */
  def forJoin(spark: SparkSession, dataPaths: Seq[String], column: String, maxBytes: Long): Either[String, (Counts, Plain)] = {
    val conf = spark.sessionState.newHadoopConf()
    val key = Key(dataPaths, column, SealedTable.cryptoSettings(conf))
    cache(maxBytes).getIfPresent(key).map(Right(_)).getOrElse {
      load(dataPaths, column, conf).map { l =>
        val b = spark.sparkContext.broadcast(l.serialized)
        val entry = (l.counts, Plain(key.crypto, b.id)(b))
        cache(maxBytes).get(key)(entry)
      }
    }
  }
}
