package hsbloom.build

import java.io.ByteArrayOutputStream

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnChunkMetaData}
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.types.DataType

import hsbloom.sbbf.{Sbbf, SbbfFormatException, SbbfUnion}

/** A column's file filter taken from the file's own filters, with the counts from its footer. */
final case class AdoptedColumn(rows: Long, nulls: Long, ndv: Long, filter: Array[Byte])

/**
 * Reading a Parquet file's native SBBFs of the indexed columns and deciding
 * whether they can stand for a hashed build of the file (docs/design/adoption.md).
 * Only the footer and the filters are read, never a data page.
 *
 * A file is adopted only when, for every indexed column: the column is stored
 * under its physical name as hsbloom hashes its Spark type (`NativeTypes`);
 * every row group has a filter and a null count; the filters' sizes are powers
 * of two (so they combine exactly: `SbbfUnion`); and the combined filter's
 * estimated fpp is within the index's target. Anything else: the file is hashed from its data, and the
 * reason is returned.
 */
object NativeFilters {
  /** The file's columns adopted (in the order of `names`), or why it is hashed instead. */
  def read(file: ListedFile, names: Seq[String], types: Seq[DataType], fpp: Double, conf: Configuration)
      : Either[String, Seq[AdoptedColumn]] = try {
    val path = new Path(file.path)
    val status = path.getFileSystem(conf).getFileStatus(path)
    if (status.getLen != file.size) return Left("file size differs from the listing")
    val reader = ParquetFileReader.open(HadoopInputFile.fromStatus(status, conf))
    try {
      val schema = reader.getFooter.getFileMetaData.getSchema
      val groups = reader.getRowGroups.asScala.toSeq
      if (groups.isEmpty) return Left("no row groups")
      val chunks = names.zip(types).map { case (name, dataType) =>
        val sameName = schema.getFields.asScala.filter(_.getName.equalsIgnoreCase(name))
        if (sameName.size != 1 || sameName.head.getName != name) return Left("column not stored under its name alone")
        NativeTypes.mismatch(sameName.head, dataType).foreach(why => return Left(why))
        groups.map(g => chunkOf(g, name).getOrElse(return Left("column missing from a row group")))
      }
      val adopted = chunks.map { columnChunks =>
        adopt(reader, groups, columnChunks, fpp).fold(why => return Left(why), identity)
      }
      Right(adopted)
    } finally reader.close()
  } catch {
    case NonFatal(e) => Left(s"footer or filter not readable (${e.getClass.getSimpleName})")
  }

  /** One column's filters of every row group, combined into the file's filter. */
  private def adopt(reader: ParquetFileReader, groups: Seq[BlockMetaData], chunks: Seq[ColumnChunkMetaData],
      fpp: Double): Either[String, AdoptedColumn] = {
    val nulls = chunks.map { c =>
      val stats: org.apache.parquet.column.statistics.Statistics[_] = c.getStatistics
      if (stats == null || !stats.isNumNullsSet) return Left("no null count in the footer")
      stats.getNumNulls
    }.sum
    val filters = groups.zip(chunks).map { case (g, c) =>
      val native = reader.getBloomFilterDataReader(g).readBloomFilter(c)
      if (native == null) return Left("no native filter in every row group")
      val bitset = new ByteArrayOutputStream(native.getBitsetSize)
      native.writeTo(bitset)
      try Sbbf.fromBitset(bitset.toByteArray) catch {
        case _: SbbfFormatException => return Left("native filter size not a power of two")
      }
    }
    val combined = SbbfUnion.of(filters)
    if (combined.estimatedFpp > fpp) return Left("native filter weaker than the target fpp")
    val rows = groups.map(_.getRowCount).sum
    val ndv = math.min(combined.estimatedNdv, rows - nulls)
    Right(AdoptedColumn(rows, nulls, ndv, combined.foldToTargetFpp(fpp).toBytes))
  }

  private def chunkOf(group: BlockMetaData, name: String): Option[ColumnChunkMetaData] =
    group.getColumns.asScala.find(c => c.getPath.toArray.toSeq == Seq(name))
}
