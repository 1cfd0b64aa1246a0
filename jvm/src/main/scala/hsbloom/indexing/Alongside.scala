package hsbloom.indexing

import org.apache.spark.SparkContext

/** Two bodies of Spark work run at the same time, sharing the executors. */
object Alongside {
  /**
   * Runs `side` on a new thread while `main` runs on this one, so that their
   * Spark jobs share the executors. The thread inherits this thread's job group
   * and description (Spark copies local properties into a new thread). If
   * `main` fails, `side`'s jobs are cancelled and awaited before the error is
   * rethrown, so nothing keeps writing into a version being removed.
   */
  def run[A, B](sc: SparkContext)(side: => B)(main: => A): (A, B) = {
    val tag = s"hsbloom-build-${java.util.UUID.randomUUID()}"
    @volatile var outcome: Either[Throwable, B] = Left(new IllegalStateException("the global filter build did not run"))
    val thread = new Thread(() => {
      sc.addJobTag(tag)
      outcome = try Right(side) catch { case t: Throwable => Left(t) }
    }, "hsbloom global filters")
    thread.setDaemon(true)
    thread.start()
    val a = try main catch {
      case t: Throwable =>
        sc.cancelJobsWithTag(tag)
        thread.join()
        throw t
    }
    thread.join()
    outcome match {
      case Right(b) => (a, b)
      case Left(t) => throw t
    }
  }
}
