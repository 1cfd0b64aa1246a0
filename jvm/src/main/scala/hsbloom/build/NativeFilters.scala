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

/** A column's file (or zone) filter taken from the file's own filters, with the counts from its footer. */
final case class AdoptedColumn(rows: Long, nulls: Long, ndv: Long, filter: Array[Byte])

/** A file's adopted entries: per column its file filter, and its zones when the index has them (else empty). */
final case class AdoptedFile(columns: Seq[AdoptedColumn], zones: Seq[AdoptedZone])

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
 *
 * With zones (`zoneFpp` given), every row group's filter must also make its
 * zone's filter (`NativeZones`), and the row groups' ranges must be provable.
 * The file filter then need not meet the target when `weakFileFilters`: it
 * is kept as the combined filter, at the fpp it has, and the file's zones
 * decide (a zone that may match implies the combined filter may too).
 */
object NativeFilters {
  /** The file's columns adopted (in the order of `names`), with its zones, or why it is hashed instead. */
  def read(file: ListedFile, names: Seq[String], types: Seq[DataType], fpp: Double, zoneFpp: Option[Double],
      weakFileFilters: Boolean, conf: Configuration): Either[String, AdoptedFile] = try {
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
      val ranges = zoneFpp.map(_ => NativeZones.ranges(path, conf, file.size, groups).fold(why => return Left(why), identity))
      val columns = chunks.map { columnChunks =>
        val nulls = columnChunks.map { c =>
          val stats: org.apache.parquet.column.statistics.Statistics[_] = c.getStatistics
          if (stats == null || !stats.isNumNullsSet) return Left("no null count in the footer")
          stats.getNumNulls
        }
        val natives = groups.zip(columnChunks).map { case (g, c) => nativeFilter(reader, g, c).fold(why => return Left(why), identity) }
        val zones = zoneFpp.toSeq.flatMap { zfpp =>
          groups.indices.map(i => NativeZones.adopt(natives(i), groups(i).getRowCount, nulls(i), zfpp).fold(why => return Left(why), identity))
        }
        val whole = fileFilter(natives.map(_.getOrElse(return Left("no native filter in every row group"))),
          groups.map(_.getRowCount).sum, nulls.sum, fpp, zoneFpp.isDefined,
          zoneFpp.isDefined && weakFileFilters).fold(why => return Left(why), identity)
        whole -> zones
      }
      val zones = ranges.toSeq.flatMap(_.zipWithIndex.map { case (g, i) => AdoptedZone(g, groups.size, columns.map(_._2(i))) })
      Right(AdoptedFile(columns.map(_._1), zones))
    } finally reader.close()
  } catch {
    case NonFatal(e) => Left(s"footer or filter not readable (${e.getClass.getSimpleName})")
  }

  /** A column chunk's native filter (None when it has none), or why it cannot be used. */
  private def nativeFilter(reader: ParquetFileReader, group: BlockMetaData, chunk: ColumnChunkMetaData)
      : Either[String, Option[Sbbf]] = {
    val native = reader.getBloomFilterDataReader(group).readBloomFilter(chunk)
    if (native == null) return Right(None)
    val bitset = new ByteArrayOutputStream(native.getBitsetSize)
    native.writeTo(bitset)
    try Right(Some(Sbbf.fromBitset(bitset.toByteArray))) catch {
      case _: SbbfFormatException => Left("native filter size not a power of two")
    }
  }

  /**
   * One column's file filter: its row groups' filters combined, folded to the target fpp when it
   * meets it; otherwise refused, or (`weak`, zones deciding) kept as combined.
   */
  private def fileFilter(filters: Seq[Sbbf], rows: Long, nulls: Long, fpp: Double, zones: Boolean, weak: Boolean)
      : Either[String, AdoptedColumn] = {
    val combined = SbbfUnion.of(filters)
    val strong = combined.estimatedFpp <= fpp
    if (!strong && !weak) return Left(if (zones) "row-group filters' OR weaker than the target fpp"
      else "native filter weaker than the target fpp")
    val ndv = math.min(combined.estimatedNdv, rows - nulls)
    Right(AdoptedColumn(rows, nulls, ndv, (if (strong) combined.foldToTargetFpp(fpp) else combined).toBytes))
  }

  private def chunkOf(group: BlockMetaData, name: String): Option[ColumnChunkMetaData] =
    group.getColumns.asScala.find(c => c.getPath.toArray.toSeq == Seq(name))
}
