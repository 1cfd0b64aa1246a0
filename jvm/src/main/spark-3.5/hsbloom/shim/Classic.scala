package hsbloom.shim

/** The classes a Spark 3.5 driver runs a DataFrame and a session as: `org.apache.spark.sql`'s own. */
object Classic {
  type Dataset[T] = org.apache.spark.sql.Dataset[T]
  type Session = org.apache.spark.sql.SparkSession

  def session(spark: org.apache.spark.sql.SparkSession): Session = spark
}
