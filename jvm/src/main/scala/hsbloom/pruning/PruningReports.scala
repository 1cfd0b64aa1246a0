package hsbloom.pruning

import scala.collection.mutable

/**
 * The pruned listings made in this thread while `collecting` runs, one line
 * each (the files listed, before and after pruning), for
 * `StatementExplain`: a Delta DELETE, UPDATE or MERGE plans its scans only
 * while it runs, so what they read is known only then. Otherwise recording
 * costs nothing.
 */
object PruningReports {
  private val current = new ThreadLocal[mutable.ArrayBuffer[String]]()

  /** Runs `body` and returns its result with the listings it pruned, in order. */
  def collecting[T](body: => T): (T, Seq[String]) = {
    val saved = current.get()
    val lines = mutable.ArrayBuffer[String]()
    current.set(lines)
    try {
      val result = body
      (result, lines.toSeq)
    } finally current.set(saved)
  }

  /** Records `line` when collecting (it is built only then). */
  def record(line: => String): Unit = {
    val lines = current.get()
    if (lines != null) lines += line
  }
}
