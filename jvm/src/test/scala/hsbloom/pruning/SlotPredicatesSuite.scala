package hsbloom.pruning

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.{FileStatusWithMetadata, PartitionDirectory}
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.index.{DriverPool, FilterBlocks, IndexData, IndexTables, SlotsBuilder}
import hsbloom.pruning.PredicateTranslation._
import hsbloom.sbbf.Sbbf

/**
 * The predicate answered for all slots at once (`SlotPredicates`) is exactly
 * the file-by-file answer (`PredicateTranslation.mayMatch`), over random
 * filters, null counts, missing columns, unparsable filters, IS NULL, IN,
 * AND and OR, with one index version and with two that hold different files.
 */
class SlotPredicatesSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private val random = new scala.util.Random(18)
  private val columns = Seq("a", "b")

  /** Per file its values per column (hashes), and an index version over `files` of them. */
  private def version(name: String, files: Seq[Int], values: Map[(Int, String), Seq[Long]]): IndexData = {
    val dataPath = new Path(Files.createTempDirectory("slots").toUri.toString, s"$name/v__=0").toString
    val rows = for (f <- files; c <- columns if !(c == "b" && f % 7 == 3)) yield { // some files lack column b
      val sbbf = Sbbf.ofBytes(Seq(32, 64, 256, 1024)(f % 4))
      values((f, c)).foreach(sbbf.insertHash)
      val bytes = if (f % 11 == 5) Array[Byte](1, 2, 3) else sbbf.toBytes // an unparsable filter
      Row(f.toLong, s"file:/data/part-$f.parquet", 100L + f, 7L, c, 10L, (f % 3).toLong, 10L, bytes)
    }
    val attached = FilterBlocks.attach(rows.iterator, dataPath, conf).toList
    val slots = new SlotsBuilder(Seq(dataPath), new FilterBlocks.Reader(conf, 1L << 20))
    val blocksDir = new Path(IndexTables.blocksPath(dataPath))
    attached.foreach { r =>
      val slot = slots.slot(r.getString(1), r.getLong(2), r.getLong(3))
      val group = if (r.getInt(10) == 0) -1 else slots.group(new Path(blocksDir, r.getString(8)), r.getLong(9),
        r.getInt(10), r.getInt(12)).id
      slots.add(slot, r.getString(4), r.getLong(5), r.getLong(6), group, r.getInt(11))
    }
    slots.result(Map.empty)
  }

  private def randomPredicate(depth: Int, probes: Seq[Long]): FilePredicate = random.nextInt(if (depth > 2) 3 else 6) match {
    case 0 => Probe(Seq("a", "b", "c")(random.nextInt(3)),
      Array.fill(1 + random.nextInt(4))(if (random.nextBoolean()) probes(random.nextInt(probes.size)) else random.nextLong()))
    case 1 => HasNulls(Seq("a", "b", "c")(random.nextInt(3)))
    case 2 => Seq(MayMatch, NoMatch)(random.nextInt(2))
    case 3 | 4 => AllOf(Seq.fill(2 + random.nextInt(2))(randomPredicate(depth + 1, probes)))
    case _ => AnyOf(Seq.fill(2 + random.nextInt(2))(randomPredicate(depth + 1, probes)))
  }

  private def listing(files: Seq[Int], changed: Set[Int]): Seq[PartitionDirectory] =
    Seq(PartitionDirectory(InternalRow.empty, files.map { f =>
      val mtime = if (changed.contains(f)) 8L else 7L
      FileStatusWithMetadata(new FileStatus(100L + f, false, 1, 1L, mtime, new Path(s"file:/data/part-$f.parquet")))
    }))

  private def compare(data: IndexedSeq[IndexData], sources: Map[String, Seq[(Int, String)]], listed: Seq[Int],
      changed: Set[Int], values: Map[(Int, String), Seq[Long]]): Unit = {
    val dirs = listing(listed, changed)
    val statuses = dirs.head.files
    val slots = data.map(_.listings.slotsOf(dirs)).toArray
    // The same listing again: its slots are reused, and equal.
    assert(data.map(_.listings.slotsOf(dirs)).zip(slots).forall { case (a, b) => a.sameElements(b) })
    listed.indices.foreach { i =>
      val f = statuses(i)
      data.indices.foreach(k => assert(slots(k)(i) == data(k).slotOf(f.getPath, f.getLen, f.getModificationTime)))
      if (changed.contains(listed(i))) assert(slots.forall(_(i) == -1), "a changed file has no slot")
    }
    val probes = values.values.flatten.toSeq
    var (kept, pruned) = (0, 0)
    (0 until 300).foreach { _ =>
      val p = randomPredicate(0, probes)
      val compiled = SlotPredicates.compile(p, data, c => sources.getOrElse(c, Nil))
      listed.indices.foreach { i =>
        val perFile = PredicateTranslation.mayMatch(p, c => sources.getOrElse(c, Nil).flatMap { case (k, ic) =>
          if (slots(k)(i) < 0) None else data(k).entry(slots(k)(i), ic)
        })
        assert(compiled.mayMatch(slots, i) == perFile, s"$p on file ${listed(i)}")
        if (perFile) kept += 1 else pruned += 1
      }
    }
    assert(kept > 1000 && pruned > 1000, s"the random predicates keep $kept and prune $pruned")
  }

  private def randomValues(files: Range): Map[(Int, String), Seq[Long]] =
    (for (f <- files; c <- columns) yield (f, c) -> Seq.fill(random.nextInt(12))(random.nextLong())).toMap

  test("one version: the slot answer equals the per-file answer, files changed or not indexed are unknown") {
    val values = randomValues(0 until 120)
    val data = IndexedSeq(version("one", 0 until 100, values))
    compare(data, Map("a" -> Seq(0 -> "a"), "b" -> Seq(0 -> "b")), (0 until 120).reverse, Set(4, 9, 50), values)
  }

  test("two versions holding different files: a check fails when any version holding the file says so") {
    val values = randomValues(0 until 90)
    val data = IndexedSeq(version("first", 0 until 60, values), version("second", 30 until 90, values))
    compare(data, Map("a" -> Seq(0 -> "a", 1 -> "a"), "b" -> Seq(1 -> "b")), 0 until 90, Set(35), values)
  }

  test("on several threads (every listing, reuse check and probe cut into slices), the answers are the same") {
    val values = randomValues(0 until 150)
    DriverPool.slicingAll {
      val data = IndexedSeq(version("sliced-first", 0 until 110, values), version("sliced-second", 40 until 150, values))
      compare(data, Map("a" -> Seq(0 -> "a", 1 -> "a"), "b" -> Seq(0 -> "b", 1 -> "b")), (0 until 150).reverse,
        Set(4, 45, 120), values)
    }
  }

  test("a listing is remembered per version, and a new listing object is looked up afresh") {
    val values = randomValues(0 until 10)
    val data = version("remember", 0 until 10, values)
    val first = listing(0 until 10, Set.empty)
    assert(data.listings.slotsOf(first).forall(_ >= 0))
    assert(data.listings.slotsOf(first).forall(_ >= 0) && data.listings.count == 1)
    // Same paths, one file's mtime changed, new objects: that file is not covered.
    val again = data.listings.slotsOf(listing(0 until 10, Set(3)))
    assert(again(3) == -1 && again.count(_ >= 0) == 9 && data.listings.count == 2)
  }

  /** `p` evaluated exactly over a zone's values (null checks hold: only probes are narrowed). */
  private def holds(p: FilePredicate, zone: Map[String, Set[Long]]): Boolean = p match {
    case MayMatch | HasNulls(_) => true
    case NoMatch => false
    case Probe(c, hashes) => hashes.exists(zone.getOrElse(c, Set.empty[Long]).contains)
    case AllGrams(c, hashes) => hashes.forall(zone.getOrElse(c, Set.empty[Long]).contains)
    case AllOf(cs) => cs.forall(holds(_, zone))
    case AnyOf(cs) => cs.exists(holds(_, zone))
  }

  test("a predicate narrowed to a file answers every subset of the file's values as before, with fewer hashes") {
    val values = randomValues(0 until 80)
    val data = version("narrow", 0 until 80, values)
    val probes = values.values.flatten.toSeq
    var (before, after) = (0L, 0L)
    def hashes(p: FilePredicate): Int = p match {
      case Probe(_, hs) => hs.length
      case AllOf(cs) => cs.map(hashes).sum
      case AnyOf(cs) => cs.map(hashes).sum
      case _ => 0
    }
    (0 until 300).foreach { _ =>
      val p = randomPredicate(0, probes)
      (0 until 80).foreach { f =>
        val slot = data.slotOf(new Path(s"file:/data/part-$f.parquet"), 100L + f, 7L)
        val narrowed = narrowedTo(p, c => data.entry(slot, c).toSeq)
        before += hashes(p); after += hashes(narrowed)
        // A row group holds some of its file's values: whichever, the narrowed predicate answers it as `p` does.
        (0 until 4).foreach { _ =>
          val zone = columns.map(c => c -> values((f, c)).filter(_ => random.nextBoolean()).toSet).toMap
          assert(holds(narrowed, zone) == holds(p, zone), s"$p narrowed to file $f: $narrowed")
        }
      }
    }
    assert(after < before * 3 / 4, s"narrowing kept $after of $before hashes") // column c is not indexed: kept
  }
}
