// Declared in Spark's package for its `private[sql]` API; it lives with the shim, which is the only code that uses it.
package org.apache.spark.sql.hsbloom

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.classic.{Dataset, SparkSession}

/** Spark's `Dataset.ofRows`: the DataFrame of a logical plan (`hsbloom.shim.ClassicDataset.ofRows`). */
object DatasetRows {
  def of(spark: SparkSession, plan: LogicalPlan): DataFrame = Dataset.ofRows(spark, plan)
}
