package hsbloom.sql

import org.apache.spark.sql.DataFrame

import hsbloom.IndexInfo
import hsbloom.catalog.Sources

/**
 * What `SHOW BLOOMFILTER INDEXES ON table` compares an index's source with: the table's format, its root
 * paths (a Delta table's root; a file source's listed roots) and its catalog name. An index covers the table
 * when it has the same format and either the same root paths or, for a catalog table, the same table name;
 * the version a Delta table is read at does not count (an index of version 3 covers the table at version 5:
 * it is stale, which `DESCRIBE BLOOMFILTER INDEX` tells). The table is described by `Sources.describe`, the
 * description an index's source was recorded from, so the two compare string for string.
 */
private[sql] final case class SourceKey(format: String, rootPaths: Set[String], table: Option[String]) {
  def covers(source: IndexInfo.SourceInfo): Boolean =
    format == source.format && (rootPaths == source.rootPaths.toSet || table.exists(source.table.contains))
}

private[sql] object SourceKey {
  /** The key of what `df` reads; `HsbloomException.UnsupportedSource` if it is no source an index can have. */
  def of(df: DataFrame): SourceKey = {
    val source = Sources.describe(df, Nil, withFiles = false).source
    SourceKey(source.format, source.rootPaths.toSet, source.table)
  }
}
