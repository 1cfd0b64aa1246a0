package org.apache.spark.sql.hsbloom

import org.apache.spark.sql.{DataFrame, Dataset, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/** `Datasets` on Spark 3.5, whose `Dataset.ofRows` (`private[sql]`) is the `sql` package's own. */
object Datasets {
  def ofRows(session: SparkSession, plan: LogicalPlan): DataFrame = Dataset.ofRows(session, plan)
}
