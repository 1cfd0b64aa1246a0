package hsbloom.index

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.column.{ColumnDescriptor, ColumnReader}
import org.apache.parquet.column.impl.ColumnReadStoreImpl
import org.apache.parquet.column.page.PageReadStore
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.io.api.{Binary, Converter, GroupConverter, PrimitiveConverter}
import org.apache.parquet.schema.{MessageType, Type}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

import hsbloom.format.Checksums

/**
 * The rows of one Parquet part of an index table (the file table, the zone
 * table), `columns` of them only, read with parquet-java's column readers:
 * no record assembly and no object per row, so loading an index version
 * costs its values, not a `Group` and a string per field
 * (docs/design/scale.md). `next()` moves to the next row; `long`, `int`,
 * `string` and `checksum` read the current one, by position in `columns`.
 *
 * A row with a null in one of `columns` (no hsbloom writer writes one) has
 * `hasNull`; its values are not to be used.
 */
private[hsbloom] final class TableRows private (reader: ParquetFileReader, requested: MessageType,
    columns: IndexedSeq[TableRows.Column]) extends AutoCloseable {
  import TableRows._

  private val descriptors: Array[ColumnDescriptor] =
    columns.map(c => requested.getColumnDescription(Array(c.name))).toArray
  private val maxDefinitionLevels = descriptors.map(_.getMaxDefinitionLevel)
  private val kinds: Array[Int] = columns.map(c => KindCodes(c.kind)).toArray
  private val createdBy = reader.getFooter.getFileMetaData.getCreatedBy
  private var pages: PageReadStore = null
  private var readers: Array[ColumnReader] = Array.empty
  private var left = 0L // rows of the current row group not read yet
  private val longs = new Array[Long](columns.size)
  private val binaries = new Array[Binary](columns.size)
  // Per string column the last value decoded (its bytes and its string): the rows of one file, column or
  // side file follow each other, so most rows decode no string at all.
  private val lastBytes = new Array[Binary](columns.size)
  private val lastString = new Array[String](columns.size)
  private var nulls = false

  /** Moves to the next row; false after the last. */
  def next(): Boolean = {
    while (left == 0) {
      releasePages()
      pages = reader.readNextRowGroup()
      if (pages == null) return false
      left = pages.getRowCount
      val store = new ColumnReadStoreImpl(pages, Unconverted, requested, createdBy)
      readers = descriptors.map(store.getColumnReader)
    }
    nulls = false
    var i = 0
    while (i < readers.length) {
      val r = readers(i)
      if (r.getCurrentDefinitionLevel < maxDefinitionLevels(i)) {
        nulls = true
        binaries(i) = null
      } else kinds(i) match {
        case 0 => longs(i) = r.getLong
        case 1 => longs(i) = r.getInteger.toLong
        case _ => binaries(i) = r.getBinary
      }
      r.consume()
      i += 1
    }
    left -= 1
    true
  }

  def hasNull: Boolean = nulls
  def long(i: Int): Long = longs(i)
  def int(i: Int): Int = longs(i).toInt

  /** Column `i` as a string; the same object as the last row's when its bytes are the same. */
  def string(i: Int): String = {
    val b = binaries(i)
    if (b == null) return null
    if (lastBytes(i) == null || !lastBytes(i).equals(b)) {
      lastBytes(i) = Binary.fromConstantByteArray(b.getBytes) // a copy: the page's buffer is not ours to keep
      lastString(i) = b.toStringUsingUTF8
    }
    lastString(i)
  }

  /**
   * The checksum of the first `count` columns of the row as `Checksums.RowFields.checksum` computes it (the
   * columns in its field order), written into `out` (reused) from the stored bytes: no string is decoded.
   */
  def checksum(count: Int, out: Checksums.RowBytes, directorySeed: Long): Long = {
    out.clear()
    var i = 0
    while (i < count) {
      kinds(i) match {
        case 0 => out.long(longs(i))
        case 1 => out.int(longs(i).toInt)
        case _ => out.bytes(binaries(i).toByteBuffer)
      }
      i += 1
    }
    out.checksum(directorySeed)
  }

  /**
   * Frees the current row group's pages: since Parquet 1.14 a `PageReadStore` is closeable (it releases the
   * buffers its pages were read into); in 1.13 (Spark 3.5's) it has no `close`.
   */
  private def releasePages(): Unit = pages match {
    case closeable: AutoCloseable => closeable.close()
    case _ =>
  }

  override def close(): Unit = try releasePages() finally reader.close()
}

private[hsbloom] object TableRows {
  sealed trait Kind
  case object Int64 extends Kind
  case object Int32 extends Kind
  case object Utf8 extends Kind

  /** A column to read, and how it is stored (a column stored otherwise makes the part unreadable). */
  final case class Column(name: String, kind: Kind)

  private val KindCodes: Map[Kind, Int] = Map(Int64 -> 0, Int32 -> 1, Utf8 -> 2) // a switch per value, not a match
  private val Stored: Map[Kind, PrimitiveTypeName] =
    Map(Int64 -> PrimitiveTypeName.INT64, Int32 -> PrimitiveTypeName.INT32, Utf8 -> PrimitiveTypeName.BINARY)

  /**
   * Opens `part` to read `columns`, after `check` saw its schema (it throws to refuse the part). Throws,
   * naming the part and the column, when a column is missing, repeated or stored as another type.
   */
  def open(part: Path, conf: Configuration, columns: Seq[Column], check: MessageType => Unit = _ => ()): TableRows = {
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(part, conf))
    try {
      val schema = reader.getFooter.getFileMetaData.getSchema
      check(schema)
      val fields = columns.map { c =>
        if (!schema.containsField(c.name)) {
          throw new IllegalStateException(s"index table file $part has no column '${c.name}'")
        }
        val field = schema.getType(schema.getFieldIndex(c.name))
        if (!field.isPrimitive || field.isRepetition(Type.Repetition.REPEATED) ||
            field.asPrimitiveType.getPrimitiveTypeName != Stored(c.kind)) {
          throw new IllegalStateException(s"index table file $part stores column '${c.name}' as $field, " +
            s"not ${Stored(c.kind)}")
        }
        field
      }
      val requested = new MessageType(schema.getName, fields: _*)
      reader.setRequestedSchema(requested)
      new TableRows(reader, requested, columns.toIndexedSeq)
    } catch {
      case e: Throwable => reader.close(); throw e
    }
  }

  /** Column readers want a converter per column; these rows read values directly, so it is never called. */
  private object Unconverted extends GroupConverter {
    private val primitive = new PrimitiveConverter {}
    override def getConverter(fieldIndex: Int): Converter = primitive
    override def start(): Unit = ()
    override def end(): Unit = ()
  }
}
