package hsbloom.index

import java.util.concurrent.atomic.AtomicIntegerArray

import org.scalatest.funsuite.AnyFunSuite

/** `DriverPool.slices` runs each index exactly once, in slices on several threads when asked to, and fails as its slices do. */
class DriverPoolSuite extends AnyFunSuite {
  private def runs(n: Int, minimum: Int): (Seq[Int], Int) = {
    val seen = new AtomicIntegerArray(math.max(n, 1))
    val threads = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()
    DriverPool.slices(n, minimum) { (from, until) =>
      threads.add(Thread.currentThread.getName)
      (from until until).foreach(i => seen.incrementAndGet(i))
    }
    ((0 until n).map(seen.get), threads.size)
  }

  test("every index runs once, in one call below the minimum and on several threads above it") {
    for (n <- Seq(0, 1, 2, 3, 7, 100, 12345)) {
      val (below, oneThread) = runs(n, Int.MaxValue)
      assert(below.forall(_ == 1) && oneThread <= 1, s"n = $n")
      val (above, threads) = runs(n, 1)
      assert(above.forall(_ == 1), s"n = $n")
      if (n >= 2 && DriverPool.Threads > 1) assert(threads > 1, s"n = $n ran on one thread")
    }
    val (forced, threads) = DriverPool.slicingAll(runs(1000, Int.MaxValue))
    assert(forced.forall(_ == 1) && (DriverPool.Threads == 1 || threads > 1))
  }

  test("a slice's exception is thrown to the caller, and a task runs with the caller's context class loader") {
    val failed = intercept[IllegalStateException](DriverPool.slices(1000, 1) { (from, _) =>
      if (from > 0) throw new IllegalStateException("slice failed")
    })
    assert(failed.getMessage == "slice failed" || DriverPool.Threads == 1)
    val loader = new java.net.URLClassLoader(Array.empty[java.net.URL], getClass.getClassLoader)
    val before = Thread.currentThread.getContextClassLoader
    Thread.currentThread.setContextClassLoader(loader)
    try assert(DriverPool.await(DriverPool.submit(() => Thread.currentThread.getContextClassLoader)) eq loader)
    finally Thread.currentThread.setContextClassLoader(before)
  }
}
