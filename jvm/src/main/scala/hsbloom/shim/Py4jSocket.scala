package hsbloom.shim

import scala.util.control.NonFatal

/**
 * Turns Nagle's algorithm off on the socket of the py4j connection that is
 * calling, so that replies of more than 8 KiB reach Python without a 40 ms
 * stall.
 *
 * py4j 0.10.9.9, which PySpark 4.2 ships, writes a reply through an 8 KiB
 * BufferedWriter: a longer reply (a log entry, a file listing as JSON) leaves
 * in several socket writes, and with Nagle on the second write waits for an ACK
 * that Python's side delays by about 40 ms (py4j issue #516; py4j turned Nagle
 * off in a later release). Measured on this machine: a 5,000-character reply
 * 0.2 ms, a 20,000-character one 44 ms. hsbloom's operations return several
 * such replies each (docs/refresh.md, "Where an incremental refresh's time
 * goes").
 *
 * py4j serves each Python thread on its own JVM thread, whose Runnable is the
 * connection; it is reached through Thread's private field (open to reflection
 * because Spark starts the JVM with `--add-opens java.base/java.lang`). Any
 * failure (another py4j, another JVM) leaves the socket as it was: this is
 * only a speed-up.
 */
object Py4jSocket {
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)

  /** Whether the calling thread's py4j socket now has TCP_NODELAY. */
  def disableNagle(): Boolean =
    try {
      connectionOf(Thread.currentThread()) match {
        case Some(connection) =>
          val socket = connection.getSocket
          if (socket != null && !socket.getTcpNoDelay) socket.setTcpNoDelay(true)
          socket != null && socket.getTcpNoDelay
        case None => false
      }
    } catch {
      case NonFatal(e) =>
        log.debug(s"hsbloom: could not set TCP_NODELAY on the py4j connection: $e")
        false
    }

  /** The py4j connection a py4j thread runs: Thread.target up to Java 20, Thread.holder.task after. */
  private def connectionOf(thread: Thread): Option[py4j.Py4JServerConnection] = {
    def field(owner: AnyRef, cls: Class[_], name: String): Option[AnyRef] =
      try {
        val f = cls.getDeclaredField(name)
        f.setAccessible(true)
        Option(f.get(owner))
      } catch { case _: NoSuchFieldException => None }
    val runnable = field(thread, classOf[Thread], "target").orElse {
      field(thread, classOf[Thread], "holder").flatMap(holder => field(holder, holder.getClass, "task"))
    }
    runnable.collect { case c: py4j.Py4JServerConnection => c }
  }
}
