package hsbloom.rules

import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable

import org.apache.spark.sql.SparkSession

/**
 * Lines recorded while `collecting` runs, for the explain texts: what the
 * rules decided, or what the scans pruned, while a query was planned or a
 * statement ran. A line recorded in the collecting thread is kept; so is one
 * recorded in a thread Spark runs the statement's work in (an adaptive query
 * stage lists its files in a thread of Spark's own), found through a local
 * property of the active session's SparkContext, which Spark hands to those
 * threads with the statement's other local properties. Outside `collecting`,
 * recording costs nothing (the line is not even built). With `once`, a line
 * recorded again (a rule that runs more than once per query) is kept once.
 */
class ThreadLines(once: Boolean) {
  private val current = new ThreadLocal[mutable.ArrayBuffer[String]]()
  /** The buffers being collected into, by the token in the local property `property`. */
  private val byToken = new ConcurrentHashMap[String, mutable.ArrayBuffer[String]]()
  private val property = s"hsbloom.explain.${getClass.getName}"

  /** Runs `body` and returns its result with the lines recorded meanwhile, in order. */
  def collecting[T](body: => T): (T, Seq[String]) = {
    val saved = current.get()
    val lines = mutable.ArrayBuffer[String]()
    current.set(lines)
    val context = SparkSession.getActiveSession.map(_.sparkContext)
    val token = UUID.randomUUID().toString
    val savedToken = context.map(_.getLocalProperty(property))
    context.foreach { sc => byToken.put(token, lines); sc.setLocalProperty(property, token) }
    try {
      val result = body
      (result, lines.synchronized { if (once) lines.distinct.toList else lines.toList })
    } finally {
      current.set(saved)
      context.foreach { sc => sc.setLocalProperty(property, savedToken.orNull); byToken.remove(token) }
    }
  }

  def active: Boolean = buffer.isDefined

  /** Records `line` when collecting (it is built only then). */
  def record(line: => String): Unit = buffer.foreach(lines => lines.synchronized(lines += line))

  /** This thread's buffer, or the one its statement's local property names (none: not collecting). */
  private def buffer: Option[mutable.ArrayBuffer[String]] = Option(current.get()).orElse {
    if (byToken.isEmpty) None
    else SparkSession.getActiveSession.flatMap(s => Option(s.sparkContext.getLocalProperty(property)))
      .flatMap(t => Option(byToken.get(t)))
  }
}
