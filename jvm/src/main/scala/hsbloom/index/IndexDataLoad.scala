package hsbloom.index

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.example.data.Group
import org.apache.parquet.hadoop.{ParquetFileReader, ParquetReader}
import org.apache.parquet.hadoop.api.ReadSupport
import org.apache.parquet.hadoop.example.GroupReadSupport
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.schema.MessageType

/**
 * Loading a version's file tables into `IndexData`'s slot arrays: reads only
 * the small columns, never the filters, so it costs the number of files, not
 * the filters' bytes (docs/design/scale.md).
 */
object IndexDataLoad {

  /** `IndexData.ProjectedColumns` as `part` stores them (a missing one fails here, naming it). */
  def projection(part: Path, conf: Configuration): MessageType = {
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(part, conf))
    val schema = try reader.getFooter.getFileMetaData.getSchema finally reader.close()
    IndexData.ProjectedColumns.foreach { c =>
      if (!schema.containsField(c)) {
        throw new OlderLayoutException(s"index table file $part has no column '$c' (written by an older hsbloom: " +
          "refresh the index with mode='full')")
      }
    }
    // Data layouts before 4 stored each filter twice, the whole one in this column, and their blocks differently.
    if (schema.containsField("filter")) {
      throw new OlderLayoutException(s"index table file $part holds whole filters (written by an older hsbloom, " +
        s"data layout before ${Layout.DataLayout}): refresh the index with mode='full'")
    }
    new MessageType(schema.getName,
      IndexData.ProjectedColumns.map(c => schema.getType(schema.getFieldIndex(c))).asJava)
  }

  /**
   * Reads the small columns of `<part>/files` of each of `dataPaths` (the
   * version's data directories, oldest first) through the Hadoop FileSystem
   * with parquet-java, on the driver (no Spark job inside query planning),
   * leaving out the rows of `droppedFileIds` (files an incremental refresh
   * dropped after that part was written). Throws when a table is missing or
   * unreadable (or was written without block addresses or checksums), or when
   * two rows disagree on a file's fingerprint; a filter that did not parse
   * when the version was written has no blocks, and its file is always read.
   * A row that fails its checksum is left out (its file is then read, as any
   * file the index does not hold) and reported to `IndexDamage`.
   */
  def load(dataPaths: Seq[String], droppedFileIds: Set[Long], conf: Configuration, maxCachedBlockBytes: Long): IndexData = {
    val slots = new SlotsBuilder(dataPaths, new FilterBlocks.Reader(conf, maxCachedBlockBytes))
    var damaged = 0
    dataPaths.foreach { dataPath =>
      val seed = Checksums.directorySeed(dataPath)
      val table = new Path(IndexTables.filesPath(dataPath))
      val blocksDir = new Path(IndexTables.blocksPath(dataPath))
      val fs = table.getFileSystem(conf)
      val listed = try fs.listStatus(table) catch {
        case e: java.io.FileNotFoundException =>
          IndexDamage.record(new Path(dataPath), table, "the file table is missing")
          throw e
      }
      val parts = listed.filter(s => s.isFile && !s.getPath.getName.startsWith("_") &&
        !s.getPath.getName.startsWith(".")).map(_.getPath).sortBy(_.getName)
      // Every part is written by IndexTables (writeFileTable, writeStoredFileTable: one stored schema), so one footer
      // gives the projection for all.
      val readConf = new Configuration(conf)
      var projected = false
      parts.foreach { part => try {
        if (!projected) {
          readConf.set(ReadSupport.PARQUET_READ_SCHEMA, projection(part, conf).toString)
          projected = true
        }
        val rows = ParquetReader.builder(new GroupReadSupport(), part).withConf(readConf).build()
        try {
          var row: Group = rows.read()
          while (row != null) {
            val fields = IndexData.rowFields(row)
            val intact = fields.checksum(seed) == row.getLong(Checksums.RowChecksum, 0)
            if (!intact) damaged += 1
            if (intact && !droppedFileIds.contains(fields.fileId)) slots.add(fields, blocksDir)
            row = rows.read()
          }
        } finally rows.close()
        if (damaged > 0) {
          IndexDamage.record(part, s"$damaged rows of the file table fail their checksums")
          damaged = 0
        }
      } catch {
        case e: OlderLayoutException => throw e
        // Not readable as a file table: none of its rows is used (their files are read).
        case NonFatal(e) => IndexDamage.record(part, s"the file table part cannot be read ($e)")
      }}
    }
    // Zones are optional: when they cannot be read, files are read whole (file-level pruning still applies).
    val zones = try ZoneTable.load(dataPaths, droppedFileIds, conf, slots.reader, slots.group, slots.fileRows) catch {
      case NonFatal(e) =>
        dataPaths.foreach(p => IndexDamage.record(new Path(p), new Path(ZoneTable.path(p)), s"the zone table cannot be read ($e)"))
        Map.empty[String, ZoneTable.FileZones]
    }
    slots.result(zones)
  }
}

/**
 * Gathers file-table rows into slot arrays: a slot per file key, and per
 * column the slot, counts and filter address of each row, made dense by
 * `result`. Also used to make an `IndexData` without a stored table (tests,
 * benchmarks).
 */
private[hsbloom] final class SlotsBuilder(dataPaths: Seq[String], val reader: FilterBlocks.Reader) {
  private val slotsByKey = new java.util.HashMap[String, Integer]()
  private val slotsByPath = new java.util.HashMap[String, Integer]()
  private var sizes = new Array[Long](1024)
  private var mtimes = new Array[Long](1024)
  private var numSlots = 0
  private var keyChars = 0L
  private val groups = mutable.LinkedHashMap[(Path, Long), FilterBlocks.Group]()
  private var corrupt = 0

  private final class ColumnRows {
    val slot = mutable.ArrayBuilder.make[Int]
    val numRows = mutable.ArrayBuilder.make[Long]
    val numNulls = mutable.ArrayBuilder.make[Long]
    val group = mutable.ArrayBuilder.make[Int]
    val position = mutable.ArrayBuilder.make[Int]
  }
  private val columns = mutable.LinkedHashMap[String, ColumnRows]()
  private var fileRowsBySlot = Array.fill(1024)(-1L)

  /** The group of filters at `offset` of side file `file` (one `Group`, one id, per group of the version). */
  def group(file: Path, offset: Long, count: Int, bitsetBytes: Int): FilterBlocks.Group =
    groups.getOrElseUpdate((file, offset), FilterBlocks.Group(groups.size, file, offset, count, bitsetBytes))

  /** The slot of a file as the table names it, made on first sight; its fingerprint must agree. */
  def slot(path: String, size: Long, mtime: Long): Int = {
    val known = slotsByPath.get(path)
    val s: Int = if (known != null) known else {
      val key = FileKey.listed(path) // one parse per file, not per column
      val byKey = slotsByKey.get(key)
      val s: Int = if (byKey != null) byKey else {
        slotsByKey.put(key, numSlots)
        if (numSlots == sizes.length) {
          sizes = java.util.Arrays.copyOf(sizes, numSlots * 2)
          mtimes = java.util.Arrays.copyOf(mtimes, numSlots * 2)
          fileRowsBySlot = java.util.Arrays.copyOf(fileRowsBySlot, numSlots * 2)
          java.util.Arrays.fill(fileRowsBySlot, numSlots, numSlots * 2, -1L)
        }
        sizes(numSlots) = size
        mtimes(numSlots) = mtime
        keyChars += key.length
        numSlots += 1
        numSlots - 1
      }
      slotsByPath.put(path, s)
      s
    }
    if (sizes(s) != size || mtimes(s) != mtime) {
      throw new IllegalStateException(s"index tables of ${dataPaths.mkString(", ")} list $path " +
        "twice with different fingerprints")
    }
    s
  }

  /** One intact file-table row, its filter in `blocksDir`. */
  def add(f: Checksums.RowFields, blocksDir: Path): Unit = {
    val g = if (f.blocksCount == 0) { corrupt += 1; -1 }
      else group(new Path(blocksDir, f.blocksFile), f.blocksOffset, f.blocksCount, f.bitsetBytes).id
    add(slot(f.path, f.size, f.mtime), f.column, f.numRows, f.numNulls, g, f.blocksPosition)
  }

  def add(slot: Int, column: String, numRows: Long, numNulls: Long, groupId: Int, position: Int): Unit = {
    val c = columns.getOrElseUpdate(column, new ColumnRows)
    c.slot += slot; c.numRows += numRows; c.numNulls += numNulls; c.group += groupId; c.position += position
    fileRowsBySlot(slot) = numRows
  }

  /** The rows of the file with this key, as its first column counts them (for the zones' completeness check). */
  def fileRows(key: String): Option[Long] = 
    Option(slotsByKey.get(key)).map(s => fileRowsBySlot(s.intValue)).filter(_ >= 0)

  def result(zones: Map[String, ZoneTable.FileZones]): IndexData = {
    val (sz, mt) = (java.util.Arrays.copyOf(sizes, numSlots), java.util.Arrays.copyOf(mtimes, numSlots))
    val groupArray = groups.values.toArray.sortBy(_.id)
    val dense = columns.map { case (name, rows) =>
      val (slots, nr, nn, g, p) = (rows.slot.result(), rows.numRows.result(), rows.numNulls.result(),
        rows.group.result(), rows.position.result())
      val present = new java.util.BitSet(numSlots)
      val (numRows, numNulls) = (new Array[Long](numSlots), new Array[Long](numSlots))
      val (group, position) = (Array.fill(numSlots)(-1), new Array[Int](numSlots))
      var i = 0
      while (i < slots.length) {
        val s = slots(i)
        present.set(s); numRows(s) = nr(i); numNulls(s) = nn(i); group(s) = g(i); position(s) = p(i)
        i += 1
      }
      name -> new IndexData.ColumnSlots(present, numRows, numNulls, group, position, groupArray)
    }.toMap
    val zonesBySlot = new Array[ZoneTable.FileZones](numSlots)
    zones.foreach { case (key, z) =>
      val s = slotsByKey.get(key)
      if (s != null && sz(s) == z.size && mt(s) == z.mtime) zonesBySlot(s) = z
    }
    // Strings (2 bytes a char) and map entries, fingerprints, and per column 33 bytes a slot.
    val bytes = keyChars * 2 + numSlots * (96L + 16) + dense.size * numSlots * 33L +
      zones.values.map(_.zones.size * 240L).sum
    new IndexData(dataPaths, slotsByKey, sz, mt, dense, reader, zonesBySlot, bytes, corrupt)
  }
}
