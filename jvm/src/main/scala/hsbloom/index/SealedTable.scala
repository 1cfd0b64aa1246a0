package hsbloom.index

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetReader
import org.apache.parquet.hadoop.example.GroupReadSupport
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.col

import hsbloom.format.{FileKey, Layout, TableSchemas}
import hsbloom.sbbf.{Sbbf, SbbfFormatException}
import hsbloom.shim.CollectionConverters._

/**
 * The encrypted rows of a version (docs/design/encryption.md): per file and encrypted indexed column, the row
 * of `TableSchemas.FileTable` with its whole filter inline, in `<data>/sealed/`, written with Parquet
 * modular encryption through the source's crypto factory, every column under the indexed column's master key
 * (one write per key), so that reading any of it takes the KMS rights reading that column takes. No hsbloom
 * checksums: AES-GCM authenticates every encrypted page and footer, and every column is encrypted. Planning
 * reads the table whole into memory (`load`); an encrypted page is one ciphertext, so blocks cannot be addressed.
 */
object SealedTable {
  val Dir: String = Layout.SealedTable

  /**
   * The `column` of the plaintext file table's listing rows: one per file whose indexed columns are all sealed,
   * with no counts and an empty filter, so that the plaintext table still lists every file the version holds
   * (`SourceListing`, `IndexVerify`). No indexed column has this name.
   */
  val ListingColumn = ""

  /** The zone rows of the sealed columns (`TableSchemas.ZoneInput`, filters inline), sealed as the file rows are. */
  val ZonesDir: String = Layout.SealedZonesTable

  def path(dataPath: String): String = new Path(dataPath, Dir).toString

  def zonesPath(dataPath: String): String = new Path(dataPath, ZonesDir).toString

  /**
   * The Parquet write options that seal each master key's rows: column keys over every field, the footer under
   * `footerKey` (encrypted when `footerEncrypted`, else plaintext and signed), besides `readOptions` (the
   * source read's `parquet.*` options: its crypto factory and KMS settings). `fields`: every field of the
   * table written (the file table's, or the zone table's).
   */
  def writeOptions(masterKey: String, footerKey: String, footerEncrypted: Boolean,
      readOptions: Map[String, String], fields: Seq[String]): Map[String, String] =
    readOptions ++ Map(
      "parquet.encryption.column.keys" -> s"$masterKey:${fields.mkString(",")}",
      "parquet.encryption.footer.key" -> footerKey,
      "parquet.encryption.plaintext.footer" -> (!footerEncrypted).toString)

  /**
   * Writes `rows` (of `TableSchemas.FileTable`) whose column is a key of `masterKeys` (column -> master key) into the
   * sealed table of the version at `dataPath`, one write per master key. `options(masterKey, fields)`:
   * `writeOptions`. With `zones`, `rows` are of `TableSchemas.ZoneInput` and go to the sealed zone table.
   */
  def write(rows: DataFrame, dataPath: String, masterKeys: Map[String, String],
      options: (String, Seq[String]) => Map[String, String], zones: Boolean = false): Unit = {
    val fields = (if (zones) TableSchemas.ZoneInput else TableSchemas.FileTable).fieldNames.toSeq
    masterKeys.groupBy(_._2).toSeq.sortBy(_._1).foreach { case (key, columns) =>
      rows.where(col("column").isin(columns.keys.toSeq: _*))
        .select(fields.map(col): _*)
        .write.mode("append").options(options(key, fields))
        .option("compression", "uncompressed").option("parquet.enable.dictionary", "false")
        .parquet(if (zones) zonesPath(dataPath) else path(dataPath))
    }
  }

  /**
   * A digest of `conf`'s Parquet encryption settings: loaded versions are cached per digest, so filters one
   * session decrypted never serve a session with other settings (one without the crypto factory, say).
   */
  def cryptoSettings(conf: Configuration): String = {
    val digest = java.security.MessageDigest.getInstance("SHA-256")
    conf.iterator().asScala.map(e => e.getKey -> e.getValue)
      .filter { case (k, _) => k.startsWith("parquet.crypto.") || k.startsWith("parquet.encryption.") }
      .toSeq.sorted.foreach { case (k, v) =>
        digest.update(s"$k=$v".getBytes("UTF-8"))
        digest.update(0.toByte) // each setting ends with a NUL
      }
    java.util.HexFormat.of().formatHex(digest.digest())
  }

  /**
   * Adds the sealed rows of `dataPaths` (but `droppedFileIds`) to `slots`, each filter pinned in memory; the
   * columns whose rows could not be read (no keys, a KMS that refuses, a file that fails to decrypt), with why.
   */
  def load(dataPaths: Seq[String], droppedFileIds: Set[Long], conf: Configuration, slots: SlotsBuilder): Option[String] =
    partsOf(dataPaths, path, conf).flatMap(loadPart(_, droppedFileIds, conf, slots)).headOption

  /** The parts of the tables at `table(dataPath)` of `dataPaths` that exist, each directory's in name order. */
  private def partsOf(dataPaths: Seq[String], table: String => String, conf: Configuration): Seq[Path] = for {
    dataPath <- dataPaths
    dir = new Path(table(dataPath))
    fs = dir.getFileSystem(conf)
    if fs.exists(dir)
    part <- fs.listStatus(dir).toSeq.map(_.getPath).filter(p => !p.getName.startsWith("_") && !p.getName.startsWith("."))
      .sortBy(_.getName)
  } yield part

  /**
   * The sealed zone rows of `dataPaths` (but `droppedFileIds`), by file key, their filters pinned in `slots`'
   * reader, for `ZoneTable.load` to join with the plaintext zones; and why some could not be read (their
   * columns then have no zones: every row group of their files is kept for them). A part is read whole first.
   */
  def loadZones(dataPaths: Seq[String], droppedFileIds: Set[Long], conf: Configuration,
      slots: SlotsBuilder): (Seq[(String, ZoneTable.ZoneRow)], Option[String]) = {
    val problems = Seq.newBuilder[String]
    val zones = partsOf(dataPaths, zonesPath, conf).flatMap { part =>
      readRows(part, conf) match {
        case Left(why) => problems += why; Nil
        case Right(rows) => rows.filterNot(r => droppedFileIds.contains(r.getLong("file_id", 0))).map { r =>
          val member = bitsetOf(r.getBinary("filter", 0).getBytes).map(bits => FilterBlocks.Member(slots.pinned(bits), 0))
          FileKey.listed(r.getString("file_path", 0)) -> ZoneTable.ZoneRow(r.getLong("file_size", 0),
            r.getLong("file_mtime", 0), r.getString("column", 0), r.getInteger("row_group", 0),
            r.getInteger("row_groups", 0), r.getLong("zone_start", 0), r.getLong("zone_length", 0),
            IndexData.ColumnEntry(r.getLong("num_rows", 0), r.getLong("num_nulls", 0), member, slots.reader))
        }
      }
    }
    (zones, problems.result().headOption)
  }

  /** The bitset of a whole serialized filter; None when it does not parse (its file or zone is always read). */
  private def bitsetOf(filter: Array[Byte]): Option[Array[Byte]] = try {
    val header = Sbbf.parseHeader(filter)
    val fits = header.numBytes > 0 && header.numBytes % 32 == 0 &&
      header.headerLength.toLong + header.numBytes <= filter.length
    if (!fits) None else Some(java.util.Arrays.copyOfRange(filter, header.headerLength, header.headerLength + header.numBytes))
  } catch { case _: SbbfFormatException | _: IndexOutOfBoundsException => None }

  /**
   * The (file id, column, rows) of each row the sealed table of `dataPath` holds (none: no table); Left why it
   * cannot be read.
   */
  def held(dataPath: String, conf: Configuration): Either[String, Seq[(Long, String, Long)]] = {
    partsOf(Seq(dataPath), path, conf).foldLeft[Either[String, Seq[(Long, String, Long)]]](Right(Nil)) { (done, part) =>
      done.flatMap(d => readRows(part, conf).map(rows => d ++ rows.map(r =>
        (r.getLong("file_id", 0), r.getString("column", 0), r.getLong("num_rows", 0)))))
    }
  }

  /** Whether `conf` names a crypto factory: without one no sealed part can be read (a session without keys). */
  def hasKeys(conf: Configuration): Boolean = Option(conf.get("parquet.crypto.factory.class")).exists(_.trim.nonEmpty)

  /** Whether the version at `dataPath` has a sealed zone table. */
  def hasZones(dataPath: String, conf: Configuration): Boolean = {
    val dir = new Path(zonesPath(dataPath))
    dir.getFileSystem(conf).exists(dir)
  }

  /**
   * `IndexVerify`'s reading of the sealed zone table of `dataPath` with `conf`'s keys: every part read whole
   * (AES-GCM authenticates it), every zone filter parses, and each (file id, column)'s zones describe its row
   * groups once each and add up to the rows of its sealed file row (`fileRows`: `held`'s, but `dropped`). As
   * (file, problem); empty when it checks out.
   */
  def zoneProblems(dataPath: String, conf: Configuration, dropped: Set[Long],
      fileRows: Map[(Long, String), Long]): Seq[(Path, String)] = {
    val problems = Seq.newBuilder[(Path, String)]
    val zones = mutable.HashMap[(Long, String), mutable.ArrayBuffer[(Int, Int, Long)]]()
    var badFilters = 0
    partsOf(Seq(dataPath), zonesPath, conf).foreach { part =>
      readRows(part, conf) match {
        case Left(why) => problems += part -> s"the sealed zone table part cannot be read with this session's keys ($why)"
        case Right(rows) => rows.filterNot(r => dropped.contains(r.getLong("file_id", 0))).foreach { r =>
          if (bitsetOf(r.getBinary("filter", 0).getBytes).isEmpty) badFilters += 1
          zones.getOrElseUpdate((r.getLong("file_id", 0), r.getString("column", 0)), mutable.ArrayBuffer()) +=
            ((r.getInteger("row_group", 0), r.getInteger("row_groups", 0), r.getLong("num_rows", 0)))
        }
      }
    }
    val table = new Path(zonesPath(dataPath))
    if (badFilters > 0) problems += table -> s"$badFilters zone filters of the sealed zone table do not parse"
    val unwhole = zones.toSeq.sortBy(_._1).collect { case ((id, column), rs) if {
      val n = rs.head._2
      !(n > 0 && rs.forall(_._2 == n) && rs.map(_._1).sorted == (0 until n) &&
        fileRows.get((id, column)).contains(rs.map(_._3).sum))
    } => s"$id/$column" }
    if (unwhole.nonEmpty) {
      problems += table -> (s"the zones of ${unwhole.size} (file id/column) pairs do not describe their file's row " +
        s"groups once each, adding up to its rows, for example ${unwhole.take(5).mkString(", ")}")
    }
    problems.result()
  }

  /** Every row of `part`, read whole with `conf`'s keys; Left why it cannot be (first line of the error). */
  private def readRows(part: Path, conf: Configuration): Either[String, Seq[org.apache.parquet.example.data.Group]] = {
    val rows = scala.collection.mutable.ArrayBuffer[org.apache.parquet.example.data.Group]()
    try {
      val reader = ParquetReader.builder(new GroupReadSupport(), part).withConf(conf).build()
      try {
        var row = reader.read()
        while (row != null) { rows += row; row = reader.read() }
      } finally reader.close()
      Right(rows.toSeq)
    } catch {
      case NonFatal(e) => Left(Option(e.getMessage).getOrElse(e.getClass.getSimpleName).linesIterator.toList.headOption
        .getOrElse(e.getClass.getSimpleName))
    }
  }

  private def loadPart(part: Path, droppedFileIds: Set[Long], conf: Configuration, slots: SlotsBuilder): Option[String] = {
    // Read whole before any row is added: a part is added completely or not at all.
    val rows = readRows(part, conf).fold(why => return Some(why), identity)
    rows.foreach { r =>
      if (!droppedFileIds.contains(r.getLong("file_id", 0))) {
        val bitset = bitsetOf(r.getBinary("filter", 0).getBytes)
        slots.addSealed(r.getString("file_path", 0), r.getLong("file_size", 0), r.getLong("file_mtime", 0),
          r.getString("column", 0), r.getLong("num_rows", 0), r.getLong("num_nulls", 0), bitset)
      }
    }
    None
  }
}
