package hsbloom.shim

import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.connector.read.streaming.SparkDataStream
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.collection.BitSet

/** `PrunedScan` on Spark 4.0 to 4.2: the file scan's arguments, as Spark 4.0 to 4.2 declares them. */
class PrunedFileSourceScanExec(
    relation: HadoopFsRelation,
    stream: Option[SparkDataStream],
    output: Seq[Attribute],
    requiredSchema: StructType,
    partitionFilters: Seq[Expression],
    optionalBucketSet: Option[BitSet],
    optionalNumCoalescedBuckets: Option[Int],
    dataFilters: Seq[Expression],
    tableIdentifier: Option[TableIdentifier],
    disableBucketedScan: Boolean)
  extends FileSourceScanExec(relation, stream, output, requiredSchema, partitionFilters, optionalBucketSet,
    optionalNumCoalescedBuckets, dataFilters, tableIdentifier, disableBucketedScan) with PrunedScan

object PrunedFileSourceScanExec {
  /** `scan` as this node, reading `location` (a wrapper equal to the scan's own). */
  def apply(scan: FileSourceScanExec, location: PrunedListing): PrunedFileSourceScanExec = {
    val relation = scan.relation.copy(location = location)(scan.relation.sparkSession)
    new PrunedFileSourceScanExec(relation, scan.getStream, scan.output, scan.requiredSchema, scan.partitionFilters,
      scan.optionalBucketSet, scan.optionalNumCoalescedBuckets, scan.dataFilters, scan.tableIdentifier,
      scan.disableBucketedScan)
  }
}
