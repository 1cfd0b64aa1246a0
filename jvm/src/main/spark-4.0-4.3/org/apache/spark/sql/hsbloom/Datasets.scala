package org.apache.spark.sql.hsbloom

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import hsbloom.shim.Classic

/**
 * A DataFrame of a logical plan, as Spark makes one from a parsed statement: for `EXPLAIN BLOOMFILTER
 * <query>`, whose query Spark's parser parsed rather than a caller building a DataFrame. Spark keeps
 * `classic.Dataset.ofRows` `private[sql]`, so this accessor is declared in Spark's `sql` package (its file is
 * in the shim's version folders, one per API). Commands run in a classic session, the only kind given here.
 */
object Datasets {
  def ofRows(session: SparkSession, plan: LogicalPlan): DataFrame =
    org.apache.spark.sql.classic.Dataset.ofRows(Classic.session(session), plan)
}
