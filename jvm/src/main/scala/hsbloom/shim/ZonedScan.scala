package hsbloom.shim

import org.apache.spark.{Partition, TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.{FilePartition, FileScanRDD, FileStatusWithMetadata, HadoopFsRelation,
  PartitionedFile}

/**
 * A file scan that reads, of each file whose listing carries a
 * `ZonedScan.Selection` (`carry`), only the selected row groups (docs/design/zones.md).
 *
 * Spark's Parquet reader reads, for a split `[start, start + length)`, the
 * row groups whose midpoint lies in it. Spark's splits of a file tile it, so
 * together they read each row group once. For a file with a selection, this
 * drops all of the file's splits and adds one split per run of adjacent
 * selected row groups, each the run's own byte range: the build proved for
 * each row group that its range selects it alone, and a range's selection is
 * decided point by point (by midpoints), so a run's range reads exactly its
 * row groups, and the splits together read exactly the selected ones, once.
 * A file keeps Spark's own splits when anything is off: its format says it
 * cannot be split, its size or modification time differ from the selection's,
 * or its splits do not tile it.
 *
 * Each new split goes to the task that held the file's split containing the
 * split's first byte; every task (partition) stays, so bucketed scans keep
 * their partitioning.
 */
object ZonedScan {
  /**
   * The row groups of one file a scan reads, each as its byte range `(start, length)`, for the file at
   * `size` bytes and modified at `mtime` (a file that differs is read whole). The zone pruning makes it
   * (`hsbloom.pruning.ZoneSelection`); the shim declares only what it reads, to depend on no other package.
   */
  trait Selection {
    def size: Long
    def mtime: Long
    def ranges: IndexedSeq[(Long, Long)]
  }

  /** The key under which a listed file carries its selection (`FileStatusWithMetadata.metadata`). */
  private val MetadataKey = "hsbloom_zones"

  /**
   * `file` carrying `selection` to the scan: Spark hands a listed file's metadata to each of its splits
   * (`PartitionedFile.otherConstantMetadataColumnValues`), where `restrict` finds it.
   */
  def carry(file: FileStatusWithMetadata, selection: Selection): FileStatusWithMetadata =
    file.copy(metadata = file.metadata + (MetadataKey -> selection))

  /** The selection a split's file carries, if any. */
  private def carried(metadata: Map[String, Any]): Option[Selection] = metadata.get(MetadataKey).collect {
    case s: Selection => s
  }

  /** `rdd` (a file scan's input) restricted to the selected row groups; `rdd` itself when nothing is restricted. */
  def restrict(rdd: RDD[InternalRow], relation: HadoopFsRelation): (RDD[InternalRow], Int) = rdd match {
    case scan: FileScanRDD =>
      val partitions = scan.filePartitions
      val byFile = partitions.flatMap(_.files.toSeq).groupBy(_.filePath)
      val replaced: Map[PartitionedFile, Seq[PartitionedFile]] = byFile.flatMap { case (_, splits) =>
        carried(splits.head.otherConstantMetadataColumnValues)
          .filter(sel => restrictable(splits, sel, relation))
          .map(sel => assign(splits, sel))
          .getOrElse(Map.empty)
      }
      if (replaced.isEmpty) (rdd, 0)
      else {
        val restricted = partitions.map { p =>
          FilePartition(p.index, p.files.flatMap(f => replaced.getOrElse(f, Seq(f))))
        }
        (new ZonedScanRDD(scan, restricted.toArray), byFile.count(_._2.exists(replaced.contains)))
      }
    case other => (other, 0)
  }

  /** Whether the splits of one file may be replaced by the selection's ranges. */
  private def restrictable(splits: Seq[PartitionedFile], sel: Selection, relation: HadoopFsRelation): Boolean = {
    val f = splits.head
    val sorted = splits.sortBy(_.start)
    val tiles = sorted.head.start == 0 && sorted.last.start + sorted.last.length == f.fileSize &&
      sorted.zip(sorted.tail).forall { case (a, b) => a.start + a.length == b.start }
    splits.forall(s => s.fileSize == sel.size && s.modificationTime == sel.mtime) && tiles &&
      relation.fileFormat.isSplitable(relation.sparkSession, relation.options, f.toPath)
  }

  /** Each of the file's splits, to the splits of the selected runs that start inside it (often none). */
  private def assign(splits: Seq[PartitionedFile], sel: Selection): Map[PartitionedFile, Seq[PartitionedFile]] = {
    val runs = sel.ranges.sortBy(_._1).foldLeft(List.empty[(Long, Long)]) {
      case ((start, length) :: rest, (s, l)) if start + length == s => (start, length + l) :: rest
      case (acc, range) => range :: acc
    }.reverse
    splits.map { split =>
      split -> runs.filter { case (s, _) => s >= split.start && s < split.start + split.length }
        .map { case (s, l) => split.copy(start = s, length = l) }
    }.toMap
  }
}

/**
 * The scan's own RDD with other splits: each task runs the scan's reader over
 * its split list, exactly as the scan's tasks do (the reader reads the split
 * it is handed, not the scan's).
 */
final class ZonedScanRDD(scan: FileScanRDD, @transient private val restricted: Array[FilePartition])
  extends RDD[InternalRow](scan.sparkContext, Nil) {
  override protected def getPartitions: Array[Partition] = restricted.toArray[Partition]
  override def compute(split: Partition, context: TaskContext): Iterator[InternalRow] = scan.compute(split, context)
  override protected def getPreferredLocations(split: Partition): Seq[String] = scan.preferredLocations(split)
}
