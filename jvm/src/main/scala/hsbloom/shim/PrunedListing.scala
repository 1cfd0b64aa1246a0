package hsbloom.shim

import org.apache.spark.sql.execution.datasources.FileIndex

/**
 * A file index whose listings prune files, as the scan node sees it: what its
 * latest listing pruned, which `PrunedFileSourceScanExec` shows as metrics.
 * Declared here so that the shim depends on no other hsbloom package: the
 * pruning wrappers (`hsbloom.pruning.PruningFileIndex`) implement it.
 */
trait PrunedListing extends FileIndex {
  /** What the latest listing of this instance pruned (None before the first). */
  def lastPruned: Option[PrunedListing.Pruned]

  /** Whether a listing at run time may prune with keys only known then (a join's broadcast, `BroadcastKeys`). */
  def prunesAtRunTime: Boolean = false

  /**
   * Whether such a run-time listing may also prune row groups (an index of the listing has zones): the scan
   * then has the row-group metrics from the start too, as it has the file metrics.
   */
  def prunesRowGroupsAtRunTime: Boolean = false

  /** The values of the run-time subquery `name` (None: not available), handed over before the scan lists. */
  def receiveKeys(name: String, values: Option[Array[Any]]): Unit = ()
}

object PrunedListing {
  /** Files a listing held before pruning, how many it pruned, and the row groups of kept files with zones. */
  trait Pruned {
    def filesBefore: Int
    def filesPruned: Int
    /** None when no index of the listing has zones. */
    def rowGroups: Option[RowGroupsPruned]
  }

  /** Row groups of the kept files that have zones: how many, and how many were pruned. */
  trait RowGroupsPruned {
    def before: Int
    def pruned: Int
  }
}
