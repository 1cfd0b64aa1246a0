package hsbloom.testing

import java.io.File
import java.nio.file.{Files, StandardCopyOption}

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.col

import hsbloom.index.IndexTables
import hsbloom.sbbf.{ParquetHash, Sbbf}

/**
 * What the refresh suites look at besides answers: the file-table rows of the latest stable version (its
 * directories' rows minus the dropped ids), per column the file ids it holds, the global filter of a version (the
 * OR of its directories' filters, which must all have one size), and a file rewritten in place.
 */
trait Refreshes extends Indexes with Queries { self: SharedSession =>

  /** The predicates of a table of `keyed` rows: a lookup of each key, of a name, IN, OR, IS NULL, an absent key. */
  protected def predicatesFor(keys: Seq[Long]): Seq[String] =
    keys.map(k => s"key = $k") ++ Seq(s"name = 'k${keys.head}'", s"key IN (${keys.take(5).mkString(", ")})",
      s"key = ${keys(1)} OR v = 3", "key IS NULL", "key = -1")

  /** The stored file-table rows of the latest stable version of `name`: its directories' rows minus the dropped ids. */
  protected def versionRows(name: String): DataFrame = {
    val entry = stable(name)
    IndexTables.readStoredFileTables(spark, entry.parts.map(v => s"file:$systemPath/$name/v__=$v"))
      .where(!col("file_id").isin(entry.droppedFileIds: _*))
  }

  /** Per column, the file ids the latest stable version of `name` holds in its file tables. */
  protected def fileTable(name: String): Map[String, Set[Long]] =
    versionRows(name).select("column", "file_id").collect().groupBy(_.getString(0))
      .map { case (c, rs) => c -> rs.map(_.getLong(1)).toSet }

  /** The ids of the files the latest stable version of `name` holds, as refresh reads them; the listing is whole. */
  protected def heldIds(name: String): Set[Long] = {
    val (files, damaged) = held(name)
    assert(damaged == 0 && files.size.toLong == stable(name).summary.get.numFiles)
    files.map(_.fileId).toSet
  }

  /** The global filter of `column` over `dataPaths`: the OR of each directory's, all of one size. */
  protected def globalFilter(dataPaths: Seq[String], column: String): Sbbf = {
    val conf = spark.sessionState.newHadoopConf()
    val filters = dataPaths.map(p => Sbbf.fromBytes(IndexTables.readGlobalFilter(p, column, conf)))
    assert(filters.map(_.numBytes).distinct.size == 1, "the data directories' global filters differ in size")
    filters.reduce((a, b) => Sbbf.fromBitset(a.bitset).union(b))
  }

  /** Whether the global filter may hold each of the long keys `keys`. */
  protected def holdsAll(filter: Sbbf, keys: Seq[Long]): Boolean = keys.forall(k => filter.mightContainHash(ParquetHash.hashLong(k)))

  /** Replaces the Parquet file `target` with the single file of `df`, as a writer that rewrites a file in place. */
  protected def rewriteInPlace(target: File, df: DataFrame): Unit = {
    val staging = dir("rewrite")
    df.coalesce(1).write.parquet(staging)
    Files.copy(partFiles(staging).head.toPath, target.toPath, StandardCopyOption.REPLACE_EXISTING)
    new File(target.getParentFile, s".${target.getName}.crc").delete() // Hadoop's checksum of the old contents
  }
}
