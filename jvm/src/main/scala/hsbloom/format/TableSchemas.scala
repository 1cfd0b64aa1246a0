package hsbloom.format

import org.apache.spark.sql.types._

/**
 * The schemas of an index version's tables (docs/design/format.md): the rows the build and a refresh make, and
 * the rows as stored, a filter in its blocks (`index.FilterBlocks`) and every row with its checksums (`Checksums`).
 * The tables' writers and readers are `hsbloom.index`'s (`IndexTables`, `ZoneTable`, `SealedTable`, ...); a change
 * here is a change of the stored format, which the golden indexes (tests/golden) catch.
 */
object TableSchemas {
  /** A file-level row as it is made: the file, the column, its counts and its whole filter. */
  val FileTable: StructType = new StructType()
    .add("file_id", LongType, nullable = false)
    .add("file_path", StringType, nullable = false)
    .add("file_size", LongType, nullable = false)
    .add("file_mtime", LongType, nullable = false)
    .add("column", StringType, nullable = false)
    .add("num_rows", LongType, nullable = false)
    .add("num_nulls", LongType, nullable = false)
    .add("ndv", LongType, nullable = false)
    .add("filter", BinaryType, nullable = false)

  /** A global filter's chunk: one row per chunk of a column's filter. */
  val GlobalTable: StructType = new StructType()
    .add("column", StringType, nullable = false)
    .add("chunk_index", IntegerType, nullable = false)
    .add("num_chunks", IntegerType, nullable = false)
    .add("filter_bytes", LongType, nullable = false)
    .add("chunk", BinaryType, nullable = false)

  /** Where the serialized filter is in a row of `FileTable`; the stored table has no such column. */
  val FilterOrdinal: Int = FileTable.fieldIndex("filter")

  /**
   * How a row's filter was made: "hashed" from the column's values, or "adopted" from the
   * source file's own Parquet Bloom filters (docs/design/adoption.md). Optional in rows given
   * to `IndexTables.writeFileTable` (absent: "hashed").
   */
  val FilterSource = "filter_source"
  val HashedFilter = "hashed"

  /** The columns each stored file-table row gets besides `FileTable` (less its `filter`): its filter's blocks. */
  val BlockColumns: Seq[StructField] = Seq(
    StructField("blocks_file", StringType, nullable = false),
    StructField("blocks_offset", LongType, nullable = false),
    StructField("blocks_count", IntegerType, nullable = false),
    StructField("blocks_position", IntegerType, nullable = false),
    StructField("bitset_bytes", IntegerType, nullable = false))

  /**
   * The file-level table as stored: `FileTable` without the filter (stored once, in its blocks), the
   * filter's block address and size (`BlockColumns`), the checksums, and `FilterSource`.
   */
  val StoredFileTable: StructType = StructType(FileTable.fields.filterNot(_.name == "filter") ++
    BlockColumns ++ Checksums.FileTableColumns).add(FilterSource, StringType, nullable = true)

  /** The global table as stored: `GlobalTable` and each chunk's checksum (`Checksums.chunk`). */
  val StoredGlobalTable: StructType = GlobalTable.add(Checksums.ChunkChecksum, LongType, nullable = false)

  /** What a zone row has besides its file-table fields: the row group's place and byte range. */
  val ZoneColumns: Seq[StructField] = Seq(
    StructField("row_group", IntegerType, nullable = false),
    StructField("row_groups", IntegerType, nullable = false),
    StructField("zone_start", LongType, nullable = false),
    StructField("zone_length", LongType, nullable = false))
  val ZoneChecksum = "zone_checksum"

  /** A zone row as the build makes it: a file-table row of one row group, then `ZoneColumns`. */
  val ZoneInput: StructType = StructType(FileTable.fields ++ ZoneColumns)
  /**
   * The zone table as stored: `ZoneInput` without the filter (stored once, in its blocks), the blocks' address,
   * the file-table checksums, and the zone checksum.
   */
  val StoredZoneTable: StructType = StructType(ZoneInput.fields.filterNot(_.name == "filter") ++ BlockColumns ++
    Checksums.FileTableColumns)
    .add(ZoneChecksum, LongType, nullable = false)
}
