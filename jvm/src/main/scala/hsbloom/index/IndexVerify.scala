package hsbloom.index

import scala.collection.mutable
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetReader
import org.apache.parquet.hadoop.example.GroupReadSupport
import org.apache.spark.sql.SparkSession

/**
 * `hs.verify_index(name)`'s reading of an index version's data (Python:
 * hsbloom/verify.py): every row of every file table, every filter, every block
 * row of `blocks/` and every global filter chunk, checked against their
 * checksums, and every file of the log's listing against the rows the tables
 * hold. Reads everything once, on the driver; for people and scripts, never on
 * a query's path. Each problem is reported with the file it is in, and found
 * damage is also recorded in `IndexDamage`.
 */
object IndexVerify {
  private val mapper = new ObjectMapper()

  /**
   * Problems of the version made of `dataPathsJson` (oldest first) without
   * `droppedIdsJson`, which should hold `columnsJson` of the files
   * `fileIdsJson`, and a global filter per column when `globalFilter`.
   * Returns JSON `[{file, problem}]`; empty when everything checks out.
   */
  def verify(spark: SparkSession, dataPathsJson: String, droppedIdsJson: String, fileIdsJson: String,
      columnsJson: String, globalFilter: Boolean): String = {
    val dataPaths = mapper.readValue(dataPathsJson, classOf[Array[String]]).toSeq
    val dropped = mapper.readValue(droppedIdsJson, classOf[Array[Long]]).toSet
    val expectedIds = mapper.readValue(fileIdsJson, classOf[Array[Long]]).toSet
    val columns = mapper.readValue(columnsJson, classOf[Array[String]]).toSeq
    val conf = spark.sessionState.newHadoopConf()
    val problems = mutable.ArrayBuffer[(Path, Path, String)]()
    def problem(dataPath: String, file: Path, text: String): Unit = problems += ((new Path(dataPath), file, text))
    val held = mutable.HashSet[(Long, String)]()
    dataPaths.foreach { dataPath =>
      val groups = mutable.LinkedHashMap[(String, Long), (Int, Int, Path)]()
      verifyFileTable(dataPath, conf, dropped, held, groups, problem)
      verifyBlocks(dataPath, conf, groups, problem)
      if (globalFilter) columns.foreach { c =>
        try IndexTables.readGlobalFilter(dataPath, c, conf) catch {
          case NonFatal(e) => problem(dataPath, new Path(IndexTables.globalPath(dataPath)), e.getMessage)
        }
      }
    }
    val missing = for (id <- expectedIds.toSeq.sorted; c <- columns if !held.contains((id, c))) yield s"$id/$c"
    if (missing.nonEmpty) {
      problem(dataPaths.last, new Path(IndexTables.filesPath(dataPaths.last)),
        s"no intact row for ${missing.size} (file id/column) pairs of the log's listing, for example " +
          s"${missing.take(5).mkString(", ")} (a part of the file table is missing or damaged)")
    }
    val out = new java.util.ArrayList[java.util.Map[String, String]]()
    problems.foreach { case (dataPath, file, text) =>
      IndexDamage.record(dataPath, file, text)
      val m = new java.util.LinkedHashMap[String, String]()
      m.put("file", file.toString); m.put("problem", text)
      out.add(m)
    }
    mapper.writeValueAsString(out)
  }

  private type Report = (String, Path, String) => Unit

  /** Every row of `<dataPath>/files`, whole (with its filter); collects the block groups the rows point at. */
  private def verifyFileTable(dataPath: String, conf: Configuration, dropped: Set[Long],
      held: mutable.HashSet[(Long, String)], groups: mutable.Map[(String, Long), (Int, Int, Path)],
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
            val filter = row.getBinary("filter", 0).getBytes
            val fields = Checksums.RowFields(row.getLong("file_id", 0), row.getString("file_path", 0),
              row.getLong("file_size", 0), row.getLong("file_mtime", 0), row.getString("column", 0),
              row.getLong("num_rows", 0), row.getLong("num_nulls", 0), row.getString("blocks_file", 0),
              row.getLong("blocks_offset", 0), row.getInteger("blocks_count", 0), row.getInteger("blocks_position", 0),
              row.getInteger("bitset_bytes", 0), row.getLong(Checksums.FilterChecksum, 0))
            if (fields.checksum(seed) != row.getLong(Checksums.RowChecksum, 0) ||
                Checksums.xxh64(filter, 0L) != fields.filterChecksum) {
              bad += 1
            } else {
              if (!dropped.contains(fields.fileId)) held += ((fields.fileId, fields.column))
              if (fields.blocksCount > 0) {
                groups((fields.blocksFile, fields.blocksOffset)) =
                  (fields.blocksCount, fields.bitsetBytes, part)
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

  /** Every block row of every group the file table points at. */
  private def verifyBlocks(dataPath: String, conf: Configuration,
      groups: mutable.Map[(String, Long), (Int, Int, Path)], problem: Report): Unit = {
    val dir = new Path(IndexTables.blocksPath(dataPath))
    groups.groupBy(_._1._1).foreach { case (fileName, inFile) =>
      val file = new Path(dir, fileName)
      try {
        val in = file.getFileSystem(conf).open(file)
        try {
          var bad = 0
          inFile.foreach { case ((_, offset), (count, bitsetBytes, _)) =>
            val group = FilterBlocks.Group(0, file, offset, count, bitsetBytes)
            val bytes = new Array[Byte](group.rowLength)
            val rowBytes = count * 32
            for (b <- 0 until group.numBlocks) {
              in.readFully(group.rowOffset(b), bytes)
              val stored = java.nio.ByteBuffer.wrap(bytes, rowBytes, Checksums.BlockRowChecksumBytes).getLong
              if (stored != Checksums.blockRow(bytes, 0, rowBytes, fileName, group.rowOffset(b))) bad += 1
            }
          }
          if (bad > 0) problem(dataPath, file, s"$bad block rows fail their checksums")
        } finally in.close()
      } catch {
        case NonFatal(e) =>
          problem(dataPath, file, s"the side file cannot be read whole ($e)")
          // Name the table parts whose rows point at it, too (they may be what was replaced).
          inFile.values.map(_._3).toSeq.distinct.foreach { part =>
            problem(dataPath, part, s"rows point at blocks/$fileName, which cannot be read whole")
          }
      }
    }
  }
}
