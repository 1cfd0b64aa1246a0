package hsbloom.index

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetReader
import org.apache.parquet.hadoop.example.GroupReadSupport
import org.apache.spark.sql.SparkSession

import hsbloom.format.Checksums

/**
 * verify's reading of an index version's data (`hsbloom.operations.VerifyIndex`): every row of every file table, every block row of
 * `blocks/`, every filter read back from them and every global filter chunk,
 * checked against their checksums, and the files the tables hold against the
 * number the log records, and with keys the sealed tables (`SealedTable`).
 * Reads everything once, on the driver; for people
 * and scripts, never on a query's path. Each problem is reported with the
 * file it is in, and found damage is also recorded in `IndexDamage`.
 */
object IndexVerify {
  /**
   * Problems of the version made of `dataPaths` (oldest first) without the
   * file ids `dropped`, which should hold `columns` (stored keys) of `expectedFiles` source
   * files (the log entry's `summary.num_files`), and a global filter per
   * column of `globalColumns`, as (file, problem); empty when everything
   * checks out.
   */
  def problems(spark: SparkSession, dataPaths: Seq[String], dropped: Set[Long], expectedFiles: Long,
      columns: Seq[String], globalColumns: Seq[String], notChecked: String => Unit = _ => ()): Seq[(String, String)] = {
    val conf = spark.sessionState.newHadoopConf()
    val problems = mutable.ArrayBuffer[(Path, Path, String)]()
    def problem(dataPath: String, file: Path, text: String): Unit = problems += ((new Path(dataPath), file, text))
    val held = mutable.HashSet[(Long, String)]()
    dataPaths.foreach { dataPath =>
      val groups = mutable.LinkedHashMap[(String, Long), GroupRows]()
      verifyFileTable(dataPath, conf, dropped, held, groups, problem)
      verifyBlocks(dataPath, conf, groups, problem)
      val sealedRows = SealedTable.held(dataPath, conf) match {
        case Right(rows) => rows.filterNot(r => dropped.contains(r._1)).map(r => (r._1, r._2) -> r._3).toMap
        case Left(why) => problem(dataPath, new Path(SealedTable.path(dataPath)), "the sealed table (the encrypted " +
          s"columns' filters) cannot be read with this session's keys ($why)"); Map.empty[(Long, String), Long]
      }
      held ++= sealedRows.keys
      // The sealed zones only with keys: without them a query keeps every row group of their columns (never
      // wrong), so their absence is said, not counted a problem; with keys, a part that cannot be read is one.
      if (SealedTable.hasZones(dataPath, conf)) {
        if (!SealedTable.hasKeys(conf)) notChecked(s"the sealed zone table (${SealedTable.ZonesDir}/): no keys " +
          "(this session names no parquet.crypto.factory.class)")
        else SealedTable.zoneProblems(dataPath, conf, dropped, sealedRows).foreach { case (file, text) =>
          problem(dataPath, file, text)
        }
      }
      globalColumns.foreach { c =>
        try IndexTables.readGlobalFilter(dataPath, c, conf) catch {
          // An encrypted column's is in the sealed global table (`SealedGlobal`), read with this session's keys.
          case NonFatal(_) if SealedGlobal.exists(dataPath, conf) =>
            SealedGlobal.load(Seq(dataPath), c, conf).left.foreach(why => problem(dataPath,
              new Path(SealedGlobal.path(dataPath)), s"the sealed global filter of '$c' cannot be read with this " +
                s"session's keys ($why)"))
          case NonFatal(e) => problem(dataPath, new Path(IndexTables.globalPath(dataPath)), e.getMessage)
        }
      }
    }
    // The tables are the listing (`SourceListing`): every file they hold needs an intact row per column, and
    // their number must be the log's.
    val ids = held.map(_._1).toSeq.distinct.sorted
    val missing = for (id <- ids; c <- columns if !held.contains((id, c))) yield s"$id/$c"
    val table = new Path(IndexTables.filesPath(dataPaths.last))
    if (missing.nonEmpty) {
      problem(dataPaths.last, table, s"no intact row for ${missing.size} (file id/column) pairs, for example " +
        s"${missing.take(5).mkString(", ")} (a part of the file table is missing or damaged)")
    }
    if (ids.size != expectedFiles) {
      problem(dataPaths.last, table, s"the file tables hold intact rows for ${ids.size} source files; the log " +
        s"entry says the version holds $expectedFiles (a part of the file table is missing or damaged)")
    }
    problems.toSeq.map { case (dataPath, file, text) =>
      IndexDamage.record(dataPath, file, text)
      file.toString -> text
    }
  }

  private type Report = (String, Path, String) => Unit

  /** A block group the file table points at: its size, a table part pointing at it, its members' filter checksums. */
  private final case class GroupRows(count: Int, bitsetBytes: Int, part: Path,
      members: mutable.ArrayBuffer[(Int, Long)] = mutable.ArrayBuffer())

  /** Every row of `<dataPath>/files`; collects the block groups the rows point at. */
  private def verifyFileTable(dataPath: String, conf: Configuration, dropped: Set[Long],
      held: mutable.HashSet[(Long, String)], groups: mutable.Map[(String, Long), GroupRows],
      problem: Report): Unit = {
    val table = new Path(IndexTables.filesPath(dataPath))
    val fs = table.getFileSystem(conf)
    val parts = try fs.listStatus(table).filter(s => s.isFile && !s.getPath.getName.startsWith("_") &&
      !s.getPath.getName.startsWith(".")).map(_.getPath).sortBy(_.getName).toSeq catch {
      case NonFatal(e) => problem(dataPath, table, s"the file table cannot be listed ($e)"); Nil
    }
    val seed = Checksums.directorySeed(dataPath)
    parts.foreach { part =>
      var bad = 0
      try {
        val rows = ParquetReader.builder(new GroupReadSupport(), part).withConf(conf).build()
        try {
          var row = rows.read()
          while (row != null) {
            if (!row.getType.containsField(Checksums.RowChecksum)) {
              throw new IllegalStateException("no checksums (written by an older hsbloom); refresh with mode='full'")
            }
            val fields = IndexData.rowFields(row)
            if (fields.checksum(seed) != row.getLong(Checksums.RowChecksum, 0)) {
              bad += 1
            } else {
              if (!dropped.contains(fields.fileId)) held += ((fields.fileId, fields.column))
              if (fields.blocksCount > 0) {
                groups.getOrElseUpdate((fields.blocksFile, fields.blocksOffset),
                  GroupRows(fields.blocksCount, fields.bitsetBytes, part)).members +=
                  ((fields.blocksPosition, fields.filterChecksum))
              }
            }
            row = rows.read()
          }
        } finally rows.close()
        if (bad > 0) problem(dataPath, part, s"$bad rows of the file table fail their checksums")
      } catch {
        case NonFatal(e) => problem(dataPath, part, s"the file table part cannot be read ($e)")
      }
    }
  }

  /** Every block row of every group the file table points at, and every filter read back from them. */
  private def verifyBlocks(dataPath: String, conf: Configuration, groups: mutable.Map[(String, Long), GroupRows],
      problem: Report): Unit = {
    val dir = new Path(IndexTables.blocksPath(dataPath))
    groups.groupBy(_._1._1).foreach { case (fileName, inFile) =>
      val file = new Path(dir, fileName)
      try {
        var badRows = 0
        var badFilters = 0
        inFile.foreach { case ((_, offset), rows) =>
          val group = FilterBlocks.Group(0, file, offset, rows.count, rows.bitsetBytes)
          val (bytes, damaged) = StoredFilters.readGroup(group, conf)
          badRows += damaged.size
          if (damaged.isEmpty) rows.members.foreach { case (position, filterChecksum) =>
            if (Checksums.xxh64(StoredFilters.filterOf(group, bytes, position), 0L) != filterChecksum) badFilters += 1
          }
        }
        if (badRows > 0) problem(dataPath, file, s"$badRows stripes of block rows fail their checksums")
        if (badFilters > 0) problem(dataPath, file, s"$badFilters filters read back from it fail their checksums")
      } catch {
        case NonFatal(e) =>
          problem(dataPath, file, s"the side file cannot be read whole ($e)")
          // Name the table parts whose rows point at it, too (they may be what was replaced).
          inFile.values.map(_.part).toSeq.distinct.foreach { part =>
            problem(dataPath, part, s"rows point at blocks/$fileName, which cannot be read whole")
          }
      }
    }
  }
}
