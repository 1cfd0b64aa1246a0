package hsbloom.operations

import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession

/**
 * The Spark job group an operation's jobs run under (`hsbloom-<operation>-<index name>`, shown in the Spark UI),
 * so that exactly an operation's jobs can be cancelled; the caller's group is restored afterwards.
 */
object JobGroup {
  def id(operation: String, name: String): String = s"hsbloom-$operation-$name"

  /**
   * Runs `body` under the group `groupId`; on failure, when `cancelOnFailure` (the group is the operation's alone:
   * it holds the transient entry), cancels what is left of its jobs.
   */
  def around[T](spark: SparkSession, groupId: String, description: String, cancelOnFailure: Boolean)(body: => T): T = {
    val sc = spark.sparkContext
    val keys = Seq("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
    val saved = keys.map(k => k -> sc.getLocalProperty(k))
    sc.setJobGroup(groupId, description, interruptOnCancel = true)
    try body
    catch {
      case e: Throwable =>
        if (cancelOnFailure) try sc.cancelJobGroup(groupId) catch { case NonFatal(_) => }
        throw e
    } finally saved.foreach { case (k, v) => sc.setLocalProperty(k, v) }
  }
}
