package hsbloom.testing

import scala.util.control.NonFatal

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.functions.{col, lit}
import org.scalatest.Assertions

import hsbloom.explain.PruningExplain

/**
 * What the tests ask of queries: the rows predicates select with hsbloom on and off (`outcomes`, `sameAnswers`) and
 * how many files a query read, from its scans' own metrics (`filesRead`, `fileCounts`), as tests/pruning_support.py
 * and hsbloom/explain.py measure them in Python.
 */
trait Queries extends Assertions { self: SharedSession =>

  /**
   * Per predicate, the `id`s of `df` it selects, sorted, from one query (a union of one filtered scan each), or,
   * when a predicate fails, each predicate run alone: Left(the error's class) for the failing ones.
   */
  protected def outcomes(df: DataFrame, predicates: Seq[String], enabled: Boolean): Seq[Either[String, Seq[Long]]] = {
    useIndexes(enabled)
    val union = predicates.zipWithIndex.map { case (p, n) => df.where(p).select(lit(n).as("q"), col("id")) }
      .reduce(_.unionAll(_))
    try {
      val found = union.collect().groupBy(_.getInt(0)).map { case (q, rows) => q -> ids(rows.toSeq, 1) }
      predicates.indices.map(n => Right(found.getOrElse(n, Nil)))
    } catch {
      case NonFatal(_) => predicates.map { p =>
        try Right(ids(df.where(p).select("id").collect().toSeq, 0)) catch { case NonFatal(e) => Left(e.getClass.getName) }
      }
    }
  }

  private def ids(rows: Seq[Row], at: Int): Seq[Long] =
    rows.map(r => if (r.isNullAt(at)) Long.MinValue else r.getAs[Number](at).longValue).sorted

  /** Each predicate selects the same ids of `df` with hsbloom on as off (and the check selects some rows). */
  protected def sameAnswers(df: => DataFrame, predicates: Seq[String]): Seq[Either[String, Seq[Long]]] = {
    val off = outcomes(df, predicates, enabled = false)
    val on = outcomes(df, predicates, enabled = true)
    useIndexes(false)
    predicates.zip(off.zip(on)).foreach { case (p, (a, b)) => assert(a == b, s"$p: hsbloom off selects $a, on $b") }
    assert(off.exists(_.exists(_.nonEmpty)), s"no predicate of $predicates selects a row: the check proves nothing")
    off
  }

  /** Runs `df` (a fresh plan, so its metrics are this run's); its executed plan. */
  protected def executed(df: DataFrame): SparkPlan = {
    val fresh = df.select("*")
    fresh.collect()
    fresh.queryExecution.executedPlan
  }

  /** Runs `df`: how many files its scans read. */
  protected def filesRead(df: DataFrame): Long = PruningExplain.filesRead(executed(df))

  /** Runs `df`: (files read, files before hsbloom pruned, files hsbloom pruned); None where no scan pruned. */
  protected def fileCounts(df: DataFrame): (Long, Option[Long], Option[Long]) = {
    val plan = executed(df)
    (PruningExplain.filesRead(plan), PruningExplain.filesBeforePruning(plan), PruningExplain.filesPruned(plan))
  }

  /** Rows of `df` as sorted tuples of strings (nulls first), for comparing two tables' contents. */
  protected def sortedRows(df: DataFrame): Seq[String] = df.collect().map(_.toSeq.map(String.valueOf).mkString("|")).sorted.toSeq

  /** hsbloom's explain text of `df` (`hs.explain`). */
  protected def explainText(df: DataFrame): String = new _root_.hsbloom.Hyperspace(spark).explainString(df)

  /** `body`'s result with hsbloom on, then off again. */
  protected def withHsbloom[T](body: => T): T = { useIndexes(true); try body finally useIndexes(false) }

  /** Fails unless `text` contains `needle`, showing the text. */
  protected def assertContains(text: String, needle: String): Unit =
    assert(text.contains(needle), s"'$needle' not in:\n$text")
}
