package hsbloom.pruning

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{AttributeSet, ExprId}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan, Project}
import org.apache.spark.sql.execution.datasources.HadoopFsRelation

import hsbloom.catalog.IndexCatalog
import hsbloom.conf.HsbloomConf
import hsbloom.rules.{GuardedRule, Nondeterminism}
import hsbloom.shim.{Delta, FileRelation}

/**
 * Gives a filtered file relation that an ACTIVE index covers a file listing
 * that skips files whose Bloom filters rule out a match (`PrunedFileIndex`).
 *
 * Runs with the optimizer's operator rules (so several times per query): it
 * only installs the wrapper, once, where a Filter above a relation (through
 * Projects and Filters) references a covered column. Which files survive is
 * decided when Spark lists the files, from the final data filters.
 *
 * Not touched: relations below a nondeterministic operator (`Nondeterminism`:
 * which rows it keeps depends on the files read), streaming relations, and Delta tables. Delta's scan planning
 * (data skipping, deletion vectors) recognizes its own file index classes;
 * behind a foreign FileIndex, deleted rows would come back. `DeltaScanPruningRule`
 * prunes Delta scans on the physical plan instead (docs/pruning.md).
 * Active only while `spark.hsbloom.enabled` is true; any failure here leaves
 * the plan as it was (`GuardedRule`).
 */
class FilePruningRule(session: SparkSession) extends GuardedRule[LogicalPlan] {
  override protected def enabled: Boolean = HsbloomConf.isEnabled(session)
  override protected def failing: String = "file pruning rule"

  override protected def rewritePlan(plan: LogicalPlan): LogicalPlan = {
    val nondeterministic = Nondeterminism.logicalScans(plan)
    plan.transformDown {
      case f @ Filter(condition, child) =>
        val rewritten = withPrunedRelation(child, condition.references, nondeterministic)
        if (rewritten eq child) f else f.copy(child = rewritten)
    }
  }

  /**
   * `plan` with its relation wrapped, when the filter references a covered
   * column and no nondeterministic operator is above the relation; else `plan` itself.
   */
  private def withPrunedRelation(plan: LogicalPlan, referenced: AttributeSet, nondeterministic: Map[ExprId, String])
      : LogicalPlan = plan match {
    case p @ Project(_, child) =>
      val c = withPrunedRelation(child, referenced, nondeterministic)
      if (c eq child) p else p.copy(child = c)
    case f @ Filter(condition, child) =>
      val c = withPrunedRelation(child, referenced ++ condition.references, nondeterministic)
      if (c eq child) f else f.copy(child = c)
    case FileRelation(l, fs, output, false) if eligible(fs) =>
      val covered = IndexCatalog.coveredForFilters(session, fs, output)
      val filtered = covered.exists(c => referenced.exists(r => r.semanticEquals(c.attribute) || r.name == c.attribute.name))
      val unsafe = if (filtered) Nondeterminism.reasonFor(nondeterministic, output) else None
      unsafe.foreach(why => PruningDecisions.record(Nondeterminism.notPruned(fs.location.rootPaths.mkString(", "), why)))
      if (!filtered || unsafe.isDefined) l
      else l.copy(relation = fs.copy(location = new PrunedFileIndex(session, fs.location, covered))(fs.sparkSession))
    case other => other
  }

  private def eligible(fs: HadoopFsRelation): Boolean = !fs.location.isInstanceOf[PrunedFileIndex] &&
    !FilePruningRule.isDelta(fs)
}

object FilePruningRule {
  /** A Delta table: its file index or file format is Delta's. */
  def isDelta(fs: HadoopFsRelation): Boolean = Delta.isDelta(fs)
}
