package hsbloom.shim

import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.collection.BitSet

/** `PrunedScan` on Spark 3.5: the file scan's arguments, as Spark 3.5 declares them (no stream). */
class PrunedFileSourceScanExec(
    relation: HadoopFsRelation,
    output: Seq[Attribute],
    requiredSchema: StructType,
    partitionFilters: Seq[Expression],
    optionalBucketSet: Option[BitSet],
    optionalNumCoalescedBuckets: Option[Int],
    dataFilters: Seq[Expression],
    tableIdentifier: Option[TableIdentifier],
    disableBucketedScan: Boolean)
  extends FileSourceScanExec(relation, output, requiredSchema, partitionFilters, optionalBucketSet,
    optionalNumCoalescedBuckets, dataFilters, tableIdentifier, disableBucketedScan) with PrunedScan

object PrunedFileSourceScanExec {
  /** `scan` as this node, reading `location` (a wrapper equal to the scan's own). */
  def apply(scan: FileSourceScanExec, location: PrunedListing): PrunedFileSourceScanExec = {
    val relation = scan.relation.copy(location = location)(scan.relation.sparkSession)
    new PrunedFileSourceScanExec(relation, scan.output, scan.requiredSchema, scan.partitionFilters,
      scan.optionalBucketSet, scan.optionalNumCoalescedBuckets, scan.dataFilters, scan.tableIdentifier,
      scan.disableBucketedScan)
  }
}
