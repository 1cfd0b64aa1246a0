package hsbloom.index

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.Row

import hsbloom.format.{Checksums, TableSchemas}
import hsbloom.sbbf.Sbbf

/**
 * Whole filters read back from their blocks (`FilterBlocks`), the one place a
 * version stores its file filters: for a refresh that copies rows into a new
 * version, `verify_index`, and tests that compare them with parquet-java's.
 * A filter comes back in the Parquet serialization (the header of its size,
 * then its bitset), byte for byte the one the build made, and its
 * `filter_checksum` is over exactly those bytes.
 */
object StoredFilters {
  /**
   * The stripes of `group` read whole, as stored (`FilterBlocks`: each
   * stripe's block rows, then its checksum), with the indexes of the stripes
   * that fail their checksums (empty when every stripe is intact).
   */
  def readGroup(group: FilterBlocks.Group, conf: Configuration): (Array[Byte], Seq[Int]) = {
    val bytes = new Array[Byte](Math.toIntExact(group.storedBytes))
    val in = group.file.getFileSystem(conf).open(group.file)
    try in.readFully(group.offset, bytes) finally in.close()
    val damaged = (0 until group.numStripes).filter { s =>
      val at = Math.toIntExact(group.stripeOffset(s) - group.offset)
      val dataBytes = group.stripeDataBytes(s)
      val stored = java.nio.ByteBuffer.wrap(bytes, at + dataBytes, Checksums.StripeChecksumBytes).getLong
      stored != Checksums.stripe(bytes, at, dataBytes, group.file.getName, group.stripeOffset(s))
    }
    (bytes, damaged)
  }

  /** The serialization of member `position` of `group`, from the group's stored bytes (`readGroup`). */
  def filterOf(group: FilterBlocks.Group, bytes: Array[Byte], position: Int): Array[Byte] = {
    val header = Sbbf.header(group.bitsetBytes)
    val out = new Array[Byte](header.length + group.bitsetBytes)
    System.arraycopy(header, 0, out, 0, header.length)
    var b = 0
    while (b < group.numBlocks) {
      val at = group.stripeOffset(group.stripeOf(b)) - group.offset + group.inStripe(b, position)
      System.arraycopy(bytes, at.toInt, out, header.length + b * 32, 32)
      b += 1
    }
    out
  }

  /**
   * Reads filters of stored file-table rows, holding one group's block rows
   * at a time (a group's rows are written next to each other, so each group
   * is read once).
   */
  final class Reader(conf: Configuration) {
    private var held: Option[(FilterBlocks.Group, Array[Byte])] = None

    /**
     * The filter of `row`, a row of `TableSchemas.StoredFileTable` read
     * from the table part `part` of `dataPath`, after checking the row, its
     * group's block rows and the filter against their checksums; throws an
     * IllegalStateException naming the damaged file otherwise. Empty for a
     * filter that did not parse when it was written (it has no blocks).
     */
    def verified(row: Row, part: Path, dataPath: String): Array[Byte] = {
      val s = TableSchemas.StoredFileTable
      val (filterChecksumAt, rowChecksumAt) = (s.fieldIndex(Checksums.FilterChecksum), s.fieldIndex(Checksums.RowChecksum))
      if (row.isNullAt(filterChecksumAt) || row.isNullAt(rowChecksumAt)) {
        throw new OlderLayoutException(s"index table file $part has no checksums (written by an older hsbloom); " +
          "refresh the index with mode='full', which rebuilds from the source")
      }
      def field[T](name: String): T = row.getAs[T](s.fieldIndex(name))
      val fields = Checksums.RowFields(field[Long]("file_id"), field[String]("file_path"), field[Long]("file_size"),
        field[Long]("file_mtime"), field[String]("column"), field[Long]("num_rows"), field[Long]("num_nulls"),
        field[String]("blocks_file"), field[Long]("blocks_offset"), field[Int]("blocks_count"),
        field[Int]("blocks_position"), field[Int]("bitset_bytes"), row.getLong(filterChecksumAt))
      def damaged(file: Path, what: String): Nothing = throw new IllegalStateException(s"damaged index file $file: " +
        s"$what (file ${fields.path}, column ${fields.column}); refresh the index with mode='full', which rebuilds " +
        "from the source")
      if (fields.checksum(Checksums.directorySeed(dataPath)) != row.getLong(rowChecksumAt)) {
        damaged(part, "a row fails its checksum")
      }
      val filter = if (fields.blocksCount == 0) Array.emptyByteArray else {
        val group = FilterBlocks.Group(0, new Path(IndexTables.blocksPath(dataPath), fields.blocksFile),
          fields.blocksOffset, fields.blocksCount, fields.bitsetBytes)
        val bytes = held.filter(_._1 == group).map(_._2).getOrElse {
          val (read, bad) = try readGroup(group, conf) catch {
            case e: java.io.IOException => damaged(group.file, s"the filter group at offset ${group.offset} cannot be read ($e)")
          }
          if (bad.nonEmpty) damaged(group.file, s"stripe ${bad.head} of the filter group at offset ${group.offset} " +
            "fails its checksum")
          held = Some(group -> read)
          read
        }
        filterOf(group, bytes, fields.blocksPosition)
      }
      if (Checksums.xxh64(filter, 0L) != fields.filterChecksum) damaged(part, "a filter fails its checksum")
      filter
    }
  }
}
