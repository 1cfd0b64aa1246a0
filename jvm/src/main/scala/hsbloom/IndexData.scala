package hsbloom

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.example.data.Group
import org.apache.parquet.hadoop.ParquetReader
import org.apache.parquet.hadoop.example.GroupReadSupport

/**
 * The file-level index table of one index version (`<data>/files/`, see
 * docs/build.md) held in memory for query planning: per source file its
 * fingerprint (size, modification time) and per indexed column its null count
 * and serialized filter.
 *
 * A probe tests one hash against one 32-byte block of one file's filter
 * (`Sbbf.mightContainHashInBitset`), so after this is loaded, planning costs a
 * few memory reads per candidate file and value, whatever the filters' sizes.
 * Loading reads the whole table once per version (see docs/pruning.md).
 */
final class IndexData private (val dataPath: String, files: Map[String, IndexData.IndexedFile], val bytes: Long,
    val corruptFilters: Int) {
  import IndexData._

  def numFiles: Int = files.size

  /**
   * The index row of a listed file, only when the file is the one that was
   * indexed: same path, size and modification time. A file changed or added
   * since the build gets None, so it is read.
   */
  def lookup(path: Path, size: Long, mtime: Long): Option[IndexedFile] =
    files.get(IndexBuild.fileKey(path.toUri)).filter(f => f.size == size && f.mtime == mtime)
}

object IndexData {
  /** One column of one file: null count and filter (None when the stored filter is corrupt). */
  final case class ColumnEntry(numRows: Long, numNulls: Long, filter: Option[Filter]) {
    /** Whether a row of this file may hold one of `hashes` in this column. */
    def mightContainAny(hashes: Array[Long]): Boolean = filter match {
      case None => true
      case Some(f) =>
        var i = 0
        while (i < hashes.length) {
          if (Sbbf.mightContainHashInBitset(f.serialized, f.offset, f.numBytes, hashes(i))) return true
          i += 1
        }
        false
    }
    def mayHoldNulls: Boolean = numNulls > 0
  }

  /** A serialized SBBF whose header was validated: the bitset is `numBytes` at `offset`. */
  final case class Filter(serialized: Array[Byte], offset: Int, numBytes: Int)

  final case class IndexedFile(size: Long, mtime: Long, columns: Map[String, ColumnEntry])

  /**
   * Reads `<dataPath>/files` through the Hadoop FileSystem with parquet-java,
   * on the driver (no Spark job inside query planning). Throws when the table
   * is missing or unreadable; a single filter whose header does not validate
   * only marks that entry as corrupt (the file is then always read).
   */
  def load(dataPath: String, conf: Configuration): IndexData = {
    val table = new Path(dataPath, "files")
    val fs = table.getFileSystem(conf)
    val parts = fs.listStatus(table).filter(s => s.isFile && !s.getPath.getName.startsWith("_") &&
      !s.getPath.getName.startsWith(".")).map(_.getPath).sortBy(_.getName)
    val byFile = mutable.HashMap[String, (Long, Long, mutable.HashMap[String, ColumnEntry])]()
    var bytes = 0L
    var corrupt = 0
    parts.foreach { part =>
      val reader = ParquetReader.builder(new GroupReadSupport(), part).withConf(conf).build()
      try {
        var row: Group = reader.read()
        while (row != null) {
          val path = row.getString("file_path", 0)
          val size = row.getLong("file_size", 0)
          val mtime = row.getLong("file_mtime", 0)
          val column = row.getString("column", 0)
          val serialized = row.getBinary("filter", 0).getBytes
          val filter = try {
            val header = Sbbf.parseHeader(serialized)
            Some(Filter(serialized, header.headerLength, header.numBytes))
          } catch {
            case _: SbbfFormatException => corrupt += 1; None
          }
          val entry = ColumnEntry(row.getLong("num_rows", 0), row.getLong("num_nulls", 0), filter)
          val key = IndexBuild.listedFileKey(path)
          val (s, m, columns) = byFile.getOrElseUpdate(key, (size, mtime, mutable.HashMap()))
          if (s != size || m != mtime) {
            throw new IllegalStateException(s"index table $table lists $path twice with different fingerprints")
          }
          columns(column) = entry
          bytes += serialized.length + path.length * 2 + 96
          row = reader.read()
        }
      } finally reader.close()
    }
    val files = byFile.iterator.map { case (k, (s, m, cols)) => k -> IndexedFile(s, m, cols.toMap) }.toMap
    new IndexData(dataPath, files, bytes, corrupt)
  }
}
