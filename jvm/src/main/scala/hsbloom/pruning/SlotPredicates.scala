package hsbloom.pruning

import java.util.BitSet

import hsbloom.index.{DriverPool, FilterBlocks, IndexData}
import hsbloom.pruning.PredicateTranslation._
import hsbloom.sbbf.{Block, Sbbf}

/**
 * A `FilePredicate` answered for every file of an index version at once
 * (docs/design/scale.md): each leaf becomes a bitset over the version's slots
 * (the slots that may match), computed group by group, so a probe of one
 * hash reads each group's one block row once and tests it for every member
 * filter; a listed file is then a few bit tests, not a probe per file.
 *
 * The answer is the one `PredicateTranslation.mayMatch` gives file by file:
 * a leaf fails for a file when any index covering the column says so; a file
 * an index does not hold (slot -1), a column without a row for the file, and
 * a filter that did not parse or whose block is damaged are unknown, so the
 * leaf holds.
 */
object SlotPredicates {

  /** A predicate bound to the versions' bitsets; `mayMatch(i)` for listed file `i` (its slot per version). */
  sealed trait Compiled {
    def mayMatch(slots: Array[Array[Int]], i: Int): Boolean
  }
  private final case class Constant(value: Boolean) extends Compiled {
    def mayMatch(slots: Array[Array[Int]], i: Int): Boolean = value
  }
  /** Holds unless a version holding the file has its slot's bit clear, for each (version, bitset) check. */
  private final class Leaf(versions: Array[Int], bits: Array[BitSet]) extends Compiled {
    def mayMatch(slots: Array[Array[Int]], i: Int): Boolean = {
      var c = 0
      while (c < versions.length) {
        val s = slots(versions(c))(i)
        if (s >= 0 && !bits(c).get(s)) return false
        c += 1
      }
      true
    }
  }
  private final class All(children: Array[Compiled]) extends Compiled {
    def mayMatch(slots: Array[Array[Int]], i: Int): Boolean = children.forall(_.mayMatch(slots, i))
  }
  private final class Any(children: Array[Compiled]) extends Compiled {
    def mayMatch(slots: Array[Array[Int]], i: Int): Boolean = children.exists(_.mayMatch(slots, i))
  }

  /**
   * Binds `p` to `data` (the index versions), where `sources` gives per
   * predicate column the (version, index column) pairs that cover it.
   */
  def compile(p: FilePredicate, data: IndexedSeq[IndexData], sources: String => Seq[(Int, String)]): Compiled = {
    def leaf(column: String, bitsOf: (IndexData, IndexData.ColumnSlots) => BitSet): Compiled = {
      // A version without rows for the column knows nothing about it: no check.
      val checks = sources(column).flatMap { case (k, indexColumn) =>
        data(k).columns.get(indexColumn).map(c => k -> bitsOf(data(k), c))
      }
      if (checks.isEmpty) Constant(true) else new Leaf(checks.map(_._1).toArray, checks.map(_._2).toArray)
    }
    p match {
      case MayMatch => Constant(true)
      case NoMatch => Constant(false)
      case Probe(c, hashes) => leaf(c, (d, slots) => probe(d, slots, hashes))
      case AllGrams(c, hashes) => new All(hashes.map(h => leaf(c, (d, slots) => probe(d, slots, Array(h)))))
      case HasNulls(c) => leaf(c, (_, slots) => slots.mayHoldNulls)
      case AllOf(cs) => new All(cs.map(compile(_, data, sources)).toArray)
      case AnyOf(cs) => new Any(cs.map(compile(_, data, sources)).toArray)
    }
  }

  /**
   * The slots of `column` whose filter may hold one of `hashes` (and those
   * whose filter is unknown): per group and hash, one block row, read once,
   * tested for each member not already known to match. The members are cut
   * into slices, one per core of the driver (`DriverPool`) when they are many,
   * each slice marking its own bitset.
   */
  def probe(data: IndexData, column: IndexData.ColumnSlots, hashes: Array[Long]): BitSet = {
    val groups = column.membersByGroup
    val starts = groups.scanLeft(0)(_ + _._3.length) // each group's first member in the members of all groups
    val found = new java.util.concurrent.ConcurrentLinkedQueue[BitSet]()
    DriverPool.slices(starts.last, ParallelFrom) { (from, until) =>
      val may = new BitSet(column.present.length)
      var g = 0
      while (g < groups.length) {
        val (a, b) = (math.max(from, starts(g)) - starts(g), math.min(until, starts(g + 1)) - starts(g))
        if (a < b) probeMembers(data, groups(g), a, b, hashes, may)
        g += 1
      }
      found.add(may)
    }
    val may = column.unfiltered.clone().asInstanceOf[BitSet]
    found.forEach(may.or(_))
    may
  }

  /** Members of one column with at least this many filters are probed on several threads. */
  val ParallelFrom = 100000

  /** Sets in `may` the slots of members `from until until` of `group` whose filter may hold one of `hashes`. */
  private def probeMembers(data: IndexData, group: (FilterBlocks.Group, Array[Int], Array[Int]), from: Int,
      until: Int, hashes: Array[Long], may: BitSet): Unit = {
    val (g, positions, slots) = group
    val masks = new Array[Int](8)
    // A group's members have filters: none is in `unfiltered` or in another group, so none is set yet.
    var left = until - from // members not yet known to match
    var i = 0
    while (i < hashes.length && left > 0) {
      val h = hashes(i)
      val b = Sbbf.blockIndex(h, g.numBlocks)
      val stripe = data.reader.stripeOf(g, b)
      Block.mask(h, masks)
      val rowStart = g.inStripe(b, 0)
      var m = from
      while (m < until) {
        val s = slots(m)
        if ((i == 0 || !may.get(s)) &&
            (stripe == null || Block.containsMask(stripe, rowStart + positions(m) * Block.Bytes, masks))) {
          may.set(s)
          left -= 1
        }
        m += 1
      }
      i += 1
    }
  }
}
