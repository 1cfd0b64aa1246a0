package hsbloom

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
import org.apache.spark.util.AccumulatorV2

/**
 * The distributed build of an index version: one scan of the indexed columns
 * gives, per source file and column, an SBBF with row, null and distinct
 * counts, and per column one global SBBF.
 *
 * How the work is split:
 *  1. Map side (the only scan): rows arrive file by file. Each file's hashes
 *     are buffered; when the file ends, its filter is built at an upper bound
 *     (the number of non-null values) and folded down to the target fpp, so a
 *     small file gets a small filter. A file read by several tasks (a split
 *     file) sends its parts to be merged. For the global filters, every hash
 *     goes to one of 64 buckets by its top 6 bits (which fix its block range in
 *     a filter of any power-of-two size), and into a per-column HyperLogLog.
 *  2. One shuffle, with file keys and bucket keys in separate partitions.
 *  3. Job one writes the file-level table from the file partitions (running
 *     the map side). The HyperLogLogs, merged by an accumulator, now give each
 *     column's distinct count and so its global filter size.
 *  4. Job two builds each bucket's block range of the global filter from the
 *     bucket partitions, reusing the shuffle output (no second scan); the
 *     driver assembles the ranges and writes the global table in chunks.
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
      globalFilterBlocks: Map[String, Int] = Map.empty)

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
          .map(_.properties.asScala.map(e => e.getKey -> e.getValue.asInt).toMap).getOrElse(Map.empty))
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
    val hashers = request.columns.zip(columnTypes).map { case (c, dt) =>
      ParquetHash.hasherFor(dt).getOrElse(throw new IllegalArgumentException(s"column '$c' has unsupported type $dt"))
    }.toArray

    val listing = sc.broadcast(request.files.map(f => listedFileKey(f.path) -> f).toMap)
    val sketches = new SketchAccumulator(request.columns.size)
    sc.register(sketches, "hsbloom distinct values")

    val settings = MapSettings(hashers, request.expectedNumItems, request.fpp, request.globalFilter,
      request.maxBufferedHashes)
    val mapped: RDD[(BuildKey, Payload)] = ScanInput.of(df, request.columns.map(c => resolveName(df, c)))
      .mapPartitions(chunks => new MapSide(chunks, settings, listing.value, sketches))
    val filePartitions = math.max(1, math.min(request.files.size, sc.defaultParallelism))
    val globalPartitions =
      if (request.globalFilter) math.min(NumBuckets * request.columns.size, 2 * sc.defaultParallelism) else 0
    val partitioner = new BuildPartitioner(filePartitions, globalPartitions)
    val shuffled = new ShuffledRDD[BuildKey, Payload, Payload](mapped, partitioner)
      .setSerializer(new BuildRecordSerializer)

    // Job one: the file-level table (this runs the scan). Its result tasks report
    // each row's statistics, which Spark merges once per successful task.
    val fileStats = sc.collectionAccumulator[FileStats]("hsbloom file statistics")
    val fileRows = PartitionPruningRDD.create(shuffled, _ < filePartitions)
      .mapPartitions(records => reduceFiles(records, settings, request.columns).map { row =>
        fileStats.add(FileStats(row.getLong(0), row.getString(4), row.getLong(5), row.getLong(6), row.getLong(7),
          row.getAs[Array[Byte]](8).length))
        row
      })
    val started = System.nanoTime()
    IndexTables.writeFileTable(spark.createDataFrame(fileRows, IndexTables.FileTableSchema), request.dataPath, "errorifexists")
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

    // Job two: the global filters, from the bucket partitions of the same shuffle.
    val global =
      if (request.globalFilter) buildGlobal(spark, request, shuffled, filePartitions, globalPartitions, sketches)
      else Map.empty[String, (Long, Long)]
    val done = System.nanoTime()
    log.info(f"${request.description}: scan and file-level table ${(scanned - started) / 1e9}%.2f s, " +
      f"empty files and global filters ${(done - scanned) / 1e9}%.2f s")
    summarize(spark, request, allStats, global)
  }

  /** One row of the file-level table, without its filter: what the summary needs. */
  final case class FileStats(fileId: Long, column: String, rows: Long, nulls: Long, ndv: Long, filterBytes: Long)

  /**
   * Builds each column's global filter from the bucket partitions and writes
   * the global table: the size comes from the merged HyperLogLogs (at least one
   * block per bucket), each bucket's reducer fills its own block range and
   * writes it as one chunk (bucket 0's chunk starts with the header), so no
   * filter passes through the driver. Returns per column (distinct estimate,
   * serialized bytes).
   */
  private def buildGlobal(
      spark: SparkSession,
      request: Request,
      shuffled: RDD[(BuildKey, Payload)],
      filePartitions: Int,
      globalPartitions: Int,
      sketches: SketchAccumulator): Map[String, (Long, Long)] = {
    val ndvs = sketches.value.map(_.estimate)
    val columns = request.columns
    val blocks = columns.zip(ndvs).map { case (c, n) =>
      request.globalFilterBlocks.getOrElse(c, math.max(NumBuckets, Sbbf.forNdv(n, request.fpp).numBlocks))
    }.toArray
    val chunks = PartitionPruningRDD.create(shuffled, _ >= filePartitions)
      .mapPartitionsWithIndex { case (index, records) =>
        // A pruned RDD numbers its partitions from 0: index i is bucket partition i.
        reduceGlobal(records, index, globalPartitions, blocks, columns)
      }
    IndexTables.writeGlobalTable(spark.createDataFrame(chunks, IndexTables.GlobalTableSchema), request.dataPath,
      "errorifexists")
    columns.indices.map(c => columns(c) -> (ndvs(c), Sbbf.header(blocks(c) * 32).length + blocks(c) * 32L)).toMap
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

  sealed trait Payload extends Serializable
  /** A whole file's column: final. */
  final case class FileResult(file: ListedFile, rows: Long, nulls: Long, ndv: Long, filter: Array[Byte]) extends Payload
  /** Part of a file read by several tasks: raw hashes, or a filter at a fixed large size. */
  final case class FilePart(file: ListedFile, rows: Long, nulls: Long, hashes: Array[Long], filter: Option[Sbbf])
    extends Payload
  /** Hashes of one column that fall in one bucket. */
  final case class BucketHashes(hashes: Array[Long]) extends Payload

  private def bucketPartition(column: Int, bucket: Int, globalPartitions: Int): Int =
    Math.floorMod(column * NumBuckets + bucket, globalPartitions)

  final class BuildPartitioner(filePartitions: Int, globalPartitions: Int) extends Partitioner {
    override def numPartitions: Int = filePartitions + globalPartitions
    override def getPartition(key: Any): Int = key match {
      case FileKey(id, c) => Math.floorMod(java.lang.Long.hashCode(id) * 31 + c, filePartitions)
      case BucketKey(c, b) => filePartitions + bucketPartition(c, b, globalPartitions)
    }
  }

  final case class MapSettings(hashers: Array[ParquetHash.Hasher], expectedNumItems: Option[Long], fpp: Double,
      globalFilter: Boolean, maxBufferedHashes: Int)

  /** A growable array of longs, without boxing. */
  private final class LongBuffer(initial: Int = 1024) {
    var values = new Array[Long](initial)
    var size = 0
    def append(v: Long): Unit = {
      if (size == values.length) values = java.util.Arrays.copyOf(values, values.length * 2)
      values(size) = v
      size += 1
    }
    def appendAll(more: Array[Long]): Unit = {
      if (size + more.length > values.length) {
        values = java.util.Arrays.copyOf(values, math.max(values.length * 2, size + more.length))
      }
      System.arraycopy(more, 0, values, size, more.length)
      size += more.length
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
  private final class MapSide(
      chunks: Iterator[ScanInput.Chunk],
      settings: MapSettings,
      listing: Map[String, ListedFile],
      sketches: SketchAccumulator) extends Iterator[(BuildKey, Payload)] {
    private val numColumns = settings.hashers.length
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
      fileRows += chunk.numRows
      var c = 0
      while (c < numColumns) {
        consumeColumn(chunk, c)
        c += 1
      }
    }

    /** One column of a chunk: a tight loop, so the JIT sees one hasher and one row class. */
    private def consumeColumn(chunk: ScanInput.Chunk, c: Int): Unit = {
      val hasher = settings.hashers(c)
      val n = chunk.numRows
      var i = 0
      while (i < n) {
        val row = chunk.row(i)
        if (row.isNullAt(c)) fileNulls(c) += 1
        else {
          val h = hasher.hash(row, c)
          addToFile(c, h)
          if (settings.globalFilter) {
            localSketches(c).update(h)
            val bucket = buckets(c)((h >>> BucketShift).toInt)
            bucket.append(h)
            if (bucket.size == BucketChunk) out.add(BucketKey(c, (h >>> BucketShift).toInt) -> BucketHashes(bucket.handOver()))
          }
        }
        i += 1
      }
    }

    private def addToFile(c: Int, h: Long): Unit = {
      if (largeFilters(c) != null) largeFilters(c).insertHash(h)
      else {
        val buffer = fileHashes(c)
        buffer.append(h)
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
        sketches.add(localSketches)
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
   * Reduce side of the bucket partitions: every bucket this partition owns
   * (also those no hash reached) becomes one chunk of its column's global
   * filter: its block range, `blocks / NumBuckets` blocks starting at
   * `bucket * blocks / NumBuckets`.
   */
  private def reduceGlobal(
      records: Iterator[(BuildKey, Payload)],
      partition: Int,
      globalPartitions: Int,
      blocks: Array[Int],
      columns: Seq[String]): Iterator[Row] = {
    val owned = for {
      c <- columns.indices
      b <- 0 until NumBuckets
      if bucketPartition(c, b, globalPartitions) == partition
    } yield BucketKey(c, b)
    val slices = owned.map(k => k -> new Array[Int](blocks(k.column) / NumBuckets * 8)).toMap
    // Hashes are gathered per bucket and inserted many at a time, so that the
    // inserts of one batch stay within one slice (see SliceScatter).
    val pending = mutable.HashMap[BucketKey, LongBuffer]()
    val scatter = new SliceScatter
    def flush(k: BucketKey, batch: LongBuffer): Unit = {
      val total = blocks(k.column)
      scatter.insert(slices(k), k.bucket * (total / NumBuckets), total, batch)
      batch.size = 0
    }
    records.foreach {
      case (k: BucketKey, BucketHashes(hashes)) =>
        val batch = pending.getOrElseUpdate(k, new LongBuffer(ReduceBatch + BucketChunk))
        batch.appendAll(hashes)
        if (batch.size >= ReduceBatch) flush(k, batch)
      case (k, p) => throw new IllegalStateException(s"unexpected $k / ${p.getClass.getSimpleName} in a bucket partition")
    }
    pending.foreach { case (k, batch) => flush(k, batch) }
    owned.iterator.map { k =>
      val numBytes = blocks(k.column) * 32
      val bitset = Sbbf.littleEndian(slices(k))
      val chunk = if (k.bucket == 0) Sbbf.header(numBytes) ++ bitset else bitset
      Row(columns(k.column), k.bucket, NumBuckets, Sbbf.header(numBytes).length + numBytes.toLong, chunk)
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

  /** Per-column HyperLogLogs merged across tasks (a register-wise max: retries do not double count). */
  final class SketchAccumulator(numColumns: Int) extends AccumulatorV2[Array[HyperLogLog], Array[HyperLogLog]] {
    private var sketches: Array[HyperLogLog] = Array.fill(numColumns)(new HyperLogLog())
    override def isZero: Boolean = sketches.forall(_.isEmpty)
    override def copy(): SketchAccumulator = {
      val other = new SketchAccumulator(numColumns)
      other.sketches = sketches.map(_.copy())
      other
    }
    override def reset(): Unit = sketches = Array.fill(numColumns)(new HyperLogLog())
    override def add(v: Array[HyperLogLog]): Unit = sketches.zip(v).foreach { case (a, b) => a.merge(b) }
    override def merge(other: AccumulatorV2[Array[HyperLogLog], Array[HyperLogLog]]): Unit = add(other.value)
    override def value: Array[HyperLogLog] = sketches
  }
}
