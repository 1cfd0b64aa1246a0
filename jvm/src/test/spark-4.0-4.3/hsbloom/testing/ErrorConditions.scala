package hsbloom.testing

import org.apache.spark.SparkThrowable

/** The error condition of a Spark error: `getCondition` from Spark 4.0 (`getErrorClass` before). */
object ErrorConditions {
  def of(e: SparkThrowable): String = e.getCondition
}
