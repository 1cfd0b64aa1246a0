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

  test("file pruning: decided by the build side's read only, whatever the keys' spread (the index answers at run time)") {
    // issue #36's clustered fact: 80 files, a dimension a small share of its bytes; no estimate of a key's files
    val clustered = filePruning(80, 2000000, 200 * MiB, 2 * MiB, 100000)
    assert(clustered.applies && clustered.reason.contains("the index says which of the 80 files"), clustered.reason)
    // lineitem.l_partkey (30 rows a key, about 17 of 24 files for random keys): read, the index decides
    assert(filePruning(24, 200000, 150 * MiB, 5 * MiB, 100000).applies)
  }

  test("file pruning: the build side is read again only when it is a small share of the probe side") {
    val d = filePruning(200, 20000000, 100 * MiB, 30 * MiB, 100000)
    assert(!d.applies && d.reason.contains("reading the build side again") && d.reason.contains("over 25%"), d.reason)
    assert(filePruning(200, 20000000, 100 * MiB, 25 * MiB, 100000).applies) // exactly the share
    assert(filePruning(200, 20000000, 100 * MiB, 0, 100000).applies) // local rows
    assert(!filePruning(1, 100, 100 * MiB, 0, 100000).applies)
  }

  test("a key read through a join bounds the probed keys from above: enough to skip, else the sample decides") {
    // TPC-H Q5: lineitem.l_orderkey's filter probed by orders.o_orderkey after orders JOIN customer
    val d = globalFilter(1500000, Some(1500000), 0.01, 2 * 1024 * 1024, 12 * MiB, probedThroughJoin = true)
    assert(!d.applies && d.reason.contains("at most 1500000 probed (read through a join): all may pass"), d.reason)
    val few = globalFilter(1000, Some(1000000), 0.01, 2000, 12 * MiB, probedThroughJoin = true)
    assert(few.applies && few.reason.contains("each task stops probing"), few.reason)
  }

  test("file pruning: a build side that filters no rows is skipped when its index counts too many keys") {
    // TPC-H Q5: orders.o_custkey (100K distinct) from all of customer's 150K keys: every file may hold one
    val d = filePruning(24, 100000, 64 * MiB, 14 * MiB, 100000, buildDistinct = Some(150000))
    assert(!d.applies && d.reason.contains("its key has 150000 distinct values (its index), over the 100000"), d.reason)
    val all = filePruning(24, 100000, 64 * MiB, 1 * MiB, 1000000, buildDistinct = Some(150000))
    assert(!all.applies && all.reason.contains("at least the probe column's 100000"), all.reason)
    // bench/join.py's shape with a dimension of 20 keys
    assert(filePruning(200, 20000000, 300 * MiB, 1 * MiB, 100000, buildDistinct = Some(20)).applies)
  }
}
