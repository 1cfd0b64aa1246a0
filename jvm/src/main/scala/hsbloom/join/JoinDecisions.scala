package hsbloom.join

import scala.collection.mutable

/**
 * What the join rule decided for each join it looked at, for `hs.explain`:
 * while `collecting` runs (planning a query in this thread), `JoinFilterRule`
 * records one line per feature and join; otherwise recording costs nothing.
 */
object JoinDecisions {
  private val current = new ThreadLocal[mutable.LinkedHashSet[String]]()

  /** Runs `body` (which plans a query) and returns its result with the decisions made meanwhile, once each. */
  def collecting[T](body: => T): (T, Seq[String]) = {
    val saved = current.get()
    val lines = mutable.LinkedHashSet[String]()
    current.set(lines)
    try {
      val result = body
      (result, lines.toSeq)
    } finally current.set(saved)
  }

  def active: Boolean = current.get() != null

  /** Records `line` when collecting (it is built only then). */
  def record(line: => String): Unit = {
    val lines = current.get()
    if (lines != null) lines += line
  }
}
