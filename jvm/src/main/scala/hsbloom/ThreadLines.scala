package hsbloom

import scala.collection.mutable

/**
 * Lines recorded in one thread while `collecting` runs, for the explain
 * texts: what the rules decided, or what the scans pruned, while a query was
 * planned or a statement ran in this thread. Outside `collecting`, recording
 * costs nothing (the line is not even built). With `once`, a line recorded
 * again (a rule that runs more than once per query) is kept once.
 */
class ThreadLines(once: Boolean) {
  private val current = new ThreadLocal[mutable.ArrayBuffer[String]]()

  /** Runs `body` and returns its result with the lines recorded meanwhile, in order. */
  def collecting[T](body: => T): (T, Seq[String]) = {
    val saved = current.get()
    val lines = mutable.ArrayBuffer[String]()
    current.set(lines)
    try {
      val result = body
      (result, if (once) lines.distinct.toSeq else lines.toSeq)
    } finally current.set(saved)
  }

  def active: Boolean = current.get() != null

  /** Records `line` when collecting (it is built only then). */
  def record(line: => String): Unit = {
    val lines = current.get()
    if (lines != null) lines += line
  }
}
