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
   * File pruning pays only when the build keys keep at most this share of the
   * probe side's files: the most keys it waits for is set from it.
   */
  val MaxKeptFileShare = 0.5

  /**
   * Collecting the build keys reads the build side's relation once more;
   * allowed only when that relation is at most this share of the probe
   * side's bytes (pruning saves at least half of them when it prunes).
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
   * The share of a probe side's `files` files that one key's file filters
   * keep, when its `rows` non-null values over `distinct` keys are spread over
   * the files at random (a key in r rows is in 1 - (1 - 1/files)^r of them),
   * plus the false positives (`fpp`). Clustered data keeps fewer; min/max
   * statistics already prune those lookups, so the random spread is the case
   * that matters when nothing better is known (`keySpread`).
   */
  def keptFileShare(files: Int, rows: Long, distinct: Long, fpp: Double): Double = {
    val rowsPerKey = rows.toDouble / distinct
    math.min(1.0, 1 - math.pow(1 - 1.0 / files, rowsPerKey) + fpp)
  }

  /**
   * How many of `files` files hold an average key, as `(share of the files with the false positives, text)`.
   * Measured where the index knows it (`filesPerKey`: the files' distinct keys summed, over the column's distinct
   * keys, `ColumnSummary.filesPerKey`): clustered keys, as time-ordered ids are, sit in about one file each, keys
   * spread at random in most; else estimated as if spread at random (`keptFileShare`).
   */
  def keySpread(files: Int, rows: Long, distinct: Long, fpp: Double, filesPerKey: Option[Double]): (Double, String) =
    filesPerKey match {
      case Some(measured) =>
        val inFiles = math.max(1.0, math.min(files.toDouble, measured))
        (math.min(1.0, inFiles / files + fpp), f"a key is in $inFiles%.1f of $files files (measured by the index)")
      case None =>
        val share = keptFileShare(files, rows, distinct, fpp)
        (share, f"a key is in about ${share * files}%.1f of $files files (${rows.toDouble / distinct}%.1f rows a key, " +
          "if spread at random)")
    }

  /** The most keys that keep at most `MaxKeptFileShare` of the files, for a one-key share `perKey`. */
  def maxUsefulKeys(perKey: Double): Int =
    if (perKey >= MaxKeptFileShare) 0
    else if (perKey <= 0) Int.MaxValue
    else math.min(Int.MaxValue.toDouble, math.floor(math.log(1 - MaxKeptFileShare) / math.log(1 - perKey))).toInt

  /**
   * File pruning of a probe side (`files` files, `probeBytes`; its key column
   * holds `rows` non-null values of `distinct` keys) from build keys that cost
   * `buildBytes` to read again (0: they are local rows). `buildDistinct`: the
   * build side's distinct keys when they are known before it runs (it filters
   * no rows and its key is an indexed column). Applies with the most keys
   * worth waiting for (at most `maxKeys`).
   */
  def filePruning(files: Int, rows: Long, distinct: Long, fpp: Double, probeBytes: BigInt, buildBytes: BigInt,
      maxKeys: Int, buildDistinct: Option[Long] = None, filesPerKey: Option[Double] = None): (Decision, Int) = {
    val (useful, spread) = keysWorthIt(files, rows, distinct, fpp, maxKeys, filesPerKey) match {
      case Left(skip) => return (skip, 0)
      case Right(found) => found
    }
    buildDistinct.filter(_ > useful).foreach { n =>
      return (Skip(s"$spread; at most $useful build key(s) are worth it, and the build side filters no rows: " +
        s"its key has $n distinct values (its index)"), 0)
    }
    if (buildBytes.toDouble > probeBytes.toDouble * MaxBuildShare) {
      return (Skip(s"reading the build side again ($buildBytes bytes) costs over " +
        s"${(MaxBuildShare * 100).toInt}% of the probe side ($probeBytes bytes)"), 0)
    }
    (Apply(s"$spread; at most $useful build key(s) are worth it; the build side's $buildBytes bytes are read " +
      "again for its keys"), useful)
  }

  /**
   * Whether build keys counted before the build side runs can prune any of the probe side's `files` files:
   * `buildDistinct` keys (a build side that filters no rows has all its indexed key's distinct values), each in a
   * share `perKey` of the files (`keySpread`), keep all but about `files * (1 - perKey)^buildDistinct` of them. Under
   * one file, no file is pruned, so not even a broadcast's keys are taken: collecting them and probing each key in
   * each file is spent for nothing (TPC-H Q5: 149,649 customer keys against 24 orders files, a key in 10.9 of them).
   */
  def knownKeys(files: Int, rows: Long, distinct: Long, fpp: Double, filesPerKey: Option[Double],
      buildDistinct: Long): Decision = {
    val (perKey, spread) = keySpread(files, rows, distinct, fpp, filesPerKey)
    val pruned = files * math.pow(1 - perKey, buildDistinct.toDouble)
    val detail = s"$spread; the build side filters no rows: its key has $buildDistinct distinct values (its index)"
    if (pruned < 1) Skip(s"$detail, which keep every file") else Apply(f"$detail: about $pruned%.1f files pruned")
  }

  /**
   * The most build keys (at most `maxKeys`) whose files the probe side's
   * index may prune, with the spread they were found from; or why no key set
   * is worth it (an average key already in over `MaxKeptFileShare` of the
   * files, or no counts). This alone decides whether a broadcast's keys are
   * taken: they cost no second read of the build side, only their collection.
   */
  def keysWorthIt(files: Int, rows: Long, distinct: Long, fpp: Double, maxKeys: Int, filesPerKey: Option[Double])
      : Either[Skip, (Int, String)] = {
    if (files < 2) return Left(Skip(s"the probe side has $files file(s)"))
    if (rows <= 0 || distinct <= 0) return Left(Skip("the probe column's index has no row or distinct counts"))
    val (perKey, spread) = keySpread(files, rows, distinct, fpp, filesPerKey)
    val useful = math.min(maxUsefulKeys(perKey), maxKeys)
    if (useful < 1) Left(Skip(s"$spread: no key set keeps under ${(MaxKeptFileShare * 100).toInt}% of them"))
    else Right((useful, spread))
  }
}
