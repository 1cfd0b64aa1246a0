package hsbloom.operations

import org.apache.spark.sql.SparkSession

import hsbloom.{HsbloomException, VerifyResult}
import hsbloom.format.{Layout, LogEntry, State}
import hsbloom.index.IndexVerify

/**
 * verify: read everything an index holds and report each problem with the file it is in. Queries check what they
 * use as they load it (docs/design/integrity.md); verify is the full check, for people and scripts: every log
 * entry, and of the version the latest stable entry names (ACTIVE, or DELETED, whose data a restore would use)
 * every file-table row, filter, block row and global filter chunk against its checksum (`IndexVerify`).
 */
object VerifyIndex {
  def apply(spark: SparkSession, name: String): VerifyResult = {
    val ctx = IndexContext.open(spark, name)
    val ids = ctx.log.ids()
    if (ids.isEmpty && ctx.versionDirectories().isEmpty) throw HsbloomException.indexNotFound(s"index '$name' does not exist")
    val gaps = ((0L until ids.lastOption.map(_ + 1).getOrElse(0L)).toSet -- ids).toSeq.sorted
    val logProblems = scala.collection.mutable.TreeMap[Long, VerifyResult.Problem]()
    gaps.foreach(g => logProblems(g) = VerifyResult.Problem(ctx.log.entryPath(g).toString, "log entry is missing (the ids have a gap)"))
    val entries = ids.flatMap { id =>
      try Some(id -> ctx.log.read(id)) catch {
        case e: HsbloomException if e.condition == HsbloomException.CorruptLog =>
          logProblems(id) = VerifyResult.Problem(ctx.log.entryPath(id).toString, e.text.split("\\. If no", 2)(0))
          None
      }
    }.toMap
    // Damage before a forced delete was dealt with by it: the index since then does not depend on those entries.
    val forced = entries.collect { case (id, e) if e.message.exists(_.startsWith(ForceDelete.Message)) => id }
      .foldLeft(-1L)(math.max)
    val stable = ids.reverseIterator.flatMap(entries.get).find(_.state.stable)
    val withData = stable.filter(s => (s.state == State.Active || s.state == State.Deleted) && s.parts.nonEmpty)
    val dataPaths = withData.map(_.parts.map(v => ctx.dataPath(v).toString)).getOrElse(Nil)
    val notChecked = scala.collection.mutable.ArrayBuffer[String]()
    val problems = logProblems.collect { case (id, p) if id > forced => p }.toSeq ++
      withData.map(verifyData(ctx, _, dataPaths, notChecked += _)).getOrElse(Nil)
    VerifyResult(name, stable.map(_.state.name), ids.size, dataPaths, problems, notChecked.toSeq.distinct)
  }

  private def verifyData(ctx: IndexContext, entry: LogEntry, dataPaths: Seq[String],
      notChecked: String => Unit): Seq[VerifyResult.Problem] = {
    if (!entry.dataLayout.contains(Layout.DataLayout)) {
      return Seq(VerifyResult.Problem(dataPaths.last, s"written in data layout ${entry.dataLayout.getOrElse("None")} " +
        s"by an older hsbloom (this one reads ${Layout.DataLayout}); queries do not use it: a full refresh rebuilds it"))
    }
    val missing = dataPaths.filterNot(p => ctx.exists(new org.apache.hadoop.fs.Path(p)))
    if (missing.nonEmpty) return missing.map(VerifyResult.Problem(_, "data directory is missing"))
    val config = entry.config.get
    IndexVerify.problems(ctx.spark, dataPaths, entry.droppedFileIds.toSet, entry.summary.map(_.numFiles).getOrElse(0L),
      config.storedKeys, if (config.globalFilter) config.indexedColumns else Nil, notChecked).map { case (file, problem) => VerifyResult.Problem(file, problem) }
  }
}
