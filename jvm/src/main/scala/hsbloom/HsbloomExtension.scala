package hsbloom

import org.apache.spark.sql.SparkSessionExtensions

import hsbloom.dml.MergeTargetRule
import hsbloom.functions.SqlFunctions
import hsbloom.join.{BroadcastKeysRule, JoinFilterRule}
import hsbloom.pruning.{DeltaScanPruningRule, FilePruningRule, ScanMetricsRule}
import hsbloom.sql.HsbloomSqlParser

/**
 * Entry point named in `spark.sql.extensions`: registers hsbloom's optimizer
 * rules, SQL functions and SQL statements (the parser, docs/sql.md) in every session.
 *
 * It first checks that the running Spark is the one the jar was built for;
 * Spark reports an exception thrown here as a failure to create the session,
 * which is where a mismatch should surface.
 */
class HsbloomExtension extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    BuildInfo.checkSparkVersion(org.apache.spark.SPARK_VERSION)
    ExecutorJar.ensureShipped(org.apache.spark.SparkContext.getOrCreate())
    extensions.injectOptimizerRule(session => new FilePruningRule(session))
    extensions.injectPreCBORule(session => new JoinFilterRule(session))
    extensions.injectPreCBORule(session => new MergeTargetRule(session))
    extensions.injectColumnar(session => DeltaScanPruningRule.asColumnarRule(session))
    extensions.injectColumnar(session => BroadcastKeysRule.asColumnarRule(session)) // before the metrics rule
    extensions.injectColumnar(session => ScanMetricsRule.asColumnarRule(session)) // after the Delta rule
    SqlFunctions.all.foreach(extensions.injectFunction)
    extensions.injectParser((_, parser) => new HsbloomSqlParser(parser))
  }
}
