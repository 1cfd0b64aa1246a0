package hsbloom.format

/**
 * What the build counted for one indexed column (`summary.columns.<c>` of an entry). `fileNdvSum`: each file's
 * distinct values, summed over the files (None: an entry written before it was recorded). `ndvOfColumn`: whether
 * `ndv` counts each value once over the column (`ndv_scope`; None: an entry written before it was recorded, whose
 * `ndv` was the global filter's estimate when it had one, else the files' sum).
 */
final case class ColumnSummary(numRows: Long, numNulls: Long, ndv: Long, fileFilterBytes: Long, globalFilterBytes: Long,
    fileNdvSum: Option[Long] = None, ndvOfColumn: Option[Boolean] = None) {
  /** Whether `ndv` counts each value once (else it is the files' sum, an upper bound). */
  def ndvCountsValuesOnce: Boolean = ndvOfColumn.getOrElse(globalFilterBytes > 0)

  /** In how many files an average key is, measured: the files' distinct values over the column's. */
  def filesPerKey: Option[Double] =
    fileNdvSum.filter(_ > 0).filter(_ => ndvCountsValuesOnce && ndv > 0).map(_.toDouble / ndv)
}

/** How many files' filters a build adopted from their own Parquet Bloom filters, and why it hashed the others. */
final case class AdoptionSummary(adoptedFiles: Long, hashedFiles: Map[String, Long])

/**
 * What an index version holds, as its entry records it (`summary`): counts shown to users, sizes an
 * incremental refresh builds to, and the false-positive rates the filters were built for.
 */
final case class Summary(
    /** The source files the version holds. */
    numFiles: Long,
    numRows: Long,
    /** The bytes of the version's data directories on storage. */
    indexBytes: Long,
    /** The largest false-positive rate any file filter of the version was built for (None: older entries). */
    fileFpp: Option[Double],
    /** The global filter's and the zones' rate. */
    sharedFpp: Option[Double],
    /** In the order of the indexed columns. */
    columns: Seq[(String, ColumnSummary)],
    /** None when unknown (an incremental refresh that dropped files, or a build before adoption). */
    adoption: Option[AdoptionSummary],
    /** Files deleted since the global filters were built whole: their values are still in them. */
    globalFilterDeletedFiles: Long = 0) {
  def column(name: String): Option[ColumnSummary] = columns.collectFirst { case (`name`, c) => c }
}
