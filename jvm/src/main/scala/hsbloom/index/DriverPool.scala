package hsbloom.index

import java.util.concurrent.{Callable, ExecutionException, ExecutorService, Executors, Future}
import java.util.concurrent.atomic.AtomicInteger

/**
 * Threads of the driver for planning work that splits into independent
 * pieces (docs/design/scale.md): the parts of an index version's file table,
 * the paths of a new listing, the groups of a probe. A query's planning runs
 * on one thread, and at 1,000,000 files these pieces are most of its time;
 * one thread per core of the driver, daemons, made when first used.
 */
private[hsbloom] object DriverPool {
  val Threads: Int = math.max(1, Runtime.getRuntime.availableProcessors)

  private lazy val pool: ExecutorService = {
    val made = new AtomicInteger()
    Executors.newFixedThreadPool(Threads, r => {
      val t = new Thread(r, s"hsbloom-planning-${made.incrementAndGet()}")
      t.setDaemon(true)
      t
    })
  }

  /**
   * Starts `task` on the pool with the caller's context class loader (Hadoop's
   * file systems and codecs load classes through it).
   */
  def submit[T](task: () => T): Future[T] = {
    val loader = Thread.currentThread.getContextClassLoader
    pool.submit(new Callable[T] {
      def call(): T = {
        val thread = Thread.currentThread
        val before = thread.getContextClassLoader
        thread.setContextClassLoader(loader)
        try task() finally thread.setContextClassLoader(before)
      }
    })
  }

  // Tests slice any work of 2 or more (the answers must not depend on it): `slicingAll`.
  @volatile private var sliceFrom = Int.MaxValue

  /** Runs `body` with every `slices` call cut into slices (tests: the same answers on several threads). */
  def slicingAll[T](body: => T): T = {
    sliceFrom = 2
    try body finally sliceFrom = Int.MaxValue
  }

  /** The result of `future`, its task's own exception thrown as it was. */
  def await[T](future: Future[T]): T = try future.get() catch { case e: ExecutionException => throw e.getCause }

  /**
   * Runs `range(from, until)` over `0 until n` in about `Threads` slices, on
   * the pool and this thread, when `n` is at least `minimum`; else here, in
   * one call. Returns when every slice has run; a slice's exception is thrown.
   */
  def slices(n: Int, minimum: Int)(range: (Int, Int) => Unit): Unit = {
    if (n < math.min(minimum, sliceFrom) || n < 2 || Threads == 1) return range(0, n)
    val size = (n + Threads - 1) / Threads
    val others = (1 until Threads).map(k => (k * size, math.min(n, (k + 1) * size))).filter(r => r._1 < r._2)
      .map { case (from, until) => submit(() => range(from, until)) }
    try range(0, math.min(n, size)) finally others.foreach(f => await(f))
  }
}
