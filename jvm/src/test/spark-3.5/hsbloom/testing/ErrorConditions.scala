package hsbloom.testing

import org.apache.spark.SparkThrowable

/** The error condition of a Spark error: Spark 3.5's `getErrorClass` (4.0 renamed it `getCondition`). */
object ErrorConditions {
  def of(e: SparkThrowable): String = e.getErrorClass
}
