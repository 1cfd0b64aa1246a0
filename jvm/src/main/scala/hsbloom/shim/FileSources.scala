package hsbloom.shim

import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation}
import org.apache.spark.sql.sources.DataSourceRegister

/** What hsbloom asks of a file relation that Spark answers only through class names. */
object FileSources {
  /** The format's short name, as the index log records it ("delta" for Delta tables). */
  def formatName(relation: HadoopFsRelation): String = relation.fileFormat match {
    case f if Delta.isDeltaClass(f) => "delta"
    case r: DataSourceRegister => r.shortName()
    case f => f.getClass.getSimpleName
  }

  /**
   * Whether `listing` is Spark's `InMemoryFileIndex` itself (a listing fixed
   * when the relation was made), not a subclass or another index. Matched by
   * class name so that a subclass with its own listing does not count.
   */
  def isFixedListing(listing: FileIndex): Boolean =
    listing.getClass.getName == "org.apache.spark.sql.execution.datasources.InMemoryFileIndex"
}
