package hsbloom.build

import java.io.ByteArrayInputStream
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.parquet.hadoop.metadata.BlockMetaData

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

  private val Magic = "PAR1".getBytes(StandardCharsets.US_ASCII)

  /**
   * The row groups a reader of the block `[blockStart, blockStart + blockLength)`
   * of `path` reads, in file order, with the file's number of row groups; None
   * when they cannot be known for sure (not a plain Parquet footer, an
   * encrypted one, another size than listed, a range that does not select
   * its own row group alone).
   */
  def ofBlock(path: Path, conf: Configuration, fileSize: Long, blockStart: Long, blockLength: Long)
      : Option[(Int, IndexedSeq[Group])] = try {
    val footer = footerBytes(path, conf, fileSize)
    footer.flatMap { bytes =>
      // Parsed as parquet-java's reader parses it: its options (message size limits), the footer's length.
      val converter = new ParquetMetadataConverter(HadoopReadOptions.builder(conf, path).build())
      def blocks(filter: ParquetMetadataConverter.MetadataFilter): Seq[BlockMetaData] = converter
        .readParquetMetadata(new ByteArrayInputStream(bytes), filter, null, false, bytes.length).getBlocks.asScala.toSeq
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
    }
  } catch {
    case NonFatal(_) => None
  }

  /** The footer of an unencrypted Parquet file of `fileSize` bytes; None when it is not one. */
  private def footerBytes(path: Path, conf: Configuration, fileSize: Long): Option[Array[Byte]] = {
    val fs = path.getFileSystem(conf)
    if (fileSize < 12 || fs.getFileStatus(path).getLen != fileSize) return None
    val in = fs.open(path)
    try {
      val tail = new Array[Byte](8)
      in.readFully(fileSize - 8, tail)
      if (!java.util.Arrays.equals(tail.slice(4, 8), Magic)) return None
      val length = ByteBuffer.wrap(tail, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt
      if (length <= 0 || length > fileSize - 12) return None
      val bytes = new Array[Byte](length)
      in.readFully(fileSize - 8 - length, bytes)
      Some(bytes)
    } finally in.close()
  }
}
