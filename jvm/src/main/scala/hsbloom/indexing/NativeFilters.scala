package hsbloom.indexing

import java.io.ByteArrayInputStream

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.format.Util
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnChunkMetaData, FileMetaData}
import org.apache.spark.sql.types.DataType

import hsbloom.format.SourceFile
import hsbloom.sbbf.{Sbbf, SbbfFormatException, SbbfUnion}
import hsbloom.shim.CollectionConverters._
import hsbloom.shim.ParquetFooters

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
 * With `zones`, every row group's filter must also make its
 * zone's filter (`NativeZones`), and the row groups' ranges must be provable.
 * The file filter then need not meet the target when `weakFileFilters`: it
 * is kept as the combined filter, at the fpp it has, and the file's zones (at `sharedFpp`)
 * decide (a zone that may match implies the combined filter may too).
 */
object NativeFilters {
  /**
   * The file's columns adopted (in the order of `names`), with its zones, or why it is hashed instead
   * (`buffered`: the values per column a hashed build buffers before it builds at a large size). The
   * footer is read once (`ParquetTail`), each filter with one ranged read, one column's filters combined as
   * they are read (so one row group's native filter is held at a time).
   */
  def read(file: SourceFile, names: Seq[String], types: Seq[DataType], fileFpp: Double, sharedFpp: Double,
      zones: Boolean, weakFileFilters: Boolean, buffered: Long, conf: Configuration): Either[String, AdoptedFile] = try {
    val path = new Path(file.path)
    val tail = ParquetTail.open(path, conf, file.size).fold(why => return Left(why), identity)
    try {
      val footer = RowGroups.parse(tail.footer, path, conf)
      // Nothing of an encrypted file is adopted: its filters may be encrypted with their columns' keys, and an
      // index stores them in plaintext (create and refresh refuse such columns before the build: EncryptedColumns).
      if (footer.getFileMetaData.getEncryptionType != FileMetaData.EncryptionType.UNENCRYPTED) {
        return Left("encrypted columns")
      }
      val schema = footer.getFileMetaData.getSchema
      val groups = footer.getBlocks.asScala.toIndexedSeq
      if (groups.isEmpty) return Left("no row groups")
      val chunks = names.zip(types).map { case (name, dataType) =>
        val sameName = schema.getFields.asScala.filter(_.getName.equalsIgnoreCase(name))
        if (sameName.size != 1 || sameName.head.getName != name) return Left("column not stored under its name alone")
        NativeTypes.mismatch(sameName.head, dataType).foreach(why => return Left(why))
        groups.map(g => chunkOf(g, name).getOrElse(return Left("column missing from a row group")))
      }
      if (chunks.flatten.exists(_.isEncrypted)) return Left("encrypted columns")
      val ranges = if (!zones) None else Some(
        NativeZones.ranges(tail.footer, path, conf, file.size, groups).fold(why => return Left(why), identity))
      val columns = chunks.map { columnChunks =>
        val nulls = columnChunks.map { c =>
          val stats: org.apache.parquet.column.statistics.Statistics[_] = c.getStatistics
          if (stats == null || !stats.isNumNullsSet) return Left("no null count in the footer")
          stats.getNumNulls
        }
        // Row group by row group: its zone, and the file's union so far (SbbfUnion.add: exactly SbbfUnion.of).
        var combined: Option[Sbbf] = None
        var everyGroupHasOne = true
        val columnZones = groups.indices.flatMap { i =>
          val native = nativeFilter(tail, columnChunks(i)).fold(why => return Left(why), identity)
          val zone = if (!zones) None else Some(
            NativeZones.adopt(native, groups(i).getRowCount, nulls(i), sharedFpp).fold(why => return Left(why), identity))
          native match {
            case Some(f) => combined = Some(combined.fold(f)(SbbfUnion.add(_, f)))
            case None => everyGroupHasOne = false
          }
          zone
        }
        if (!everyGroupHasOne) return Left("no native filter in every row group")
        val whole = fileFilter(combined.get, groups.map(_.getRowCount).sum, nulls.sum, fileFpp, buffered,
          zones, zones && weakFileFilters).fold(why => return Left(why), identity)
        whole -> columnZones
      }
      val adoptedZones = ranges.toSeq.flatMap(_.zipWithIndex.map { case (g, i) =>
        AdoptedZone(g, groups.size, columns.map(_._2(i))) })
      Right(AdoptedFile(columns.map(_._1), adoptedZones))
    } finally tail.close()
  } catch {
    case NonFatal(e) => Left(s"footer or filter not readable (${e.getClass.getSimpleName})")
  }

  /**
   * Whether `file` carries a native filter of each column of `names` (physical names) in every row group,
   * judged from its footer alone: what a build that cannot adopt says about its source.
   */
  def carried(file: SourceFile, names: Seq[String], conf: Configuration): Boolean = try {
    val path = new Path(file.path)
    ParquetTail.open(path, conf, file.size).toOption.exists { tail =>
      try {
        val groups = RowGroups.parse(tail.footer, path, conf).getBlocks.asScala
        groups.nonEmpty && names.forall(n => groups.forall(g => chunkOf(g, n).exists(_.getBloomFilterOffset >= 0)))
      } finally tail.close()
    }
  } catch {
    case NonFatal(_) => false
  }

  /** Bytes read for a filter header when the footer does not record the filter's length (at most 19 are needed). */
  private val HeaderBytes = 64

  /**
   * A column chunk's native filter (None when it has none, or one of another algorithm, hash or compression,
   * which parquet-java's reader does not hand out either), or why it cannot be used. One ranged read of header
   * and bitset when the footer records their length (writers since parquet-java 1.14) and the Parquet Spark ships
   * reads it (not 1.13, Spark 3.5's: `ParquetFooters`), else the header first.
   */
  private def nativeFilter(tail: ParquetTail, chunk: ColumnChunkMetaData): Either[String, Option[Sbbf]] = {
    val offset = chunk.getBloomFilterOffset
    if (offset < 0) return Right(None)
    val recorded = ParquetFooters.bloomFilterLength(chunk)
    val bytes = if (recorded > 0) tail.read(offset, recorded) else {
      val head = tail.read(offset, math.min(HeaderBytes.toLong, tail.size - offset).toInt)
      val in = new ByteArrayInputStream(head)
      val header = Util.readBloomFilterHeader(in)
      val numBytes = header.getNumBytes
      if (numBytes <= 0 || numBytes > Sbbf.MaxBytes) return Left("native filter header not readable")
      tail.read(offset, head.length - in.available() + numBytes)
    }
    val header = try Sbbf.parseHeader(bytes) catch {
      case e: SbbfFormatException if e.getMessage.startsWith("unsupported") => return Right(None)
      case _: SbbfFormatException => return Left("native filter header not readable")
    }
    try Right(Some(Sbbf.fromBitset(bytes, header.headerLength, header.numBytes))) catch {
      case _: SbbfFormatException => Left("native filter size not a power of two")
    }
  }

  /**
   * One column's file filter from its row groups' filters combined, made as the hashed build makes it
   * (`FileFilters.build`, `MapSide`). A file of up to `buffered` non-null values gets a filter sized for them,
   * folded while its fill allows: a combined filter at least that size folds exactly to it, and a smaller one
   * within the target fpp is that filter folded further, which the hashed build's folding reaches too; the
   * same bytes either way. A bigger file may be built from a large size and folded to the smallest size
   * within the fpp: the combined filter folded the same way is that filter, or a larger one that folds to it.
   * A combined filter weaker than that is refused, or (`weak`, zones deciding) kept as it is.
   */
  private def fileFilter(combined: Sbbf, rows: Long, nulls: Long, fpp: Double, buffered: Long, zones: Boolean,
      weak: Boolean): Either[String, AdoptedColumn] = {
    val nonNull = rows - nulls
    val hashedSize = Sbbf.forNdv(nonNull, fpp).numBytes
    val start =
      if (nonNull <= buffered && combined.numBytes >= hashedSize) Some(combined.foldTo(hashedSize))
      else if (combined.estimatedFpp <= fpp) Some(combined)
      else None
    start match {
      case Some(filter) =>
        val ndv = math.min(filter.estimatedNdv, nonNull)
        Right(AdoptedColumn(rows, nulls, ndv, filter.foldToTargetFpp(fpp).toBytes))
      case None if weak => Right(AdoptedColumn(rows, nulls, math.min(combined.estimatedNdv, nonNull), combined.toBytes))
      case None => Left(if (zones) "row-group filters' OR weaker than the target fpp"
        else "native filter weaker than the target fpp")
    }
  }

  private def chunkOf(group: BlockMetaData, name: String): Option[ColumnChunkMetaData] =
    group.getColumns.asScala.find(c => c.getPath.toArray.toSeq == Seq(name))
}
