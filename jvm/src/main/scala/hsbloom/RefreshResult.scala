package hsbloom

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

/** What a refresh did; `refreshed` is false when there was nothing to do (and nothing was written). */
final case class RefreshResult(
    name: String,
    mode: String,
    refreshed: Boolean,
    appendedFiles: Long,
    deletedFiles: Long,
    /** The data version queries use now. */
    dataVersion: Long,
    message: String)

object RefreshResult {
  /** The refresh modes (docs/refresh.md). */
  val Full = "full"
  val Incremental = "incremental"
  val Quick = "quick"
  val Modes: Seq[String] = Seq(Full, Incremental, Quick)

  /** The one row of `REFRESH BLOOMFILTER INDEX`. */
  val schema: StructType = new StructType()
    .add("name", StringType, nullable = false)
    .add("mode", StringType, nullable = false)
    .add("refreshed", BooleanType, nullable = false)
    .add("appended_files", LongType, nullable = false)
    .add("deleted_files", LongType, nullable = false)
    .add("data_version", LongType, nullable = false)
    .add("message", StringType, nullable = false)

  def toRow(r: RefreshResult): Row =
    Row(r.name, r.mode, r.refreshed, r.appendedFiles, r.deletedFiles, r.dataVersion, r.message)
}
