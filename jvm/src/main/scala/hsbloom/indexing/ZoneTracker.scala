package hsbloom.indexing

import scala.collection.mutable.ArrayBuffer

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import hsbloom.format.SourceFile
import hsbloom.sbbf.{ParquetHash, Sbbf}

/**
 * The map side's zones (one filter per row group and column, for an index
 * with `granularity="row_group"`): which row group the rows of the current
 * file block belong to, and their hashes per row group.
 *
 * A block's rows arrive in row-group order, every row of each row group the
 * block reads (the build's scan has no filter and reads deleted rows too), so
 * the first `rows(0)` rows are row group 0's, and so on. The zones of a block
 * are handed out only when its rows matched its row groups' counts exactly;
 * any doubt (a footer that is not provable, a count that does not match)
 * gives the block no zones, and planning then reads its file whole.
 *
 * A substring filter's zones (build columns from `numValues` on) hold the row group's grams: their number is not
 * known ahead, so they are buffered and the filter is built at the group's end from them (past
 * `maxBufferedHashes`, at a fixed large size, folded), as a file's are.
 */
final class ZoneTracker(settings: MapSettings, conf: Configuration) {
  private val numValues = settings.numValueColumns
  private val numColumns = settings.numColumns
  private val rowHashers = settings.columnTypes.map(t => ParquetHash.hasherFor(t).get)
  private val gramHashers = settings.grams.map { case (ordinal, n, lower) => new GramHasher(ordinal, n, lower) }
  /** The current row group's filter per value column, sized for its row count (from the footer), folded at its end. */
  private val filters = new Array[Sbbf](numColumns)
  /** The current row group's grams per substring filter (`numValues` on), until too many to buffer. */
  private val gramBuffers = Array.fill(numColumns - numValues)(new LongBuffer())
  /** The current row group's grams per substring filter, repeats included (an upper bound on the distinct ones). */
  private val gramItems = new Array[Long](numColumns)
  private val nulls = new Array[Long](numColumns)
  private var file: SourceFile = null
  private var blockStart = -1L
  private var rowGroups = 0
  private var groups: IndexedSeq[RowGroups.Group] = IndexedSeq.empty
  private var current = 0
  private var rowsLeft = 0L
  private var broken = false
  private val done = ArrayBuffer[(ZoneKey, ZoneResult)]()

  /** Called for every chunk before its rows are added: starts a new block when the chunk is from another one. */
  def enter(listed: SourceFile, start: Long, length: Long, out: java.util.ArrayDeque[(BuildKey, Payload)]): Unit = {
    if (file != null && file.fileId == listed.fileId && blockStart == start) return
    leave(out)
    file = listed
    blockStart = start
    RowGroups.ofBlock(new Path(listed.path), conf, listed.size, start, length) match {
      case Some((n, gs)) => rowGroups = n; groups = gs; current = 0; broken = false; startGroup()
      case None => broken = true; rowsLeft = 0L
    }
  }

  /** How many of the next `n` rows belong to the current row group (0 when none does: no zones). */
  def rowsInCurrent(n: Int): Int = {
    if (broken) return 0
    if (rowsLeft == 0 && n > 0) { broken = true; return 0 }
    math.min(n.toLong, rowsLeft).toInt
  }

  /** `count` non-null hashes (of `rows` rows) of value column `c`, all in the current row group. */
  def addHashes(c: Int, hashes: Array[Long], count: Int, rows: Int): Unit = if (!broken) {
    val filter = filters(c)
    var i = 0
    while (i < count) { filter.insertHash(hashes(i)); i += 1 }
    nulls(c) += rows - count
  }

  /** `count` grams of `nonNull` values (of `rows` rows) of substring filter `c`, all in the current row group. */
  def addGrams(c: Int, hashes: Array[Long], count: Int, nonNull: Int, rows: Int): Unit = if (!broken) {
    nulls(c) += rows - nonNull
    gramItems(c) += count
    if (filters(c) != null) {
      val filter = filters(c)
      var i = 0
      while (i < count) { filter.insertHash(hashes(i)); i += 1 }
    } else {
      val buffer = gramBuffers(c - numValues)
      buffer.appendAll(hashes, count)
      if (buffer.size >= settings.maxBufferedHashes) {
        // Too many to buffer: a filter at a fixed large size from now on (folded when the group ends).
        val filter = Sbbf.forNdv(ZoneTracker.LargeGroupNdv, settings.sharedFpp)
        var i = 0
        while (i < buffer.size) { filter.insertHash(buffer.values(i)); i += 1 }
        buffer.clear()
        filters(c) = filter
      }
    }
  }

  /** Rows `from until to` of a chunk, all in the current row group, hashed one by one. */
  def addRows(chunk: ScanInput.Chunk, from: Int, to: Int): Unit = if (!broken) {
    var g = numValues
    while (g < numColumns) {
      val hasher = gramHashers(g - numValues)
      addGrams(g, hasher.out, hasher.hashRows(chunk, from, to), hasher.nonNull, to - from)
      g += 1
    }
    var c = 0
    while (c < numValues) {
      var i = from
      while (i < to) {
        val row = chunk.row(i)
        if (row.isNullAt(c)) nulls(c) += 1 else filters(c).insertHash(rowHashers(c).hash(row, c))
        i += 1
      }
      c += 1
    }
  }

  /** `n` rows of the current row group were added; a finished row group becomes its zones. */
  def advance(n: Int): Unit = if (!broken && n > 0) {
    rowsLeft -= n
    if (rowsLeft == 0) {
      finishGroup()
      current += 1
      startGroup()
    }
  }

  /** Ends the current block: its zones go out if every row group was read whole, else none. */
  def leave(out: java.util.ArrayDeque[(BuildKey, Payload)]): Unit = {
    if (file != null && !broken && current == groups.size) done.foreach(out.add)
    done.clear()
    for (c <- filters.indices) filters(c) = null
    gramBuffers.foreach(_.clear())
    java.util.Arrays.fill(gramItems, 0L)
    java.util.Arrays.fill(nulls, 0L)
    file = null
    blockStart = -1L
  }

  /**
   * Makes the next row group with rows current, with fresh filters (row
   * groups without rows hold nothing: their zones are empty filters).
   */
  private def startGroup(): Unit = {
    while (current < groups.size && groups(current).rows == 0) { finishGroup(); current += 1 }
    rowsLeft = if (current < groups.size) groups(current).rows else 0L
    if (rowsLeft > 0) for (c <- 0 until numValues) filters(c) = Sbbf.forNdv(rowsLeft, settings.sharedFpp)
  }

  private def finishGroup(): Unit = {
    val g = groups(current)
    var c = 0
    while (c < numColumns) {
      val nonNull = g.rows - nulls(c)
      // Filled at the row count (an upper bound on its distinct values), then folded to the shared fpp; never at
      // a fixed size (`expected_num_items` is per file). A substring filter: from its buffered grams.
      val grams = if (c < numValues) None else Some(gramBuffers(c - numValues))
      val (filter, ndv) =
        if (nonNull == 0 || (grams.isDefined && gramItems(c) == 0)) (Sbbf.ofBytes(Sbbf.MinBytes), 0L)
        else grams match {
          case Some(b) => FileFilters.build(Seq(b.values -> b.size), gramItems(c), Option(filters(c)), None,
            settings.sharedFpp)
          case None => FileFilters.build(Nil, nonNull, Some(filters(c)), None, settings.sharedFpp)
        }
      grams.foreach(_.clear())
      done += ZoneKey(file.fileId, g.ordinal, c) ->
        ZoneResult(file, g.ordinal, rowGroups, g.start, g.length, g.rows, nulls(c), ndv, filter.toBytes)
      filters(c) = null
      nulls(c) = 0
      gramItems(c) = 0
      c += 1
    }
  }
}

object ZoneTracker {
  /** The distinct grams assumed for a row group too large to buffer (folded down afterwards). */
  private val LargeGroupNdv: Long = 1L << 25
}
