package hsbloom.indexing

import org.apache.spark.SparkContext

/** The job group and description an index build's Spark jobs run under. */
object JobDescription {
  /**
   * Runs `body` with `description` on its jobs. A job group the caller set
   * (create_index sets one per index, to cancel exactly its own jobs) is kept;
   * without one, the jobs get the group `hsbloom-build`.
   */
  def around[T](sc: SparkContext, description: String)(body: => T): T = {
    val keys = Seq("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
    val saved = keys.map(k => k -> sc.getLocalProperty(k))
    if (sc.getLocalProperty("spark.jobGroup.id") == null) sc.setJobGroup("hsbloom-build", description, interruptOnCancel = true)
    else sc.setJobDescription(description)
    try body finally saved.foreach { case (k, v) => sc.setLocalProperty(k, v) }
  }
}
