package hsbloom.shim

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.execution.datasources.FileIndex
import org.apache.spark.sql.types.StructType

/**
 * A FileIndex that is another one with a different `listFiles`: hsbloom's wrappers (the build's
 * `SelectedFileIndex`, the pruning's `PruningFileIndex`). It forwards every other member of Spark's `FileIndex`,
 * an internal trait whose members change between Spark versions: a version that adds one changes this file.
 */
trait DelegatingFileIndex extends FileIndex {
  def delegate: FileIndex

  override def rootPaths: Seq[Path] = delegate.rootPaths
  override def inputFiles: Array[String] = delegate.inputFiles
  override def refresh(): Unit = delegate.refresh()
  override def sizeInBytes: Long = delegate.sizeInBytes
  override def partitionSchema: StructType = delegate.partitionSchema
  override def metadataOpsTimeNs: Option[Long] = delegate.metadataOpsTimeNs
}
