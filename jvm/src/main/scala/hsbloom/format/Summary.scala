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

  /** `ColumnSummary.sharing` of this column's keys over `numFiles` files (for a substring filter, of its grams). */
  def sharing(numFiles: Long): Option[Double] = filesPerKey.flatMap(ColumnSummary.sharing(_, numFiles))

  /**
   * Of a substring filter (stored as `key`) whose grams nearly fill every file's filter (`FilledSharing`), what
   * `hs.explain` and create say of it; None for any other.
   */
  def filledAdvice(key: String, numFiles: Long): Option[String] = sharing(numFiles).filter(_ >= ColumnSummary
    .FilledSharing).map(s => f"$key: its files share ${s * 100}%.0f%% of their grams (measured at build), so it " +
      "rules a file out only for grams rare in the column")
}

object ColumnSummary {
  /**
   * How much `files` files share their keys, from 0 (each key in one file) to 1 (every key in every file): the
   * files an average key is in, `filesPerKey`, beyond the one, over the `files` - 1 it could be in beyond it. None
   * for fewer than two files. A substring filter whose grams the files share near 1 discriminates nothing
   * (docs/design/substring.md#choosing-n).
   */
  def sharing(filesPerKey: Double, files: Long): Option[Double] =
    if (files < 2) None else Some(math.max(0.0, math.min(1.0, (filesPerKey - 1) / (files - 1))))

  /**
   * The sharing from which a substring filter prunes only for the column's rarest grams, as explained and warned
   * of (docs/design/substring.md#when-it-pays). It is still probed: a rare needle's grams may be missing from most
   * files even so, and a probe costs a few bit tests per file.
   */
  val FilledSharing = 0.99
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
