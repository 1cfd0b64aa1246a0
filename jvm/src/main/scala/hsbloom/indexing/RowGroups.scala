package hsbloom.indexing

import java.io.ByteArrayInputStream

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ParquetMetadata}

import hsbloom.shim.CollectionConverters._

/**
 * The row groups of a Parquet file as Spark's reader sees them, for zones
 * (docs/design/zones.md).
 *
 * Spark's Parquet reader reads, for a split `[start, start + length)`, the row
 * groups parquet-java's range filter keeps (those whose midpoint lies in the
 * split). A zone's byte range is `[first column chunk offset, + compressed
 * size)`; it is used only when the same filter, applied to the same footer
 * bytes, keeps exactly that row group for exactly that range, so a split of
 * a zone's range reads that row group and nothing else.
 */
object RowGroups {
  /** A row group: its place among the file's row groups, its byte range, and its rows. */
  final case class Group(ordinal: Int, start: Long, length: Long, rows: Long)

  /**
   * The row groups a reader of the block `[blockStart, blockStart + blockLength)`
   * of `path` reads, in file order, with the file's number of row groups; None
   * when they cannot be known for sure (not a Parquet footer, an encrypted
   * one or encrypted columns that `conf`'s crypto factory cannot decrypt,
   * another size than listed, a range that does not select its own row
   * group alone).
   */
  def ofBlock(path: Path, conf: Configuration, fileSize: Long, blockStart: Long, blockLength: Long)
      : Option[(Int, IndexedSeq[Group])] = try {
    ParquetTail.open(path, conf, fileSize).toOption.flatMap { tail =>
      try ofFooter(tail.footer, path, conf, blockStart, blockLength) finally tail.close()
    }.orElse {
      if (conf.getTrimmed(EncryptedColumns.CryptoFactory, "").isEmpty) None
      else ofEncrypted(path, conf, blockStart, blockLength)
    }
  } catch {
    case NonFatal(_) => None
  }

  /**
   * As `ofBlock`, for a file with encrypted columns or footer (docs/design/encryption.md): its footer read and
   * decrypted by parquet-java's reader with `conf`'s crypto factory, once per range filter, as Spark's reader
   * opens it (so the same row groups are kept). None when it cannot be (no keys).
   */
  private def ofEncrypted(path: Path, conf: Configuration, blockStart: Long, blockLength: Long)
      : Option[(Int, IndexedSeq[Group])] = {
    val file = org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(path, conf)
    provableGroups(blockStart, blockLength) { filter =>
      val reader = org.apache.parquet.hadoop.ParquetFileReader.open(file,
        HadoopReadOptions.builder(conf, path).withMetadataFilter(filter).build())
      try reader.getFooter.getBlocks.asScala.toSeq finally reader.close()
    }
  }

  /** As `ofBlock`, from the file's footer bytes `footer` (already read: `ParquetTail`). */
  def ofFooter(footer: Array[Byte], path: Path, conf: Configuration, blockStart: Long, blockLength: Long)
      : Option[(Int, IndexedSeq[Group])] =
    provableGroups(blockStart, blockLength)(filter => parse(footer, path, conf, filter).getBlocks.asScala.toSeq)

  /** The groups of the block, when `blocks` (the footer's row groups a range filter keeps) prove them. */
  private def provableGroups(blockStart: Long, blockLength: Long)(
      blocks: ParquetMetadataConverter.MetadataFilter => Seq[BlockMetaData]): Option[(Int, IndexedSeq[Group])] = try {
    val all = blocks(ParquetMetadataConverter.NO_FILTER)
    val ordinals = all.map(_.getStartingPos).zipWithIndex.toMap
    val read = blocks(ParquetMetadataConverter.range(blockStart, blockStart + blockLength))
    val groups = read.map { b =>
      Group(ordinals.getOrElse(b.getStartingPos, -1), b.getStartingPos, b.getCompressedSize, b.getRowCount)
    }.toIndexedSeq
    val provable = ordinals.size == all.size && groups.forall { g =>
      g.ordinal >= 0 && g.length > 0 && {
        val alone = blocks(ParquetMetadataConverter.range(g.start, g.start + g.length))
        alone.size == 1 && alone.head.getStartingPos == g.start
      }
    }
    if (provable) Some(all.size -> groups) else None
  } catch {
    case NonFatal(_) => None
  }

  /** The footer bytes parsed as parquet-java's reader parses them: its options (message size limits), `filter`. */
  def parse(footer: Array[Byte], path: Path, conf: Configuration,
      filter: ParquetMetadataConverter.MetadataFilter = ParquetMetadataConverter.NO_FILTER): ParquetMetadata =
    new ParquetMetadataConverter(HadoopReadOptions.builder(conf, path).build())
      .readParquetMetadata(new ByteArrayInputStream(footer), filter, null, false, footer.length)
}
