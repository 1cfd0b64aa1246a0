package hsbloom.sql

import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.command.LeafRunnableCommand

import hsbloom.{HsbloomException, IndexInfo}
import hsbloom.api.HyperspaceApi

/**
 * `SHOW BLOOMFILTER INDEXES [ON table]`: `indexes()`, one row per index (`IndexInfo.listingSchema`). With ON,
 * only the indexes whose source covers that table (`SourceKey`: same format, and same root paths or same
 * catalog table); an index whose log cannot be read (state UNREADABLE, or gone since it was listed) covers no
 * table, since what it was built from is unknown.
 */
final case class ShowIndexesCommand(source: Option[LogicalPlan]) extends LeafRunnableCommand {
  override val output: Seq[Attribute] = DataTypeUtils.toAttributes(IndexInfo.listingSchema)

  override def run(sparkSession: SparkSession): Seq[Row] = {
    val hs = new HyperspaceApi(sparkSession)
    val listed = hs.indexes().collect().toSeq
    source match {
      case None => listed
      case Some(table) =>
        val key = SourceKey.of(SourceTable.dataFrame(sparkSession, table))
        listed.filter(row => covers(hs, key, row))
    }
  }

  private def covers(hs: HyperspaceApi, key: SourceKey, row: Row): Boolean =
    row.getAs[String]("state") != "UNREADABLE" && {
      try key.covers(hs.index(row.getAs[String]("name")).source)
      catch {
        case e: HsbloomException if e.condition == HsbloomException.IndexNotFound ||
          e.condition == HsbloomException.CorruptLog => false
      }
    }
}
