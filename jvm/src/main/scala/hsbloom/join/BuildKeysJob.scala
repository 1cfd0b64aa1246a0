package hsbloom.join

import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Expression, IsNull, Literal, Or}
import org.apache.spark.sql.catalyst.plans.logical.Limit
import org.apache.spark.sql.execution.SQLExecution
import org.slf4j.LoggerFactory

import hsbloom.join.JoinPrunedFileIndex.{inSet, BuildKeys}

/**
 * A join's build-side keys read in a Spark job of their own, where no
 * broadcast of them can be reused (a shuffle join, `hs.explain`, a Delta
 * MERGE's source): the build side is computed again, so only where the cost
 * model allows it (docs/design/join-cost-model.md).
 */
object BuildKeysJob {
  private val log = LoggerFactory.getLogger(getClass)

  /** Build-side rows read per key waited for (room for duplicate keys). */
  val RowsPerKey = 4

  /**
   * `column IN (build keys)` (`OR column IS NULL` for `<=>` with a null key),
   * or why there is none. The keys are the first rows of the build side, at
   * most `RowsPerKey` x (`j.maxKeys` + 1): Spark's limit reads the build side's
   * partitions a few at a time and stops once it has that many, so a build
   * side with too many keys costs a part of one read, not a whole one.
   * `target` names what the keys prune, for the log.
   */
  def keysFilter(session: SparkSession, j: BuildKeys, target: String): Either[String, Expression] = {
    try {
      val started = System.nanoTime()
      val cap = math.min(RowsPerKey.toLong * (j.maxKeys + 1), Int.MaxValue - 1L).toInt
      val qe = session.sessionState.executePlan(Limit(Literal(cap), j.plan))
      val rows = SQLExecution.withNewExecutionId(qe, Some("hsbloom: build-side keys for file pruning")) {
        qe.executedPlan.executeCollect()
      }
      val ms = (System.nanoTime() - started) / 1e6
      val dt = j.attribute.dataType
      val values = rows.map(_.get(0, dt))
      val nonNull = values.filter(_ != null).toSet[Any]
      if (nonNull.size > j.maxKeys) {
        return Left(f"build side has more than ${j.maxKeys} keys ($ms%.0f ms); not pruned")
      }
      if (rows.length >= cap) {
        return Left(f"build side has over $cap rows ($ms%.0f ms); not pruned")
      }
      j.keyCount = Some(nonNull.size)
      val in = inSet(j.attribute, nonNull)
      Right(if (j.nullSafe && values.contains(null)) Or(in, IsNull(j.attribute)) else in)
    } catch {
      case NonFatal(e) =>
        log.warn(s"hsbloom: build-side keys for pruning $target failed ($e); not pruned")
        Left(s"build-side keys failed: $e")
    }
  }
}
