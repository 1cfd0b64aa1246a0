package hsbloom.join

import org.scalatest.funsuite.AnyFunSuite

/**
 * The join cost model on the shapes it was made for: TPC-H at scale factor 1
 * in 24 files a table (counts as the indexes record them) and the join
 * benchmark's random keys.
 */
class JoinCostModelSuite extends AnyFunSuite {
  import JoinCostModel._

  private val MiB = BigInt(1024 * 1024)

  test("a primary key's filter probed by its foreign key keeps every row: skipped") {
    // lineitem.l_orderkey (1.5M distinct) probed by orders.o_orderkey's filter (1.5M distinct)
    val d = globalFilter(1500000, Some(1500000), 0.01, 1800000, 150 * MiB)
    assert(!d.applies && d.reason.contains("100% pass"), d.reason)
    // customer.c_custkey (150K) probed by orders.o_custkey's filter (100K distinct): two thirds pass
    assert(!globalFilter(100000, Some(150000), 0.01, 120000, 10 * MiB).applies)
  }

  test("a dimension's filter probed by a fact with ten times its keys: injected") {
    val d = globalFilter(2000000, Some(20000000), 0.01, 4 * 1024 * 1024, 300 * MiB)
    assert(d.applies && d.reason.contains("11% pass"), d.reason)
  }

  test("a filter larger than the side it filters is skipped; unknown probed statistics leave it to the sample") {
    assert(!globalFilter(1000, Some(100000), 0.01, 2 * 1024 * 1024, MiB).applies)
    assert(globalFilter(1000, None, 0.01, 2000, MiB).applies)
  }

  test("file pruning: keys spread over most files are skipped, random unique keys are pruned") {
    // lineitem.l_partkey: 6M rows over 200K parts, 30 rows a key: a key is in about 17 of 24 files
    val (partkey, _) = filePruning(24, 6000000, 200000, 0.01, 150 * MiB, 5 * MiB, 5000)
    assert(!partkey.applies && partkey.reason.contains("of 24 files"), partkey.reason)
    // orders.o_custkey: 15 rows a key: about 11.6 of 24 files for one key, so one key at most is worth it
    assert(filePruning(24, 1500000, 100000, 0.01, 40 * MiB, 10 * MiB, 5000)._2 == 1)
    // bench/join.py: 20M distinct keys in 200 files; the dimension is a tenth of the fact's bytes
    val (random, keys) = filePruning(200, 20000000, 20000000, 0.01, 300 * MiB, 30 * MiB, 5000)
    assert(random.applies, random.reason)
    assert(keys >= 20 && keys <= 50, keys)
  }

  test("file pruning: the build side is read again only when it is a small share of the probe side") {
    val (d, _) = filePruning(200, 20000000, 20000000, 0.01, 100 * MiB, 30 * MiB, 5000)
    assert(!d.applies && d.reason.contains("reading the build side again"), d.reason)
    assert(filePruning(200, 20000000, 20000000, 0.01, 100 * MiB, 0, 5000)._1.applies) // local rows
    assert(!filePruning(1, 100, 100, 0.01, 100 * MiB, 0, 5000)._1.applies)
  }

  test("a key read through a join bounds the probed keys from above: enough to skip, else the sample decides") {
    // TPC-H Q5: lineitem.l_orderkey's filter probed by orders.o_orderkey after orders JOIN customer
    val d = globalFilter(1500000, Some(1500000), 0.01, 2 * 1024 * 1024, 12 * MiB, probedThroughJoin = true)
    assert(!d.applies && d.reason.contains("at most 1500000 probed (read through a join): all may pass"), d.reason)
    val few = globalFilter(1000, Some(1000000), 0.01, 2000, 12 * MiB, probedThroughJoin = true)
    assert(few.applies && few.reason.contains("each task stops probing"), few.reason)
  }

  test("file pruning: a build side that filters no rows is skipped when its index counts more keys than pay") {
    // TPC-H Q5: orders.o_custkey (one key worth waiting for) from all of customer's 150K keys
    val (d, keys) = filePruning(24, 1500000, 100000, 0.01, 64 * MiB, 14 * MiB, 5000, buildDistinct = Some(150000))
    assert(!d.applies && keys == 0 && d.reason.contains("its key has 150000 distinct values"), d.reason)
    // bench/join.py's shape with a dimension of 20 keys: its index's count is within the 45 worth it
    assert(filePruning(200, 20000000, 20000000, 0.01, 300 * MiB, 1 * MiB, 5000, buildDistinct = Some(20))._1.applies)
  }

  test("keys counted before the build side runs: not taken, not even from a broadcast, when they keep every file") {
    // TPC-H Q5: 149,649 customer keys against 24 orders files, a key measured in 10.9 of them
    val q5 = knownKeys(24, 1500000, 99996, 0.01, Some(10.9), 149649)
    assert(!q5.applies && q5.reason.contains("its key has 149649 distinct values (its index), which keep every file"),
      q5.reason)
    // Two keys of clustered ids (a key in one of 80 files) keep two files: 78 pruned
    val two = knownKeys(80, 2000000, 1000000, 0.0, Some(1.0), 2)
    assert(two.applies && two.reason.contains("about 78.0 files pruned"), two.reason)
    // The edge: keys that leave one file pruned in expectation are taken, a key more is not
    val perKey = keySpread(20, 1000, 100, 0.0, Some(10.0))._1 // a key in half the files
    assert(knownKeys(20, 1000, 100, 0.0, Some(10.0), 4).applies && !knownKeys(20, 1000, 100, 0.0, Some(10.0), 5).applies)
    assert(perKey == 0.5 && 20 * math.pow(0.5, 4) >= 1 && 20 * math.pow(0.5, 5) < 1)
  }

  test("file pruning: a measured spread replaces the random one (clustered keys are in one file each)") {
    // The held-out shape of #36: 80 files of time-ordered ids, 2 rows a key; at random a key would be in 2 files
    val clustered = keysWorthIt(80, 2000000, 1000000, 0.01, 100000, filesPerKey = Some(1.0))
    assert(clustered.isRight && clustered.toOption.get._2.contains("1.0 of 80 files (measured"), clustered)
    assert(clustered.toOption.get._1 > keysWorthIt(80, 2000000, 1000000, 0.01, 100000, None).toOption.get._1)
    // lineitem.l_partkey measured: each file holds 143K of the 200K parts, 17.2 files a key: no key set pays
    val spread = keysWorthIt(24, 6000000, 200000, 0.01, 100000, filesPerKey = Some(24 * 143000 / 200000.0))
    assert(spread.left.exists(_.reason.contains("17.2 of 24 files (measured by the index): no key set")), spread)
    // A measured spread never counts a key in fewer than one file or more than all of them
    assert(keySpread(10, 100, 100, 0.0, Some(0.2))._1 == 0.1 && keySpread(10, 100, 100, 0.0, Some(40.0))._1 == 1.0)
  }

  test("the keys worth waiting for keep at most half of the files") {
    assert(maxUsefulKeys(0.6) == 0)
    val share = keptFileShare(8, 1000, 1000, 0.01)
    val n = maxUsefulKeys(share)
    assert(1 - math.pow(1 - share, n) <= MaxKeptFileShare && 1 - math.pow(1 - share, n + 1) > MaxKeptFileShare)
  }
}
