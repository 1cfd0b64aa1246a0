package hsbloom.shim

/**
 * The classes a Spark 4 driver runs a DataFrame and a session as: `org.apache.spark.sql.classic`, since the `sql`
 * ones became the API Spark Connect shares (4.0).
 */
object Classic {
  type Dataset[T] = org.apache.spark.sql.classic.Dataset[T]
  type Session = org.apache.spark.sql.classic.SparkSession

  /** A driver's session as the classic one it is (only a Connect client's is not, and none reaches the jar). */
  def session(spark: org.apache.spark.sql.SparkSession): Session = spark.asInstanceOf[Session]
}
