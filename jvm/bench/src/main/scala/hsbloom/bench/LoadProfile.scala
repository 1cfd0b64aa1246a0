package hsbloom.bench

import java.io.{ByteArrayOutputStream, DataOutputStream}
import java.nio.charset.StandardCharsets

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.example.data.Group
import org.apache.parquet.hadoop.{ParquetFileReader, ParquetReader}
import org.apache.parquet.hadoop.api.ReadSupport
import org.apache.parquet.hadoop.example.GroupReadSupport
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.schema.MessageType
import org.apache.spark.sql.SparkSession

import hsbloom.format.{Checksums, FileKey}
import hsbloom.index.{FilterBlocks, IndexData, IndexDataLoad, IndexTables, SlotsBuilder, TableRows}
import hsbloom.pruning.PredicateTranslation.Probe
import hsbloom.pruning.SlotPredicates

/**
 * Where the first query of an index version spends its time (issue 18), on
 * a synthetic version written by `ScaleBench.write`: the load of its file
 * table phase by phase, the way planning loaded it before (parquet-java's
 * record reader, a `Group`, a `RowFields` and a DataOutputStream per row,
 * a `Path` parsed per file and one made per row for its side file) beside
 * the way it loads it now (`TableRows`' column readers, one reused buffer
 * for the checksums, keys read off plain path strings), then the first
 * listing's slots and the first `=` over the slots.
 *
 * Each phase runs `rounds` times, old and new interleaved; a phase's figure
 * is its least wall time and least CPU time of this thread (the machine's
 * other load counts little in either), and `*_cold` the first round's wall
 * time (a JVM that has not run the code yet, as a session's first query).
 */
object LoadProfile {

  def run(spark: SparkSession, dataPath: String, files: Int, rounds: Int): String = {
    val conf = spark.sessionState.newHadoopConf()
    val threads = java.lang.management.ManagementFactory.getThreadMXBean
    val wall = scala.collection.mutable.LinkedHashMap[String, Seq[Double]]()
    val cpu = scala.collection.mutable.LinkedHashMap[String, Seq[Double]]()
    def timed[T](name: String)(body: => T): T = {
      val (start, cpuStart) = (System.nanoTime(), threads.getCurrentThreadCpuTime)
      val result = body
      wall(name) = wall.getOrElse(name, Nil) :+ (System.nanoTime() - start) / 1e6
      cpu(name) = cpu.getOrElse(name, Nil) :+ (threads.getCurrentThreadCpuTime - cpuStart) / 1e6
      result
    }
    val paths = distinctPaths(dataPath, conf)
    (0 until math.max(rounds, 1)).foreach { _ =>
      timed("row_read")(rowReaderLoad(dataPath, conf, 0))
      timed("row_fields")(rowReaderLoad(dataPath, conf, 1))
      timed("row_checksum")(rowReaderLoad(dataPath, conf, 2))
      timed("row_load")(rowReaderLoad(dataPath, conf, 3))
      timed("path_parse")(paths.foreach(p => FileKey.of(new Path(p).toUri)))
      timed("column_read")(columnLoad(dataPath, conf, checksums = false))
      timed("column_checksum")(columnLoad(dataPath, conf, checksums = true))
      timed("plain_key")(paths.foreach(FileKey.listed))
      val data = timed("load")(IndexData.load(Seq(dataPath), Set.empty, conf, 256L << 20))
      val listing = ScaleBench.synthetic(files)
      val slots = timed("first_listing")(Array(data.listings.slotsOf(listing)))
      timed("first_eq") {
        val compiled = SlotPredicates.compile(Probe("k", Array(ScaleBench.valueHash(files / 2, 0))), IndexedSeq(data),
          _ => Seq(0 -> "k"))
        (0 until files).count(i => compiled.mayMatch(slots, i))
      }
    }
    val fields = wall.keys.toSeq.flatMap { k =>
      Seq(s"${k}_ms" -> f"${wall(k).min}%.1f", s"${k}_cpu_ms" -> f"${cpu(k).min}%.1f",
        s"${k}_cold_ms" -> f"${wall(k).head}%.1f")
    }
    (("files" -> files.toString) +: fields).map { case (k, v) => s"$k=$v" }.mkString(" ")
  }

  private def parts(dataPath: String, conf: Configuration): Seq[Path] = {
    val table = new Path(IndexTables.filesPath(dataPath))
    table.getFileSystem(conf).listStatus(table).filter(s => s.isFile && !s.getPath.getName.startsWith("_") &&
      !s.getPath.getName.startsWith(".")).map(_.getPath).sortBy(_.getName).toSeq
  }

  private def distinctPaths(dataPath: String, conf: Configuration): Array[String] = {
    val paths = new java.util.LinkedHashSet[String]()
    parts(dataPath, conf).foreach { part =>
      val rows = TableRows.open(part, conf, IndexDataLoad.Columns)
      try while (rows.next()) paths.add(rows.string(IndexDataLoad.FilePath)) finally rows.close()
    }
    paths.toArray(new Array[String](0))
  }

  /**
   * The load as planning did it before this change, up to `phase`: 0 the record reader only, 1 and a
   * `RowFields` per row, 2 and its checksum through a DataOutputStream, 3 and the slots (a `Path` parsed per
   * file, a `Path` made per row for its side file).
   */
  private def rowReaderLoad(dataPath: String, conf: Configuration, phase: Int): Int = {
    val seed = Checksums.directorySeed(dataPath)
    val blocksDir = new Path(IndexTables.blocksPath(dataPath))
    val slots = new SlotsBuilder(Seq(dataPath), new FilterBlocks.Reader(conf, 1L << 20))
    val parsed = new java.util.HashSet[String]()
    var n = 0
    parts(dataPath, conf).foreach { part =>
      val readConf = new Configuration(conf)
      readConf.set(ReadSupport.PARQUET_READ_SCHEMA, projection(part, conf).toString)
      val rows = ParquetReader.builder(new GroupReadSupport(), part).withConf(readConf).build()
      try {
        var row: Group = rows.read()
        while (row != null) {
          n += 1
          if (phase >= 1) {
            val f = fieldsOf(row)
            if (phase >= 2 && legacyChecksum(f, seed) != row.getLong(Checksums.RowChecksum, 0)) {
              throw new IllegalStateException(s"row of ${f.path} fails its checksum")
            }
            if (phase >= 3) {
              if (parsed.add(f.path)) FileKey.of(new Path(f.path).toUri)
              slots.add(f.path, f.size, f.mtime, f.column, f.numRows, f.numNulls, new Path(blocksDir, f.blocksFile),
                f.blocksOffset, f.blocksCount, f.blocksPosition, f.bitsetBytes)
            }
          }
          row = rows.read()
        }
      } finally rows.close()
    }
    if (phase >= 3) slots.result(Map.empty).numFiles else n
  }

  /** The load's reading as planning does it now: the column readers, and each row's checksum when `checksums`. */
  private def columnLoad(dataPath: String, conf: Configuration, checksums: Boolean): Int = {
    val seed = Checksums.directorySeed(dataPath)
    val out = new Checksums.RowBytes
    var n = 0
    parts(dataPath, conf).foreach { part =>
      val rows = TableRows.open(part, conf, IndexDataLoad.Columns)
      try while (rows.next()) {
        if (checksums && !IndexDataLoad.intact(rows, out, seed)) throw new IllegalStateException("a row fails its checksum")
        n += 1
      } finally rows.close()
    }
    n
  }

  /** The file table's columns planning reads, as `part` stores them. */
  private def projection(part: Path, conf: Configuration): MessageType = {
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(part, conf))
    val schema = try reader.getFooter.getFileMetaData.getSchema finally reader.close()
    new MessageType(schema.getName, IndexDataLoad.Columns.map(c => schema.getType(schema.getFieldIndex(c.name))): _*)
  }

  private def fieldsOf(row: Group): Checksums.RowFields =
    Checksums.RowFields(row.getLong("file_id", 0), row.getString("file_path", 0), row.getLong("file_size", 0),
      row.getLong("file_mtime", 0), row.getString("column", 0), row.getLong("num_rows", 0),
      row.getLong("num_nulls", 0), row.getString("blocks_file", 0), row.getLong("blocks_offset", 0),
      row.getInteger("blocks_count", 0), row.getInteger("blocks_position", 0), row.getInteger("bitset_bytes", 0),
      row.getLong(Checksums.FilterChecksum, 0))

  /** The row checksum as it was computed before: a stream and a byte array per row. */
  private def legacyChecksum(f: Checksums.RowFields, seed: Long): Long = {
    val buffer = new ByteArrayOutputStream(128 + f.path.length * 3)
    val out = new DataOutputStream(buffer)
    def string(s: String): Unit = { val b = s.getBytes(StandardCharsets.UTF_8); out.writeInt(b.length); out.write(b) }
    out.writeLong(f.fileId); string(f.path); out.writeLong(f.size); out.writeLong(f.mtime); string(f.column)
    out.writeLong(f.numRows); out.writeLong(f.numNulls); string(f.blocksFile); out.writeLong(f.blocksOffset)
    out.writeInt(f.blocksCount); out.writeInt(f.blocksPosition); out.writeInt(f.bitsetBytes); out.writeLong(f.filterChecksum)
    out.flush()
    Checksums.xxh64(buffer.toByteArray, seed)
  }
}
