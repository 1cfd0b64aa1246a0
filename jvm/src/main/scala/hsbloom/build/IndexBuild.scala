package hsbloom.build

import java.net.URI

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.collection.mutable.ArrayBuffer

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.hadoop.fs.Path
import org.apache.spark.{Partitioner, SparkContext}
import org.apache.spark.rdd.{PartitionPruningRDD, RDD, ShuffledRDD}
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._

import hsbloom.index.IndexTables
import hsbloom.sbbf.{ParquetHash, Sbbf}

/**
 * The distributed build of an index version: one scan of the indexed columns
 * gives, per source file and column, an SBBF with row, null and distinct
 * counts, and per column one global SBBF.
 *
 * How the work is split:
 *  1. Map side (the only scan): rows arrive file by file, in column batches
 *     where the scan is columnar; each column of a batch is hashed in one
 *     pass. Each file's hashes are buffered; when the file ends, its filter is
 *     built at an upper bound (the number of non-null values) and folded down
 *     to the target fpp, so a small file gets a small filter. A file read by
 *     several tasks (a split file) sends its parts to be merged. For the global
 *     filters, every hash goes to one of 64 buckets by its top 6 bits (which
 *     fix its block range in a filter of any power-of-two size), and into a
 *     per-column HyperLogLog, which each task sends to every bucket partition.
 *  2. One shuffle, with file keys and bucket keys in separate partitions.
 *  3. Two jobs over that shuffle, at the same time: one writes the file-level
 *     table from the file partitions (running the map side); the other builds
 *     each bucket's block range of the global filters from the bucket
 *     partitions, sized from the merged HyperLogLogs, and writes the global
 *     table in chunks. No filter passes through the driver.
 */
object IndexBuild {
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)
  val NumBuckets: Int = 64
  private val BucketShift = 58 // 64 - log2(NumBuckets)
  /** Hashes one file's column may buffer before its filter is built at a fixed large size instead. */
  val DefaultMaxBufferedHashes: Int = 1 << 22
  /** The distinct count assumed for such a large file (folded down afterwards). */
  private val LargeFileNdv: Long = 1L << 25
  private val BucketChunk = 8192
  /** Hashes a global-filter reducer gathers per bucket before inserting them (2 MiB). */
  private val ReduceBatch = 1 << 18
  /** Hashes a global-filter reducer holds before the filter's size is known (64 MiB); see GlobalReducer. */
  val DefaultGlobalHeldHashes: Long = 1L << 23

  /** One source file as the relation's file index lists it. */
  final case class ListedFile(fileId: Long, path: String, size: Long, mtime: Long)

  /** What to build; parsed from the JSON request that the Python side sends. */
  final case class Request(
      columns: Seq[String],
      files: Seq[ListedFile],
      expectedNumItems: Option[Long],
      fpp: Double,
      globalFilter: Boolean,
      dataPath: String,
      description: String,
      maxBufferedHashes: Int = DefaultMaxBufferedHashes,
      /** Per column, a fixed size (in 32-byte blocks) for the global filter, so a refresh can OR it with the
       *  previous version's filter of that size; columns not listed are sized from their distinct count. */
      globalFilterBlocks: Map[String, Int] = Map.empty,
      /** Hashes a global-filter task holds before it builds at the largest size and folds (a tuning knob). */
      globalHeldHashes: Long = DefaultGlobalHeldHashes)

  object Request {
    def fromJson(json: String): Request = {
      val root = new ObjectMapper().readTree(json)
      def field(name: String): JsonNode =
        Option(root.get(name)).getOrElse(throw new IllegalArgumentException(s"build request lacks '$name'"))
      val files = (0 until field("files").size).map { i =>
        val f = field("files").get(i)
        ListedFile(f.get("file_id").asLong, f.get("path").asText, f.get("size").asLong, f.get("mtime").asLong)
      }
      val expected = field("expected_num_items")
      Request(
        columns = (0 until field("columns").size).map(i => field("columns").get(i).asText),
        files = files,
        expectedNumItems = if (expected.isNull) None else Some(expected.asLong),
        fpp = field("fpp").asDouble,
        globalFilter = field("global_filter").asBoolean,
        dataPath = field("data_path").asText,
        description = field("description").asText,
        maxBufferedHashes = Option(root.get("max_buffered_hashes")).map(_.asInt).getOrElse(DefaultMaxBufferedHashes),
        globalFilterBlocks = Option(root.get("global_filter_blocks")).filterNot(_.isNull)
          .map(_.properties.asScala.map(e => e.getKey -> e.getValue.asInt).toMap).getOrElse(Map.empty),
        globalHeldHashes = Option(root.get("global_held_hashes")).map(_.asLong).getOrElse(DefaultGlobalHeldHashes))
    }
  }

  /** Entry point for Python: runs the build and returns the summary as JSON. */
  def run(df: DataFrame, requestJson: String): String = {
    val request = Request.fromJson(requestJson)
    val summary = withJobDescription(df.sparkSession.sparkContext, request.description) {
      build(df, request)
    }
    new ObjectMapper().writeValueAsString(summary)
  }

  /**
   * Runs `body` with `description` on its jobs. A job group the caller set
   * (create_index sets one per index, to cancel exactly its own jobs) is kept;
   * without one, the jobs get the group `hsbloom-build`.
   */
  private def withJobDescription[T](sc: SparkContext, description: String)(body: => T): T = {
    val keys = Seq("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
    val saved = keys.map(k => k -> sc.getLocalProperty(k))
    if (sc.getLocalProperty("spark.jobGroup.id") == null) sc.setJobGroup("hsbloom-build", description, interruptOnCancel = true)
    else sc.setJobDescription(description)
    try body finally saved.foreach { case (k, v) => sc.setLocalProperty(k, v) }
  }

  /**
   * One key for a file however it is spelled: the file index lists Hadoop
   * paths (`file:/a b/x`), the scan reports URL-encoded URIs (`file:///a%20b/x`).
   * The key is scheme, authority (empty when absent) and the decoded path.
   */
  private[hsbloom] def fileKey(uri: URI): String =
    s"${Option(uri.getScheme).getOrElse("")}://${Option(uri.getAuthority).getOrElse("")}${uri.getPath}"
  private[hsbloom] def listedFileKey(path: String): String = fileKey(new Path(path).toUri)
  private[hsbloom] def scannedFileKey(urlEncoded: String): String = fileKey(new URI(urlEncoded))

  def build(df: DataFrame, request: Request): java.util.Map[String, Any] = {
    val spark = df.sparkSession
    val sc = spark.sparkContext
    val columnTypes = request.columns.map(c => df.schema(df.schema.fieldIndex(resolveName(df, c))).dataType)
    request.columns.zip(columnTypes).foreach { case (c, dt) =>
      if (!ParquetHash.isSupported(dt)) throw new IllegalArgumentException(s"column '$c' has unsupported type $dt")
    }

    val listing = sc.broadcast(request.files.map(f => listedFileKey(f.path) -> f).toMap)
    val filePartitions = math.max(1, math.min(request.files.size, sc.defaultParallelism))
    val globalPartitions = if (!request.globalFilter) 0 else {
      // One task per 128 MiB of source, so a small source does not pay for many small writes, but
      // never more than 32 buckets per task (its slices at the largest filter size: 64 MiB) and at
      // most 4 tasks per core.
      val bySize = (request.files.map(_.size).sum / (128L << 20) + 1).toInt
      val columns = request.columns.size
      math.min(NumBuckets * columns, math.max(2 * columns, math.min(bySize, 4 * sc.defaultParallelism)))
    }
    val settings = MapSettings(columnTypes.toArray, request.expectedNumItems, request.fpp, request.globalFilter,
      request.maxBufferedHashes, globalPartitions)
    val mapped: RDD[(BuildKey, Payload)] = ScanInput.of(df, request.columns.map(c => resolveName(df, c)))
      .mapPartitions(chunks => new MapSide(chunks, settings, listing.value))
    val partitioner = new BuildPartitioner(filePartitions, globalPartitions)
    val shuffled = new ShuffledRDD[BuildKey, Payload, Payload](mapped, partitioner)
      .setSerializer(new BuildRecordSerializer)

    // Two jobs over the one shuffle, run at the same time: the file-level table
    // (this thread; its map stage is the scan) and the global filters (a second
    // thread, whose job waits for the same map stage instead of scanning again).
    val fileStats = sc.collectionAccumulator[FileStats]("hsbloom file statistics")
    val fileRows = PartitionPruningRDD.create(shuffled, _ < filePartitions)
      .mapPartitions(records => reduceFiles(records, settings, request.columns).map { row =>
        fileStats.add(FileStats(row.getLong(0), row.getString(4), row.getLong(5), row.getLong(6), row.getLong(7),
          row.getAs[Array[Byte]](8).length))
        row
      })
    val started = System.nanoTime()
    val (_, global) = alongside(sc) {
      if (request.globalFilter) buildGlobal(spark, request, shuffled, filePartitions, globalPartitions)
      else Map.empty[String, (Long, Long)]
    } {
      IndexTables.writeFileTable(spark.createDataFrame(fileRows, IndexTables.FileTableSchema), request.dataPath,
        "errorifexists")
    }
    val scanned = System.nanoTime()

    // Files that produced no rows (empty, or every row deleted) get an empty filter.
    val stats = fileStats.value.asScala.toSeq
    val indexed = stats.map(_.fileId).toSet
    val missing = request.files.filterNot(f => indexed.contains(f.fileId))
    val emptyFilter = Sbbf.ofBytes(Sbbf.MinBytes).toBytes
    if (missing.nonEmpty) {
      val rows = for (f <- missing; c <- request.columns) yield Row(f.fileId, f.path, f.size, f.mtime, c, 0L, 0L, 0L, emptyFilter)
      IndexTables.writeFileTable(spark.createDataFrame(sc.parallelize(rows, 1), IndexTables.FileTableSchema),
        request.dataPath, "append")
    }
    val allStats = stats ++ (for (f <- missing; c <- request.columns) yield FileStats(f.fileId, c, 0, 0, 0, emptyFilter.length))
    val done = System.nanoTime()
    log.info(f"${request.description}: scan, file-level table and global filters ${(scanned - started) / 1e9}%.2f s, " +
      f"empty files ${(done - scanned) / 1e9}%.2f s")
    summarize(spark, request, allStats, global)
  }

  /**
   * Runs `side` on a new thread while `main` runs on this one, so that their
   * Spark jobs share the executors. The thread inherits this thread's job group
   * and description (Spark copies local properties into a new thread). If
   * `main` fails, `side`'s jobs are cancelled and awaited before the error is
   * rethrown, so nothing keeps writing into a version being removed.
   */
  private def alongside[A, B](sc: SparkContext)(side: => B)(main: => A): (A, B) = {
    val tag = s"hsbloom-build-${java.util.UUID.randomUUID()}"
    @volatile var outcome: Either[Throwable, B] = Left(new IllegalStateException("the global filter build did not run"))
    val thread = new Thread(() => {
      sc.addJobTag(tag)
      outcome = try Right(side) catch { case t: Throwable => Left(t) }
    }, "hsbloom global filters")
    thread.setDaemon(true)
    thread.start()
    val a = try main catch {
      case t: Throwable =>
        sc.cancelJobsWithTag(tag)
        thread.join()
        throw t
    }
    thread.join()
    outcome match {
      case Right(b) => (a, b)
      case Left(t) => throw t
    }
  }

  /** One row of the file-level table, without its filter: what the summary needs. */
  final case class FileStats(fileId: Long, column: String, rows: Long, nulls: Long, ndv: Long, filterBytes: Long)

  /**
   * Builds each column's global filter from the bucket partitions and writes
   * the global table. Each bucket's reducer fills its own block range and
   * writes it as one chunk (bucket 0's chunk starts with the header), so no
   * filter passes through the driver. The size comes from the distinct
   * counters every map task sends to every bucket partition (see
   * `GlobalReducer`); each reducer reports the size it used, which must agree.
   * Returns per column (distinct estimate, serialized bytes).
   */
  private def buildGlobal(
      spark: SparkSession,
      request: Request,
      shuffled: RDD[(BuildKey, Payload)],
      filePartitions: Int,
      globalPartitions: Int): Map[String, (Long, Long)] = {
    val columns = request.columns
    val fixedBlocks = columns.map(c => request.globalFilterBlocks.getOrElse(c, 0)).toArray
    val (fpp, heldHashes) = (request.fpp, request.globalHeldHashes)
    val sizes = spark.sparkContext.collectionAccumulator[(Int, Long, Int)]("hsbloom global filter sizes")
    val chunks = PartitionPruningRDD.create(shuffled, _ >= filePartitions)
      .mapPartitionsWithIndex { case (index, records) =>
        // A pruned RDD numbers its partitions from 0: index i is bucket partition i.
        val owned = for {
          c <- columns.indices
          b <- 0 until NumBuckets
          if bucketPartition(c, b, globalPartitions) == index
        } yield BucketKey(c, b)
        val reducer = new GlobalReducer(owned, fixedBlocks, fpp, heldHashes)
        records.foreach {
          case (k: BucketKey, BucketHashes(hashes)) => reducer.add(k, hashes)
          case (_: SketchKey, Sketches(s)) => reducer.merge(s)
          case (k, p) => throw new IllegalStateException(s"unexpected $k / ${p.getClass.getSimpleName} in a bucket partition")
        }
        val (rows, used) = reducer.finish(columns)
        used.foreach(sizes.add)
        rows
      }
    IndexTables.writeGlobalTable(spark.createDataFrame(chunks, IndexTables.GlobalTableSchema), request.dataPath,
      "errorifexists")
    val reported = sizes.value.asScala.toSeq.groupBy(_._1)
    columns.indices.map { c =>
      val agreed = reported.getOrElse(c, Nil).map { case (_, ndv, blocks) => (ndv, blocks) }.distinct
      if (agreed.size != 1) {
        throw new IllegalStateException(s"global filter of '${columns(c)}': the bucket tasks reported sizes $agreed")
      }
      val (ndv, blocks) = agreed.head
      columns(c) -> (ndv, Sbbf.header(blocks * 32).length + blocks * 32L)
    }.toMap
  }

  private def summarize(
      spark: SparkSession,
      request: Request,
      stats: Seq[FileStats],
      global: Map[String, (Long, Long)]): java.util.Map[String, Any] = {
    val byColumn = stats.groupBy(_.column)
    val columns = new java.util.LinkedHashMap[String, Any]()
    request.columns.foreach { c =>
      val rows = byColumn.getOrElse(c, Nil)
      val column = new java.util.LinkedHashMap[String, Any]()
      column.put("num_rows", rows.map(_.rows).sum)
      column.put("num_nulls", rows.map(_.nulls).sum)
      // The global estimate when there is one; else the sum over files (an upper bound).
      column.put("ndv", global.get(c).map(_._1).getOrElse(rows.map(_.ndv).sum))
      column.put("file_filter_bytes", rows.map(_.filterBytes).sum)
      column.put("global_filter_bytes", global.get(c).map(_._2).getOrElse(0L))
      columns.put(c, column)
    }
    val dataPath = new Path(request.dataPath)
    val fs = dataPath.getFileSystem(spark.sessionState.newHadoopConf())
    val summary = new java.util.LinkedHashMap[String, Any]()
    summary.put("num_files", request.files.size)
    summary.put("num_rows", byColumn.get(request.columns.head).map(_.map(_.rows).sum).getOrElse(0L))
    summary.put("index_bytes", fs.getContentSummary(dataPath).getLength)
    summary.put("columns", columns)
    summary
  }

  private def resolveName(df: DataFrame, name: String): String = {
    val resolver = df.sparkSession.sessionState.conf.resolver
    df.schema.fieldNames.find(resolver(_, name))
      .getOrElse(throw new IllegalArgumentException(
        s"column '$name' is not in the DataFrame; available: ${df.schema.fieldNames.mkString(", ")}"))
  }

  // --- Shuffle records -------------------------------------------------------

  sealed trait BuildKey extends Serializable
  final case class FileKey(fileId: Long, column: Int) extends BuildKey
  final case class BucketKey(column: Int, bucket: Int) extends BuildKey
  /** A map task's distinct counters, one copy for each bucket partition. */
  final case class SketchKey(partition: Int) extends BuildKey

  sealed trait Payload extends Serializable
  /** A whole file's column: final. */
  final case class FileResult(file: ListedFile, rows: Long, nulls: Long, ndv: Long, filter: Array[Byte]) extends Payload
  /** Part of a file read by several tasks: raw hashes, or a filter at a fixed large size. */
  final case class FilePart(file: ListedFile, rows: Long, nulls: Long, hashes: Array[Long], filter: Option[Sbbf])
    extends Payload
  /** Hashes of one column that fall in one bucket. */
  final case class BucketHashes(hashes: Array[Long]) extends Payload
  /** A map task's per-column HyperLogLogs. */
  final case class Sketches(sketches: Array[HyperLogLog]) extends Payload

  private def bucketPartition(column: Int, bucket: Int, globalPartitions: Int): Int =
    Math.floorMod(column * NumBuckets + bucket, globalPartitions)

  final class BuildPartitioner(filePartitions: Int, globalPartitions: Int) extends Partitioner {
    override def numPartitions: Int = filePartitions + globalPartitions
    override def getPartition(key: Any): Int = key match {
      case FileKey(id, c) => Math.floorMod(java.lang.Long.hashCode(id) * 31 + c, filePartitions)
      case BucketKey(c, b) => filePartitions + bucketPartition(c, b, globalPartitions)
      case SketchKey(p) => filePartitions + p
    }
  }

  final case class MapSettings(columnTypes: Array[DataType], expectedNumItems: Option[Long], fpp: Double,
      globalFilter: Boolean, maxBufferedHashes: Int, globalPartitions: Int)

  /** A growable array of longs, without boxing. */
  private final class LongBuffer(initial: Int = 1024) {
    var values = new Array[Long](initial)
    var size = 0
    def append(v: Long): Unit = {
      if (size == values.length) values = java.util.Arrays.copyOf(values, values.length * 2)
      values(size) = v
      size += 1
    }
    def appendAll(more: Array[Long]): Unit = appendAll(more, more.length)
    def appendAll(more: Array[Long], count: Int): Unit = {
      if (size + count > values.length) {
        values = java.util.Arrays.copyOf(values, math.max(values.length * 2, size + count))
      }
      System.arraycopy(more, 0, values, size, count)
      size += count
    }
    def toArray: Array[Long] = java.util.Arrays.copyOf(values, size)
    /** Empties the buffer; its capacity is kept (up to 8 MiB), so the next file does not grow it again. */
    def clear(): Unit = { size = 0; if (values.length > (1 << 20)) values = new Array[Long](1024) }
    /** The filled values, leaving the buffer empty with a fresh array of the same capacity. */
    def handOver(): Array[Long] = {
      val filled = if (size == values.length) values else java.util.Arrays.copyOf(values, size)
      values = new Array[Long](values.length)
      size = 0
      filled
    }
  }

  /**
   * A column's filter for a whole file: sized for its `nonNull` values (an
   * upper bound on the distinct ones) and folded to the target fpp, or at the
   * configured size. Returns it with the distinct-count estimate.
   */
  private def fileFilter(
      hashes: Seq[(Array[Long], Int)],
      nonNull: Long,
      base: Option[Sbbf],
      settings: MapSettings): (Sbbf, Long) = {
    val filter = base.getOrElse(Sbbf.forNdv(settings.expectedNumItems.getOrElse(nonNull), settings.fpp))
    hashes.foreach { case (values, count) =>
      var i = 0
      while (i < count) { filter.insertHash(values(i)); i += 1 }
    }
    val ndv = math.min(filter.estimatedNdv, nonNull)
    if (settings.expectedNumItems.isDefined) (filter, ndv) else (filter.foldToTargetFpp(settings.fpp), ndv)
  }

  /**
   * The map side over one task's rows: tracks the current file, buffers its
   * hashes per column, and emits records as files end and buckets fill.
   */
  private[hsbloom] final class MapSide(
      chunks: Iterator[ScanInput.Chunk],
      settings: MapSettings,
      listing: Map[String, ListedFile]) extends Iterator[(BuildKey, Payload)] {
    private val numColumns = settings.columnTypes.length
    private val rowHashers = settings.columnTypes.map(t => ParquetHash.hasherFor(t).get)
    private val vectorHashers = settings.columnTypes.map(t => ParquetHash.vectorHasherFor(t).get)
    /** The current chunk's hashes of one column (its non-null values, in row order). */
    private var hashes = new Array[Long](4096)
    private val out = new java.util.ArrayDeque[(BuildKey, Payload)]()
    private val localSketches = Array.fill(numColumns)(new HyperLogLog())
    private val buckets = Array.fill(numColumns, NumBuckets)(new LongBuffer(BucketChunk))
    private val fileHashes = Array.fill(numColumns)(new LongBuffer())
    private val largeFilters = new Array[Sbbf](numColumns)
    private val fileNulls = new Array[Long](numColumns)
    private var fileRows = 0L
    private var currentName: org.apache.spark.unsafe.types.UTF8String = null
    private var current: ListedFile = null
    private var currentWhole = false
    private var finished = false

    override def hasNext: Boolean = {
      while (out.isEmpty && chunks.hasNext) consume(chunks.next())
      if (out.isEmpty && !finished) finish()
      !out.isEmpty
    }

    override def next(): (BuildKey, Payload) = {
      if (!hasNext) throw new NoSuchElementException
      out.poll()
    }

    private def consume(chunk: ScanInput.Chunk): Unit = {
      val name = chunk.file
      if (currentName == null || ((name ne currentName) && name != currentName)) {
        startFile(name, chunk.blockStart, chunk.blockLength)
      }
      val n = chunk.numRows
      fileRows += n
      if (hashes.length < n) hashes = new Array[Long](n)
      val batch = chunk.columns
      var c = 0
      while (c < numColumns) {
        // One pass per step over the column's hashes: each loop is short and does one thing.
        val count = if (batch != null) vectorHashers(c).hashAll(batch.column(c), n, hashes) else hashRows(chunk, c)
        fileNulls(c) += n - count
        addToFile(c, count)
        if (settings.globalFilter) addToGlobal(c, count)
        c += 1
      }
    }

    /** The non-null hashes of column `c` of a chunk of rows, into `hashes`; returns how many. */
    private def hashRows(chunk: ScanInput.Chunk, c: Int): Int = {
      val hasher = rowHashers(c)
      var (i, k) = (0, 0)
      while (i < chunk.numRows) {
        val row = chunk.row(i)
        if (!row.isNullAt(c)) { hashes(k) = hasher.hash(row, c); k += 1 }
        i += 1
      }
      k
    }

    private def addToFile(c: Int, count: Int): Unit = {
      if (largeFilters(c) != null) {
        val filter = largeFilters(c)
        var i = 0
        while (i < count) { filter.insertHash(hashes(i)); i += 1 }
      } else {
        val buffer = fileHashes(c)
        buffer.appendAll(hashes, count)
        if (buffer.size >= settings.maxBufferedHashes) {
          // Too many values to buffer: build at a fixed large size now (folded when the file ends).
          val filter = Sbbf.forNdv(settings.expectedNumItems.getOrElse(LargeFileNdv), settings.fpp)
          var i = 0
          while (i < buffer.size) { filter.insertHash(buffer.values(i)); i += 1 }
          buffer.clear()
          largeFilters(c) = filter
        }
      }
    }

    /** The column's hashes into its distinct counter and its buckets; a full bucket becomes a record. */
    private def addToGlobal(c: Int, count: Int): Unit = {
      val sketch = localSketches(c)
      var i = 0
      while (i < count) { sketch.update(hashes(i)); i += 1 }
      val columnBuckets = buckets(c)
      i = 0
      while (i < count) {
        val h = hashes(i)
        val b = (h >>> BucketShift).toInt
        val bucket = columnBuckets(b)
        bucket.append(h)
        if (bucket.size == BucketChunk) out.add(BucketKey(c, b) -> BucketHashes(bucket.handOver()))
        i += 1
      }
    }

    private def startFile(name: org.apache.spark.unsafe.types.UTF8String, blockStart: Long, blockLength: Long): Unit = {
      endFile()
      currentName = name.clone()
      val key = scannedFileKey(name.toString)
      current = listing.getOrElse(key, throw new IllegalStateException(
        s"the scan read $name, which is not in the source listing the index is built from"))
      currentWhole = blockStart == 0 && blockLength == current.size
    }

    private def endFile(): Unit = {
      if (current == null) return
      var c = 0
      while (c < numColumns) {
        val buffer = fileHashes(c)
        val large = Option(largeFilters(c))
        if (currentWhole) {
          val (filter, ndv) = fileFilter(Seq(buffer.values -> buffer.size), fileRows - fileNulls(c), large, settings)
          out.add(FileKey(current.fileId, c) -> FileResult(current, fileRows, fileNulls(c), ndv, filter.toBytes))
        } else {
          out.add(FileKey(current.fileId, c) -> FilePart(current, fileRows, fileNulls(c), buffer.toArray, large))
        }
        buffer.clear()
        largeFilters(c) = null
        fileNulls(c) = 0
        c += 1
      }
      fileRows = 0
      current = null
    }

    private def finish(): Unit = {
      finished = true
      endFile()
      if (settings.globalFilter) {
        for (c <- 0 until numColumns; b <- 0 until NumBuckets if buckets(c)(b).size > 0) {
          out.add(BucketKey(c, b) -> BucketHashes(buckets(c)(b).toArray))
        }
        for (p <- 0 until settings.globalPartitions) out.add(SketchKey(p) -> Sketches(localSketches))
      }
    }
  }

  /** Reduce side of the file partitions: whole files pass through, split files are merged. */
  private def reduceFiles(
      records: Iterator[(BuildKey, Payload)],
      settings: MapSettings,
      columns: Seq[String]): Iterator[Row] = {
    val parts = mutable.LinkedHashMap[FileKey, ArrayBuffer[FilePart]]()
    val whole = records.flatMap {
      case (k: FileKey, r: FileResult) =>
        Iterator(Row(r.file.fileId, r.file.path, r.file.size, r.file.mtime, columns(k.column), r.rows, r.nulls, r.ndv, r.filter))
      case (k: FileKey, p: FilePart) =>
        parts.getOrElseUpdate(k, ArrayBuffer()) += p
        Iterator.empty
      case (k, p) => throw new IllegalStateException(s"unexpected $k / ${p.getClass.getSimpleName} in a file partition")
    }
    whole ++ Iterator.single(()).flatMap { _ =>
      parts.iterator.map { case (k, ps) =>
        val file = ps.head.file
        val large = ps.flatMap(_.filter).reduceOption((a, b) => a.union(b))
        val (rows, nulls) = (ps.map(_.rows).sum, ps.map(_.nulls).sum)
        val (filter, ndv) = fileFilter(ps.map(p => p.hashes -> p.hashes.length).toSeq, rows - nulls, large, settings)
        Row(file.fileId, file.path, file.size, file.mtime, columns(k.column), rows, nulls, ndv, filter.toBytes)
      }
    }
  }

  /**
   * Reduce side of one bucket partition: every bucket it owns (also those no
   * hash reached) becomes one chunk of its column's global filter, the block
   * range `bucket * blocks / NumBuckets` until `(bucket + 1) * blocks / NumBuckets`.
   *
   * The filter's size depends on the column's distinct count, which is known
   * only once every map task's counters have arrived, that is at the end of
   * the input. Until then hashes are held as they come (up to `heldLimit`);
   * past that, they go into slices at the largest size a filter may have, and
   * those slices are folded down to the final size at the end. Folding a
   * power-of-two SBBF by halving ORs blocks 2i and 2i + 1 into block i, exactly
   * the block the hash picks at half the size, so the result is the same filter
   * as one built at the final size. A size fixed by the request (a refresh
   * adding to an existing filter) is used from the start.
   */
  private final class GlobalReducer(owned: Seq[BucketKey], fixedBlocks: Array[Int], fpp: Double, heldLimit: Long) {
    private val numColumns = fixedBlocks.length
    private val counters = Array.fill(numColumns)(new HyperLogLog())
    /** Per column, the filter size (in blocks) its slices are at; 0 until decided. */
    private val sliceBlocks = fixedBlocks.clone()
    private val slices = mutable.HashMap[BucketKey, Array[Int]]()
    private val pending = mutable.HashMap[BucketKey, LongBuffer]()
    private val held = ArrayBuffer[(BucketKey, Array[Long])]()
    private var heldHashes = 0L
    private val scatter = new SliceScatter

    def merge(sketches: Array[HyperLogLog]): Unit = counters.zip(sketches).foreach { case (a, b) => a.merge(b) }

    def add(k: BucketKey, hashes: Array[Long]): Unit = {
      if (sliceBlocks(k.column) > 0) insert(k, hashes)
      else {
        held += k -> hashes
        heldHashes += hashes.length
        if (heldHashes > heldLimit) {
          for (c <- 0 until numColumns if sliceBlocks(c) == 0) sliceBlocks(c) = Sbbf.MaxBytes / 32
          release()
        }
      }
    }

    /** The chunk rows of the owned buckets, and per owned column (column, distinct estimate, blocks). */
    def finish(columns: Seq[String]): (Iterator[Row], Seq[(Int, Long, Int)]) = {
      val ndv = counters.map(_.estimate)
      val blocks = Array.tabulate(numColumns) { c =>
        if (fixedBlocks(c) > 0) fixedBlocks(c) else math.max(NumBuckets, Sbbf.forNdv(ndv(c), fpp).numBlocks)
      }
      for (c <- 0 until numColumns if sliceBlocks(c) == 0) sliceBlocks(c) = blocks(c)
      release()
      pending.foreach { case (k, batch) => flush(k, batch) }
      val rows = owned.iterator.map { k =>
        val numBytes = blocks(k.column) * 32
        val slice = slices.remove(k).getOrElse(new Array[Int](sliceBlocks(k.column) / NumBuckets * 8))
        val bitset =
          if (sliceBlocks(k.column) == blocks(k.column)) Sbbf.littleEndian(slice)
          else Sbbf.wrap(slice).foldTo(numBytes / NumBuckets).bitset
        val chunk = if (k.bucket == 0) Sbbf.header(numBytes) ++ bitset else bitset
        Row(columns(k.column), k.bucket, NumBuckets, Sbbf.header(numBytes).length + numBytes.toLong, chunk)
      }
      (rows, owned.map(_.column).distinct.map(c => (c, ndv(c), blocks(c))))
    }

    private def release(): Unit = {
      held.foreach { case (k, hashes) => insert(k, hashes) }
      held.clear()
      heldHashes = 0
    }

    /** Hashes are gathered per bucket and inserted many at a time, so one batch's inserts stay in one slice. */
    private def insert(k: BucketKey, hashes: Array[Long]): Unit = {
      val batch = pending.getOrElseUpdate(k, new LongBuffer(BucketChunk))
      batch.appendAll(hashes)
      if (batch.size >= ReduceBatch) flush(k, batch)
    }

    private def flush(k: BucketKey, batch: LongBuffer): Unit = {
      val total = sliceBlocks(k.column)
      val slice = slices.getOrElseUpdate(k, new Array[Int](total / NumBuckets * 8))
      scatter.insert(slice, k.bucket * (total / NumBuckets), total, batch)
      batch.size = 0
    }
  }

  /**
   * Inserts a batch of hashes into one bucket's slice of a global filter. A
   * slice is up to a few MiB, so inserting hashes in arrival order misses the
   * CPU caches at nearly every hash; the batch is first scattered by the high
   * bits of its block offset into `Parts` runs, each of which then lands in a
   * region of the slice small enough to stay in the L1/L2 cache.
   */
  private final class SliceScatter {
    private val Parts = 64
    private var runs = new Array[Long](0)
    private val counts = new Array[Int](Parts + 1)

    def insert(slice: Array[Int], firstBlock: Int, totalBlocks: Int, batch: LongBuffer): Unit = {
      val hashes = batch.values
      val n = batch.size
      val sliceBlocks = slice.length / 8
      if (sliceBlocks < 4 * Parts) {
        var i = 0
        while (i < n) { Sbbf.insertHashIntoSlice(slice, firstBlock, totalBlocks, hashes(i)); i += 1 }
        return
      }
      // Part of a hash: its block's offset in the slice, scaled to [0, Parts) (sizes are powers of two).
      val shift = Integer.numberOfTrailingZeros(sliceBlocks) - Integer.numberOfTrailingZeros(Parts)
      def part(h: Long): Int = (Sbbf.blockIndex(h, totalBlocks) - firstBlock) >>> shift
      java.util.Arrays.fill(counts, 0)
      var i = 0
      while (i < n) { counts(part(hashes(i)) + 1) += 1; i += 1 }
      var p = 0
      while (p < Parts) { counts(p + 1) += counts(p); p += 1 }
      if (runs.length < n) runs = new Array[Long](n)
      i = 0
      while (i < n) {
        val h = hashes(i)
        val q = part(h)
        runs(counts(q)) = h
        counts(q) += 1
        i += 1
      }
      i = 0
      while (i < n) { Sbbf.insertHashIntoSlice(slice, firstBlock, totalBlocks, runs(i)); i += 1 }
    }
  }
}
