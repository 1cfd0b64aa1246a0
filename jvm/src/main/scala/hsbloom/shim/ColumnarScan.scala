package hsbloom.shim

import org.apache.spark.sql.execution.{ColumnarToRowExec, FileSourceScanExec, InputAdapter, SparkPlan, WholeStageCodegenExec}

/** The physical file scan under the nodes Spark wraps a columnar scan in. */
object ColumnarScan {
  /**
   * The file scan of a plan that is nothing but a columnar scan (seen through
   * whole-stage codegen and the columnar-to-row step), with the plan's own output.
   */
  def of(plan: SparkPlan): Option[FileSourceScanExec] = {
    def strip(p: SparkPlan): SparkPlan = p match {
      case w: WholeStageCodegenExec => strip(w.child)
      case c: ColumnarToRowExec => strip(c.child)
      case i: InputAdapter => strip(i.child)
      case other => other
    }
    strip(plan) match {
      case scan: FileSourceScanExec if scan.supportsColumnar && scan.output == plan.output => Some(scan)
      case _ => None
    }
  }
}
