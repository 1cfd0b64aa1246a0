package hsbloom.indexing

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import hsbloom.sbbf.ParquetHash

class HyperLogLogSuite extends AnyFunSuite {
  private def hashes(n: Int, seed: Int): Array[Long] = {
    val rnd = new Random(seed)
    Array.fill(n)(ParquetHash.hashLong(rnd.nextLong()))
  }

  test("estimates are within 3 % of exact counts from tens to millions") {
    Seq(10, 1000, 50000, 2000000).foreach { n =>
      val hll = new HyperLogLog()
      hashes(n, n).foreach(hll.update)
      val error = math.abs(hll.estimate.toDouble / n - 1)
      assert(error < 0.03, s"n=$n estimate=${hll.estimate}")
    }
    assert(new HyperLogLog().estimate == 0)
  }

  test("duplicates do not count, and merging is a union that can be repeated") {
    val a = new HyperLogLog()
    val b = new HyperLogLog()
    val values = hashes(20000, 1)
    values.foreach(a.update)
    values.foreach(a.update)
    values.take(10000).foreach(b.update)
    hashes(10000, 2).foreach(b.update)
    val merged = a.copy().merge(b)
    assert(math.abs(merged.estimate / 30000.0 - 1) < 0.03)
    assert(merged.copy().merge(b).estimate == merged.estimate, "merging the same sketch twice changes nothing")
  }
}
