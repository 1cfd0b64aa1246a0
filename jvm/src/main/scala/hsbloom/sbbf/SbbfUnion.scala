package hsbloom.sbbf

/**
 * One filter holding every value of several SBBFs, made without the values:
 * what adopting a file's row-group filters as one file filter needs
 * (docs/design/adoption.md).
 *
 * A hash picks block `((h >>> 32) * B) >>> 32` of a filter of `B` blocks, and
 * at `B / 2` blocks the block it picks is that one halved (the floor of the
 * same product, shifted once more), so a filter of `2B` blocks folds to `B`
 * blocks by OR-ing blocks `2i` and `2i + 1` into `i`: exactly the filter a
 * build at `B` blocks makes from the same hashes. Filters of one size hold a
 * union of value sets by OR. So filters of power-of-two sizes combine by
 * folding each to the smallest size and OR-ing: the result is byte for byte
 * the filter of the union of their values at that size.
 */
object SbbfUnion {
  /** The union of `filters` (at least one) at the smallest of their sizes; the inputs are not changed. */
  def of(filters: Seq[Sbbf]): Sbbf = {
    require(filters.nonEmpty, "no filter to combine")
    val smallest = filters.map(_.numBytes).min
    val combined = Sbbf.ofBytes(smallest)
    filters.foreach(f => combined.union(if (f.numBytes == smallest) f else f.foldTo(smallest)))
    combined
  }

  /**
   * `combined` with `next` added, at the smaller of their sizes: what `of` gives for the filters of both,
   * one at a time (folding distributes over OR, and folding twice is folding once to the smaller size), so a
   * caller holds two filters instead of all of them. `combined` may be changed; `next` is not.
   */
  def add(combined: Sbbf, next: Sbbf): Sbbf =
    if (next.numBytes >= combined.numBytes) {
      combined.union(if (next.numBytes == combined.numBytes) next else next.foldTo(combined.numBytes))
    } else combined.foldTo(next.numBytes).union(next)
}
