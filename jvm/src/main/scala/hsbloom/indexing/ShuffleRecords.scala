package hsbloom.indexing

import org.apache.spark.Partitioner

import hsbloom.format.SourceFile
import hsbloom.sbbf.Sbbf

// The records of the build's one shuffle: file keys go to the file partitions,
// bucket and sketch keys to the bucket partitions (BuildPartitioner).

sealed trait BuildKey extends Serializable
/** One column of one source file. */
final case class FileColumnKey(fileId: Long, column: Int) extends BuildKey
final case class BucketKey(column: Int, bucket: Int) extends BuildKey
/** A map task's distinct counters, one copy for each bucket partition. */
final case class SketchKey(partition: Int) extends BuildKey
/** One column of one row group of one source file (a zone). */
final case class ZoneKey(fileId: Long, rowGroup: Int, column: Int) extends BuildKey

sealed trait Payload extends Serializable
/** A whole file's column: final. */
final case class FileResult(file: SourceFile, rows: Long, nulls: Long, ndv: Long, filter: Array[Byte]) extends Payload
/** Part of a file read by several tasks: raw hashes, or a filter at a fixed large size. */
final case class FilePart(file: SourceFile, rows: Long, nulls: Long, hashes: Array[Long], filter: Option[Sbbf])
  extends Payload
/** A zone's column: final (a row group is always read whole by one task). */
final case class ZoneResult(file: SourceFile, rowGroup: Int, rowGroups: Int, start: Long, length: Long, rows: Long,
    nulls: Long, ndv: Long, filter: Array[Byte]) extends Payload
/** Hashes of one column that fall in one bucket. */
final case class BucketHashes(hashes: Array[Long]) extends Payload
/** A map task's per-column HyperLogLogs. */
final case class Sketches(sketches: Array[HyperLogLog]) extends Payload

/**
 * File keys over the first `filePartitions` partitions, buckets and sketches over the `globalPartitions` after,
 * zone keys over the `zonePartitions` after those.
 */
final class BuildPartitioner(filePartitions: Int, globalPartitions: Int, zonePartitions: Int = 0) extends Partitioner {
  import BuildPartitioner.bucketPartition
  override def numPartitions: Int = filePartitions + globalPartitions + zonePartitions
  override def getPartition(key: Any): Int = key match {
    case FileColumnKey(id, c) => Math.floorMod(java.lang.Long.hashCode(id) * 31 + c, filePartitions)
    case BucketKey(c, b) => filePartitions + bucketPartition(c, b, globalPartitions)
    case SketchKey(p) => filePartitions + p
    case ZoneKey(id, _, _) => filePartitions + globalPartitions + Math.floorMod(java.lang.Long.hashCode(id), zonePartitions)
  }
}

object BuildPartitioner {
  /** Every hash goes to one of these buckets by its top bits, which fix its block range in a filter of any size. */
  val NumBuckets: Int = 64
  private[indexing] val BucketShift = 58 // 64 - log2(NumBuckets)
  /** Hashes a bucket gathers on the map side before they are sent (also a reducer's batch granularity). */
  private[indexing] val BucketChunk = 8192

  /** The bucket partition (counted from the first one) of bucket `bucket` of column `column`. */
  def bucketPartition(column: Int, bucket: Int, globalPartitions: Int): Int =
    Math.floorMod(column * NumBuckets + bucket, globalPartitions)
}
