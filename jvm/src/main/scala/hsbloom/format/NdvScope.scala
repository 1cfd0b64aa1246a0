package hsbloom.format

/**
 * How a column's `ndv` was counted, as the log names it (`summary.columns.<c>.ndv_scope`): over the column, each
 * value once (a HyperLogLog estimate), or as the sum of the files' counts (a value in several files counted in each).
 */
object NdvScope {
  val Column = "column"
  val Files = "files"
  def name(ofColumn: Boolean): String = if (ofColumn) Column else Files
}
