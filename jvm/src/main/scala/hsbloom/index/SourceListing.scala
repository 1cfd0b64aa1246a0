package hsbloom.index

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import hsbloom.format.{Checksums, SourceFile}

/**
 * The source files an index version holds, read from its file tables. Every
 * file of the listing a data directory was built from has a row per indexed
 * column there (a file that yields no rows gets one with zero counts:
 * docs/design/build.md), so the log entry does not list the files: it keeps
 * only their number (`summary.num_files`), and an incremental refresh adds a
 * data directory with rows for the appended files only (docs/design/log.md).
 * Read like planning reads the tables (`TableRows`: parquet-java's column
 * readers), on the driver, every row checked against its checksum.
 */
object SourceListing {
  /**
   * The files of the data directories `dataPaths` (oldest first) without the ids `dropped`, sorted by path, and
   * how many rows fail their checksums or table parts cannot be read (recorded in `IndexDamage` too), so a caller
   * knows the listing may lack files.
   */
  def held(dataPaths: Seq[String], dropped: Set[Long], conf: Configuration): (Seq[SourceFile], Int) = {
    val files = mutable.HashMap[Long, SourceFile]()
    val out = new Checksums.RowBytes
    var damaged = 0
    dataPaths.foreach { dataPath =>
      val seed = Checksums.directorySeed(dataPath)
      val table = new Path(IndexTables.filesPath(dataPath))
      val parts = try table.getFileSystem(conf).listStatus(table).filter(s => s.isFile &&
        !s.getPath.getName.startsWith("_") && !s.getPath.getName.startsWith(".")).map(_.getPath).sortBy(_.getName)
      catch {
        case e: java.io.FileNotFoundException =>
          IndexDamage.record(new Path(dataPath), table, "the file table is missing")
          damaged += 1
          Array.empty[Path]
      }
      parts.foreach { part =>
        var bad = 0
        try {
          val rows = TableRows.open(part, conf, IndexDataLoad.Columns, IndexDataLoad.checkLayout(part))
          try {
            while (rows.next()) {
              if (!IndexDataLoad.intact(rows, out, seed)) bad += 1
              else if (!dropped.contains(rows.long(IndexDataLoad.FileId))) {
                val file = SourceFile(rows.long(IndexDataLoad.FileId), rows.string(IndexDataLoad.FilePath),
                  rows.long(IndexDataLoad.FileSize), rows.long(IndexDataLoad.FileMtime))
                val held = files.getOrElseUpdate(file.fileId, file)
                if (held != file) {
                  throw new IllegalStateException(s"file id ${file.fileId} names two files (${held.path} and ${file.path})")
                }
              }
            }
          } finally rows.close()
        } catch {
          case e: OlderLayoutException => throw e
          case NonFatal(e) =>
            IndexDamage.record(part, s"the file table part cannot be read ($e)")
            damaged += 1
        }
        if (bad > 0) IndexDamage.record(part, s"$bad rows of the file table fail their checksums")
        damaged += bad
      }
    }
    (files.values.toSeq.sortBy(_.path), damaged)
  }
}
