package hsbloom

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

/** What `verifyIndex` found: `healthy` when `problems` is empty. */
final case class VerifyResult(
    name: String,
    /** The state of the latest readable stable log entry (None: none is readable). */
    state: Option[String],
    /** Entries in the log. */
    logEntries: Long,
    /** The data directories that were read whole. */
    dataPaths: Seq[String],
    problems: Seq[VerifyResult.Problem],
    /** What was not read, and why (the sealed zone table in a session without keys); never a problem. */
    notChecked: Seq[String] = Nil) {
  def healthy: Boolean = problems.isEmpty

  override def toString: String = {
    val head = s"index '$name' (${state.getOrElse("None")})"
    val unread = notChecked.map(n => s"; not checked: $n").mkString
    if (healthy) s"$head: healthy ($logEntries log entries, data ${dataPaths.mkString("(", ", ", ")")})$unread"
    else (Seq(s"$head: ${problems.size} problem(s)$unread") ++ problems.map(p => s"  ${p.file}: ${p.problem}") :+
      ("  Recovery (docs/troubleshooting.md): refresh the index fully to rebuild damaged data from the source; if " +
        "the latest log entry is damaged: drop it with FORCE, vacuum it, then create it again")).mkString("\n")
  }
}

object VerifyResult {
  /** One problem: the file (or directory) it is in, and what is wrong. */
  final case class Problem(file: String, problem: String)

  /** The one row of `VERIFY BLOOMFILTER INDEX`. */
  val schema: StructType = new StructType()
    .add("name", StringType, nullable = false)
    .add("state", StringType)
    .add("healthy", BooleanType, nullable = false)
    .add("log_entries", LongType, nullable = false)
    .add("data_paths", ArrayType(StringType, containsNull = false), nullable = false)
    .add("problems", ArrayType(new StructType().add("file", StringType).add("problem", StringType),
      containsNull = false), nullable = false)
    .add("not_checked", ArrayType(StringType, containsNull = false), nullable = false)

  def toRow(r: VerifyResult): Row = Row(r.name, r.state.orNull, r.healthy, r.logEntries, r.dataPaths,
    r.problems.map(p => Row(p.file, p.problem)), r.notChecked)
}
