package hsbloom.indexing

import hsbloom.sbbf.Sbbf

/**
 * Inserts a batch of hashes into one bucket's slice of a global filter. A
 * slice is up to a few MiB, so inserting hashes in arrival order misses the
 * CPU caches at nearly every hash; the batch is first scattered by the high
 * bits of its block offset into `Parts` runs, each of which then lands in a
 * region of the slice small enough to stay in the L1/L2 cache.
 */
private[indexing] final class SliceScatter {
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
