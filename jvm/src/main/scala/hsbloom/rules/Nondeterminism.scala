package hsbloom.rules

import org.apache.spark.sql.catalyst.expressions.{Expression, ExprId, InputFileBlockLength, InputFileBlockStart, InputFileName}
import org.apache.spark.sql.catalyst.plans.QueryPlan
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Sample}
import org.apache.spark.sql.execution.{SampleExec, SparkPlan}

import hsbloom.shim.FileRelation

/**
 * Where dropping rows that cannot match would still change an answer: below
 * an operator whose result depends on which rows it is given, in which
 * partition and in what order, not only on their values. `rand(5)` is seeded
 * per partition and draws once per row it sees; `monotonically_increasing_id()`
 * numbers rows by partition and position; a sample draws per row. Files
 * skipped change partitions and positions, so the rows such an operator keeps,
 * or the values it computes, differ with hsbloom on. Spark itself never
 * pushes a filter below such an operator; hsbloom never prunes, filters or
 * injects below one, wherever it sits above the scan (docs/design/planning.md).
 *
 * The file-bound functions (`input_file_name()` and the block offsets) are
 * Spark-nondeterministic too, but give each row the same value whichever
 * other files are read: they do not stop pruning.
 */
object Nondeterminism {

  /** What makes `node` depend on more than its rows' values, as SQL ("rand(5)"); None when nothing does. */
  def of(node: QueryPlan[_]): Option[String] = node match {
    case s: Sample => Some(s"sample(${s.lowerBound}, ${s.upperBound}, seed ${s.seed})")
    case s: SampleExec => Some(s"sample(${s.lowerBound}, ${s.upperBound}, seed ${s.seed})")
    case _ => node.expressions.iterator.map(_.find(drawsPerRow)).collectFirst { case Some(e) => e.sql }
  }

  /** The innermost nondeterministic expression that is not file-bound. */
  private def drawsPerRow(e: Expression): Boolean =
    !e.deterministic && e.children.forall(_.deterministic) && !fileBound(e)

  private def fileBound(e: Expression): Boolean = e match {
    case _: InputFileName | _: InputFileBlockStart | _: InputFileBlockLength => true
    case _ => false
  }

  /** Each leaf of `plan` with a node of `of` above it (itself included), with the nearest such node's reason. */
  def leavesBelow[P <: QueryPlan[P]](plan: P): Seq[(P, String)] = {
    def walk(p: P, above: Option[String]): Seq[(P, String)] = {
      val here = of(p).orElse(above)
      if (p.children.isEmpty) here.map(p -> _).toSeq else p.children.flatMap(walk(_, here))
    }
    walk(plan, None)
  }

  /**
   * The columns of each file relation of `plan` that is below a nondeterministic
   * operator, with its reason. Keyed by column so that a relation a rule has
   * since copied (a wrapped file index keeps the columns) is still found.
   */
  def logicalScans(plan: LogicalPlan): Map[ExprId, String] =
    leavesBelow(plan).flatMap {
      case (FileRelation(_, _, output, _), why) => output.map(_.exprId -> why)
      case _ => Nil
    }.toMap

  /** Of the columns `logicalScans` found, the reason for a relation with `output`. */
  def reasonFor(scans: Map[ExprId, String], output: Seq[org.apache.spark.sql.catalyst.expressions.Attribute])
      : Option[String] = output.iterator.map(a => scans.get(a.exprId)).collectFirst { case Some(why) => why }

  /** The physical scans (by identity) below a nondeterministic operator of `plan`, with the reason. */
  def physicalScans(plan: SparkPlan): Seq[(SparkPlan, String)] = leavesBelow(plan)

  /** The line explain prints for a scan left unpruned for this reason. */
  def notPruned(what: String, why: String): String = s"$what: below nondeterministic $why: not pruned"
}
