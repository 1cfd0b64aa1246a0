package hsbloom.shim

import org.apache.spark.sql.types.StringType

/** Spark 3.5 has no collations: every string compares as its bytes. */
object Collations {
  def isBinary(t: StringType): Boolean = true
}
