package hsbloom.dml

import org.apache.spark.sql.catalyst.plans.logical.{Filter, LocalRelation, LogicalPlan, Project}

import hsbloom.join.JoinPrunedFileIndex
import hsbloom.shim.{Delta, FileRelation, FileSources}

/**
 * Which MERGE sources hsbloom reads a second time for their keys. The keys
 * prune the target, so the second read must give the rows the join reads:
 * a missing key would leave its target rows unmatched, and the MERGE would
 * insert them again. So only rows fixed before the MERGE runs qualify, and
 * only a source that is Projects and Filters over one of them (never a join
 * or an aggregate, which a second read would compute again).
 */
object MergeSource {

  /**
   * What reading the source again costs in bytes (0 for rows already in
   * memory or on executors' disks), or why it is not read.
   */
  def rereadBytes(plan: LogicalPlan): Either[String, BigInt] = plan match {
    case Project(_, child) => rereadBytes(child)
    case Filter(_, child) => rereadBytes(child)
    case _: LocalRelation => Right(BigInt(0))
    case p if Delta.isMaterializedSource(p) => Right(BigInt(0))
    case FileRelation(_, fs, _, false) if Delta.isDelta(fs) =>
      Left("the source reads a Delta table, which Delta does not materialize for a MERGE: a second read " +
        "could see another version of it (spark.databricks.delta.merge.materializeSource=all materializes it)")
    case FileRelation(_, fs, _, false) if FileSources.isFixedListing(JoinPrunedFileIndex.unwrap(fs.location)) =>
      Right(BigInt(fs.sizeInBytes))
    case FileRelation(_, _, _, false) => Left("the source's file listing is redone at execution (two reads may " +
      "see different files)")
    case other => Left(s"the source is a ${other.nodeName}, not rows that two reads see alike (local rows, a " +
      "materialized source or a fixed file listing)")
  }
}
