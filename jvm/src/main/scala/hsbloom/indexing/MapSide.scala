package hsbloom.indexing

import org.apache.spark.sql.types.DataType
import org.apache.spark.unsafe.types.UTF8String

import hsbloom.format.{FileKey, SourceFile}
import hsbloom.indexing.BuildPartitioner.{BucketChunk, BucketShift, NumBuckets}
import hsbloom.sbbf.{ParquetHash, Sbbf}

/**
 * What every map task needs to know about the build: `fileFpp` sizes the file filters, `sharedFpp` the zones.
 * `columnTypes` are the value columns' (scan ordinals 0 until their number); `grams` per substring filter after
 * them, the scan ordinal of its string column, its n, and whether of the lower-cased values (`GramHasher`).
 */
final case class MapSettings(columnTypes: Array[DataType], expectedNumItems: Option[Long], fileFpp: Double,
    globalFilter: Boolean, maxBufferedHashes: Int, globalPartitions: Int, sharedFpp: Double,
    grams: Array[(Int, Int, Boolean)] = Array.empty) {
  /** The value columns: the first build columns, the only ones with global filters and zones. */
  def numValueColumns: Int = columnTypes.length
  def numColumns: Int = columnTypes.length + grams.length
  /** Whether build column `c` is a substring filter. */
  def isGrams(c: Int): Boolean = c >= columnTypes.length
}

/**
 * The map side over one task's rows: tracks the current file, buffers its
 * hashes per column, and emits records as files end and buckets fill; with
 * `zones` (an index with `granularity="row_group"`), also one filter per row
 * group and column (`ZoneTracker`). Every hash also goes into the column's
 * distinct counter: sent to the bucket partitions with a global filter, added
 * to `sketches` (merged on the driver) without one.
 */
final class MapSide(
    chunks: Iterator[ScanInput.Chunk],
    settings: MapSettings,
    listing: Map[String, SourceFile],
    zones: Option[ZoneTracker] = None,
    sketches: Option[DistinctSketches] = None) extends Iterator[(BuildKey, Payload)] {
  import MapSide.LargeFileNdv
  private val numColumns = settings.numColumns
  private val numValues = settings.numValueColumns
  private val gramHashers = settings.grams.map { case (ordinal, n, lower) => new GramHasher(ordinal, n, lower) }
  private val rowHashers = settings.columnTypes.map(t => ParquetHash.hasherFor(t).get)
  private val vectorHashers = settings.columnTypes.map(t => ParquetHash.vectorHasherFor(t).get)
  /** The current chunk's hashes of one column (its non-null values, in row order). */
  private var hashes = new Array[Long](4096)
  private val out = new java.util.ArrayDeque[(BuildKey, Payload)]()
  private val localSketches = Array.fill(numColumns)(new HyperLogLog())
  private val buckets = Array.fill(numValues, NumBuckets)(new LongBuffer(BucketChunk))
  private val fileHashes = Array.fill(numColumns)(new LongBuffer())
  private val largeFilters = new Array[Sbbf](numColumns)
  private val fileNulls = new Array[Long](numColumns)
  /** Hashes of the current file per column: its non-null values, or for a substring filter its grams. */
  private val fileItems = new Array[Long](numColumns)
  private var fileRows = 0L
  private var currentName: UTF8String = null
  private var current: SourceFile = null
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
    // The whole chunk in one row group (as Spark's vectorized reader hands them out): its hashes go to the zone too.
    val inOneZone = zones.exists { z =>
      z.enter(current, chunk.blockStart, chunk.blockLength, out)
      z.rowsInCurrent(n) == n
    }
    val batch = chunk.columns
    var c = 0
    while (c < numValues) {
      // One pass per step over the column's hashes: each loop is short and does one thing.
      val count = if (batch != null) vectorHashers(c).hashAll(batch.column(c), n, hashes) else hashRows(chunk, c)
      fileNulls(c) += n - count
      fileItems(c) += count
      addToFile(c, hashes, count)
      addToSketch(c, hashes, count)
      if (settings.globalFilter) addToGlobal(c, count)
      if (inOneZone) zones.get.addHashes(c, hashes, count, n)
      c += 1
    }
    // Substring filters: a file filter of each value's grams, and its zones (no global filter).
    while (c < numColumns) {
      val grams = gramHashers(c - numValues)
      val count = grams.hashChunk(chunk)
      fileNulls(c) += n - grams.nonNull
      fileItems(c) += count
      addToFile(c, grams.out, count)
      addToSketch(c, grams.out, count)
      if (inOneZone) zones.get.addGrams(c, grams.out, count, grams.nonNull, n)
      c += 1
    }
    zones.foreach(z => if (inOneZone) z.advance(n) else spreadOverZones(z, chunk))
  }

  /** A chunk that spans row groups: its rows go to their zones one by one (rare; the row path). */
  private def spreadOverZones(z: ZoneTracker, chunk: ScanInput.Chunk): Unit = {
    var from = 0
    while (from < chunk.numRows) {
      val k = z.rowsInCurrent(chunk.numRows - from)
      if (k == 0) return // no zones for this block
      z.addRows(chunk, from, from + k)
      z.advance(k)
      from += k
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

  private def addToFile(c: Int, hashes: Array[Long], count: Int): Unit = {
    if (largeFilters(c) != null) {
      val filter = largeFilters(c)
      var i = 0
      while (i < count) { filter.insertHash(hashes(i)); i += 1 }
    } else {
      val buffer = fileHashes(c)
      buffer.appendAll(hashes, count)
      if (buffer.size >= settings.maxBufferedHashes) {
        // Too many values to buffer: build at a fixed large size now (folded when the file ends).
        val filter = Sbbf.forNdv(fixedItems(c).getOrElse(LargeFileNdv), settings.fileFpp)
        var i = 0
        while (i < buffer.size) { filter.insertHash(buffer.values(i)); i += 1 }
        buffer.clear()
        largeFilters(c) = filter
      }
    }
  }

  /** `expected_num_items` sizes the value columns' file filters; a substring filter is sized from its grams. */
  private def fixedItems(c: Int): Option[Long] = if (settings.isGrams(c)) None else settings.expectedNumItems

  /** The column's hashes into its distinct counter. */
  private def addToSketch(c: Int, hashes: Array[Long], count: Int): Unit = {
    val sketch = localSketches(c)
    var i = 0
    while (i < count) { sketch.update(hashes(i)); i += 1 }
  }

  /** The column's hashes into its buckets; a full bucket becomes a record. */
  private def addToGlobal(c: Int, count: Int): Unit = {
    val columnBuckets = buckets(c)
    var i = 0
    while (i < count) {
      val h = hashes(i)
      val b = (h >>> BucketShift).toInt
      val bucket = columnBuckets(b)
      bucket.append(h)
      if (bucket.size == BucketChunk) out.add(BucketKey(c, b) -> BucketHashes(bucket.handOver()))
      i += 1
    }
  }

  private def startFile(name: UTF8String, blockStart: Long, blockLength: Long): Unit = {
    endFile()
    currentName = name.clone()
    val key = FileKey.scanned(name.toString)
    current = listing.getOrElse(key, throw new IllegalStateException(
      s"the scan read $name, which is not in the source listing the index is built from"))
    currentWhole = blockStart == 0 && blockLength == current.size
  }

  private def endFile(): Unit = {
    zones.foreach(_.leave(out))
    if (current == null) return
    var c = 0
    while (c < numColumns) {
      val buffer = fileHashes(c)
      val large = Option(largeFilters(c))
      if (currentWhole) {
        val (filter, ndv) = FileFilters.build(Seq(buffer.values -> buffer.size), fileItems(c), large,
          fixedItems(c), settings.fileFpp)
        out.add(FileColumnKey(current.fileId, c) -> FileResult(current, fileRows, fileNulls(c), ndv, filter.toBytes))
      } else {
        out.add(FileColumnKey(current.fileId, c) -> FilePart(current, fileRows, fileNulls(c), buffer.toArray, large))
      }
      buffer.clear()
      largeFilters(c) = null
      fileNulls(c) = 0
      fileItems(c) = 0
      c += 1
    }
    fileRows = 0
    current = null
  }

  private def finish(): Unit = {
    finished = true
    endFile()
    if (settings.globalFilter) {
      for (c <- 0 until numValues; b <- 0 until NumBuckets if buckets(c)(b).size > 0) {
        out.add(BucketKey(c, b) -> BucketHashes(buckets(c)(b).toArray))
      }
      for (p <- 0 until settings.globalPartitions) out.add(SketchKey(p) -> Sketches(localSketches))
    } else sketches.foreach(_.add(localSketches))
  }
}

object MapSide {
  /** The distinct count assumed for a file too large to buffer (folded down afterwards). */
  private val LargeFileNdv: Long = 1L << 25
}
