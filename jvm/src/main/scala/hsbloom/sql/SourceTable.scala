package hsbloom.sql

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.analysis.{RelationTimeTravel, UnresolvedRelation}
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.StringType

/**
 * The source of CREATE BLOOMFILTER INDEX and SHOW BLOOMFILTER INDEXES ON: a table identifier (a catalog table,
 * a temporary view, parquet.`/path`, delta.`/path`, ...), optionally at a Delta version or timestamp. The
 * parser holds it as the unresolved plan Spark's own parser makes of it (an `UnresolvedRelation`, under a
 * `RelationTimeTravel` when time-travelling), so a statement says what it reads the way a query would; it is
 * resolved only when the statement runs, in the session that runs it, through public API.
 */
private[sql] object SourceTable {
  /** A point of a Delta table's history. */
  sealed trait Travel
  final case class AtVersion(version: String) extends Travel
  final case class AtTimestamp(timestamp: String) extends Travel

  def plan(parts: Seq[String], travel: Option[Travel]): LogicalPlan = {
    val relation = UnresolvedRelation(parts)
    travel match {
      case None => relation
      case Some(AtVersion(v)) => RelationTimeTravel(relation, None, Some(v))
      case Some(AtTimestamp(t)) => RelationTimeTravel(relation, Some(Literal(t)), None)
    }
  }

  /** What the source reads, as a DataFrame of `session`. */
  def dataFrame(session: SparkSession, source: LogicalPlan): DataFrame = source match {
    case UnresolvedRelation(parts, _, _) => session.table(quoted(parts))
    case RelationTimeTravel(UnresolvedRelation(parts, _, _), timestamp, version) =>
      val at = (version, timestamp) match {
        case (Some(v), _) => s"VERSION AS OF ${stringLiteral(v)}"
        case (None, Some(Literal(t, StringType))) => s"TIMESTAMP AS OF ${stringLiteral(t.toString)}"
        case _ => throw new IllegalArgumentException(s"not a time travel of the SQL statements: $source")
      }
      session.sql(s"SELECT * FROM ${quoted(parts)} $at")
    case other => throw new IllegalArgumentException(s"not a source of the SQL statements: $other")
  }

  /** `parts` as one identifier, each part backquoted (a backquote doubled). */
  def quoted(parts: Seq[String]): String = parts.map(p => "`" + p.replace("`", "``") + "`").mkString(".")

  private def stringLiteral(s: String): String = "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"
}
