package hsbloom.indexing

import org.apache.spark.SparkContext
import org.apache.spark.util.AccumulatorV2

/**
 * The map tasks' per-column HyperLogLogs, merged on the driver: the column's distinct count over all files when
 * the build has no global filter (whose bucket reducers merge the same sketches through the shuffle instead).
 *
 * Merging is a register-wise max, so a map task that runs again (a retry, a lost shuffle output) adds nothing:
 * safe in a transformation, where Spark may apply a task's update more than once.
 */
final class DistinctSketches(numColumns: Int) extends AccumulatorV2[Array[HyperLogLog], Array[HyperLogLog]] {
  private var merged: Array[HyperLogLog] = Array.fill(numColumns)(new HyperLogLog())

  override def isZero: Boolean = merged.forall(_.isEmpty)
  override def copy(): DistinctSketches = {
    val other = new DistinctSketches(numColumns)
    other.merged = merged.map(_.copy())
    other
  }
  override def reset(): Unit = merged = Array.fill(numColumns)(new HyperLogLog())
  override def add(sketches: Array[HyperLogLog]): Unit = merged.zip(sketches).foreach { case (a, b) => a.merge(b) }
  override def merge(other: AccumulatorV2[Array[HyperLogLog], Array[HyperLogLog]]): Unit = add(other.value)
  override def value: Array[HyperLogLog] = merged

  /** Per column (`columns`, in the order the map tasks count them), the merged estimate. */
  def estimates(columns: Seq[String]): Map[String, Long] = columns.zip(merged.map(_.estimate)).toMap
}

object DistinctSketches {
  /** A new accumulator for `numColumns` columns, registered with `sc`. */
  def registered(sc: SparkContext, numColumns: Int): DistinctSketches = {
    val sketches = new DistinctSketches(numColumns)
    sc.register(sketches, "hsbloom distinct counts")
    sketches
  }
}
