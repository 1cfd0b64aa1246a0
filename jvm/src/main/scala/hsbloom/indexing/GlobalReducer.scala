package hsbloom.indexing

import scala.collection.mutable
import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row

import hsbloom.indexing.BuildPartitioner.{BucketChunk, NumBuckets}
import hsbloom.sbbf.Sbbf

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
private[indexing] final class GlobalReducer(owned: Seq[BucketKey], fixedBlocks: Array[Int], sharedFpp: Double, heldLimit: Long) {
  import GlobalReducer.ReduceBatch
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
      if (fixedBlocks(c) > 0) fixedBlocks(c) else math.max(NumBuckets, Sbbf.forNdv(ndv(c), sharedFpp).numBlocks)
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

object GlobalReducer {
  /** Hashes a reducer gathers per bucket before inserting them (2 MiB). */
  private val ReduceBatch = 1 << 18
}
