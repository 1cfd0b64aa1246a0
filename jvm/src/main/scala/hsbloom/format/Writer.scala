package hsbloom.format

import java.net.InetAddress
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

/**
 * Who wrote a log entry: enough to tell, on the same host, whether that writer is still alive. The writer is
 * the JVM that runs the operation (the driver), whichever client asked for it.
 */
final case class Writer(host: String, pid: Long, operationId: String) {
  /**
   * True only when certain: same host and the process is gone, or it is this JVM and the operation no longer
   * runs here. A writer on another host, or whose process id now belongs to another process, is not provably
   * dead: the index then stays busy until a cancel.
   */
  def isProvablyDead: Boolean =
    if (host != Writer.localHost) false
    else if (pid == Writer.localPid) !Writer.runningOperations.contains(operationId)
    else !ProcessHandle.of(pid).isPresent

  def describe: String = s"process $pid on host $host"
}

object Writer {
  /** Operations this JVM is running, by operation id (an entry of this JVM whose operation is not here is orphaned). */
  private val runningOperations = ConcurrentHashMap.newKeySet[String]()

  lazy val localHost: String =
    try InetAddress.getLocalHost.getHostName catch { case NonFatal(_) => sys.env.getOrElse("HOSTNAME", "localhost") }

  lazy val localPid: Long = ProcessHandle.current().pid()

  /** A writer for a new operation of this JVM. */
  def current(): Writer = Writer(localHost, localPid, UUID.randomUUID().toString.replace("-", ""))

  /** Runs `body` with `operationId` marked as running in this JVM. */
  def running[T](operationId: String)(body: => T): T = {
    runningOperations.add(operationId)
    try body finally runningOperations.remove(operationId)
  }
}
