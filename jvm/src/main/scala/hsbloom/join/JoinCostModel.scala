package hsbloom.join

import hsbloom.index.GlobalFilter

/**
 * Whether a join feature pays, decided from numbers: the indexes' own counts
 * (rows, distinct values, files, filter bytes in the log entry's column
 * summaries) and Spark's size estimates. Pure arithmetic, so each decision
 * and its reason can be shown by `hs.explain` and tested on its own
 * (docs/joins.md, "Cost model").
 */
object JoinCostModel {

  /** What the model decided, and why, with the numbers it decided on. */
  sealed trait Decision { def reason: String; def applies: Boolean }
  final case class Apply(reason: String) extends Decision { def applies = true }
  final case class Skip(reason: String) extends Decision { def applies = false }

  /**
   * A global filter must be able to drop at least this share of the probed
   * side's distinct keys: otherwise its load and a probe per row are spent
   * to keep nearly every row.
   */
  val MinDroppedKeyShare = 0.5

  /**
   * Collecting the build keys reads the build side's relation once more;
   * allowed only when that relation is at most this share of the probe
   * side's bytes (Spark's estimates): the read is paid back once the index
   * drops this share of the probe side's files, and a query where it drops
   * none pays at most this share more.
   */
  val MaxBuildShare = 0.25

  /**
   * A global filter of the indexed side (`indexedDistinct` keys, `filterBytes`)
   * probed by the other side's key. `probedDistinct`: that key's distinct
   * count when it is an indexed column too (None: unknown; then each task's
   * run-time sample decides, see `GlobalFilterContains`); with
   * `probedThroughJoin` the key is read through a join, which keeps at most
   * that many of them, so the count bounds the share that passes from below
   * only: enough to skip, not to inject without the sample. `probedBytes`:
   * Spark's estimate of the probed side's size.
   */
  def globalFilter(indexedDistinct: Long, probedDistinct: Option[Long], fpp: Double, filterBytes: Long,
      probedBytes: BigInt, probedThroughJoin: Boolean = false): Decision = {
    if (BigInt(filterBytes) > probedBytes) {
      return Skip(s"its ${filterBytes} bytes exceed the ${probedBytes} bytes of the side it would filter")
    }
    val sample = s"each task stops probing when its first ${GlobalFilter.SampleRows} rows show it does not pay"
    probedDistinct.filter(_ > 0) match {
      case Some(probed) if indexedDistinct >= 0 =>
        val kept = math.min(1.0, indexedDistinct.toDouble / probed) + fpp
        val against = if (probedThroughJoin) s"at most $probed probed (read through a join)" else s"$probed probed"
        val share = if (!probedThroughJoin) f"up to ${math.min(kept, 1.0) * 100}%.0f%% pass"
          else if (kept >= 1) "all may pass" else f"at least ${kept * 100}%.0f%% pass"
        val detail = s"$indexedDistinct distinct keys against $against: $share"
        if (kept > 1 - MinDroppedKeyShare) Skip(detail)
        else if (probedThroughJoin) Apply(s"$detail; $sample")
        else Apply(detail)
      case _ => Apply(s"the probed key has no index statistics; $sample")
    }
  }

  /**
   * File pruning of a probe side (`files` files, `probeBytes`; its key column
   * has `probeDistinct` distinct values, negative when unknown) from build keys
   * that cost `buildBytes` to read again (0: they are local rows), decided
   * before they are read: the index answers exactly which files the keys
   * touch once they are read (`JoinPrunedFileIndex`), so what is decided here
   * is only whether reading them may pay. `maxKeys`: the most distinct keys
   * read (more: the probe side is read as planned). `buildDistinct`: the build
   * side's distinct keys when they are known before it runs (it filters no
   * rows and its key is an indexed column).
   */
  def filePruning(files: Int, probeDistinct: Long, probeBytes: BigInt, buildBytes: BigInt, maxKeys: Int,
      buildDistinct: Option[Long] = None): Decision = {
    if (files < 2) return Skip(s"the probe side has $files file(s)")
    buildDistinct.foreach { n =>
      if (n > maxKeys) {
        return Skip(s"the build side filters no rows: its key has $n distinct values (its index), over the " +
          s"$maxKeys read at most")
      }
      if (probeDistinct > 0 && n >= probeDistinct) {
        return Skip(s"the build side filters no rows: its key has $n distinct values (its index), at least the " +
          s"probe column's $probeDistinct, so every file may hold one")
      }
    }
    val share = f"${(MaxBuildShare * 100).toInt}%d%%"
    if (buildBytes.toDouble > probeBytes.toDouble * MaxBuildShare) {
      return Skip(s"reading the build side again ($buildBytes bytes) costs over $share of the probe side " +
        s"($probeBytes bytes)")
    }
    Apply(s"reading the build side again ($buildBytes bytes) costs at most $share of the probe side " +
      s"($probeBytes bytes): up to $maxKeys distinct keys are read at run time and the index says which of the " +
      s"$files files may hold them")
  }
}
