package hsbloom.sbbf

import scala.util.Random

import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter
import org.scalatest.funsuite.AnyFunSuite

/** Combining row-group filters into one file filter (`SbbfUnion`), checked against hashing the union directly. */
class SbbfUnionSuite extends AnyFunSuite {
  private def filled(numBytes: Int, hashes: Seq[Long]): Sbbf = {
    val f = Sbbf.ofBytes(numBytes)
    hashes.foreach(f.insertHash)
    f
  }

  test("filters of different power-of-two sizes combine into exactly the filter of the union at the smallest size") {
    val rng = new Random(17)
    for (trial <- 0 until 40) {
      val groups = 1 + rng.nextInt(6)
      val hashes = Seq.fill(groups)(Seq.fill(rng.nextInt(3000))(rng.nextLong()))
      val sizes = Seq.fill(groups)(32 << rng.nextInt(12))
      val combined = SbbfUnion.of(hashes.zip(sizes).map { case (h, s) => filled(s, h) })
      assert(combined.numBytes == sizes.min, s"trial $trial")
      assert(combined == filled(sizes.min, hashes.flatten), s"trial $trial: not the filter of the union")
      hashes.flatten.foreach(h => assert(combined.mightContainHash(h), s"trial $trial: lost a value"))
    }
  }

  test("folding parquet-java's own filters: a value inserted in any row group is found, bytes as hashing the union") {
    val rng = new Random(5)
    val groups = Seq(4096, 16384, 1024).map(bytes => bytes -> Seq.fill(700)(rng.nextLong()))
    val native = groups.map { case (bytes, hashes) =>
      val f = new BlockSplitBloomFilter(bytes)
      hashes.foreach(f.insertHash)
      val out = new java.io.ByteArrayOutputStream()
      f.writeTo(out)
      Sbbf.fromBitset(out.toByteArray)
    }
    val combined = SbbfUnion.of(native)
    assert(combined == filled(1024, groups.flatMap(_._2)))
    groups.flatMap(_._2).foreach(h => assert(combined.mightContainHash(h)))
  }

  test("the inputs are left as they were, and one filter combines to a copy of itself") {
    val a = filled(64, Seq(1L, 2L, 3L))
    val b = filled(128, Seq(4L << 40, 5L << 40))
    val (aCopy, bCopy) = (Sbbf.fromBytes(a.toBytes), Sbbf.fromBytes(b.toBytes))
    SbbfUnion.of(Seq(a, b))
    assert(a == aCopy && b == bCopy)
    assert(SbbfUnion.of(Seq(b)) == bCopy)
    assertThrows[IllegalArgumentException](SbbfUnion.of(Nil))
  }

  test("adding filters one at a time gives the union of all of them, in any order of sizes") {
    val rng = new Random(23)
    for (trial <- 0 until 40) {
      val groups = 1 + rng.nextInt(8)
      val hashes = Seq.fill(groups)(Seq.fill(rng.nextInt(2000))(rng.nextLong()))
      val filters = hashes.map(h => filled(32 << rng.nextInt(10), h))
      val expected = SbbfUnion.of(filters)
      val added = filters.tail.foldLeft(Sbbf.fromBytes(filters.head.toBytes))(SbbfUnion.add)
      assert(added == expected, s"trial $trial")
    }
  }
}
