package hsbloom.explain

import org.apache.spark.sql.SparkSession

import hsbloom.join.JoinDecisions
import hsbloom.pruning.PruningReports

/**
 * What hsbloom did while a SQL statement ran, for `Hyperspace.runExplainedString`
 * and so for `EXPLAIN BLOOMFILTER ANALYZE` and Python's `hs.run_explained`
 * (hsbloom/hyperspace.py). A Delta DELETE, UPDATE or MERGE plans the scans of its
 * target only while it runs (over the files Delta's statistics leave), so it
 * cannot be explained without running it: this runs it and reports, from
 * this thread, each scan hsbloom pruned (files before and after) and what
 * the join rules decided, the MERGE target's pruning among them.
 */
object StatementExplain {

  /** Runs `statement` (its result is discarded) and returns the report. */
  def run(session: SparkSession, statement: String): String = {
    val ((_, listings), decisions) = JoinDecisions.collecting {
      PruningReports.collecting(session.sql(statement).collect())
    }
    val rule = "=" * 72
    Seq(
      rule, "Scans pruned while the statement ran (files before -> after):", rule,
      if (listings.isEmpty) "(none: no scan of this statement was pruned by an hsbloom index)"
      else listings.mkString("\n"),
      rule, "Joins considered (what each join feature decided, and why):", rule,
      if (decisions.isEmpty) "(none: no join of this statement has an indexed key)" else decisions.mkString("\n"),
      "").mkString("\n")
  }
}
