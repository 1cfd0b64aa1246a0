package hsbloom.indexing

import java.io.Closeable
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, Path}

/**
 * An open Parquet file of a known size and its footer bytes, read with as few
 * reads as possible: one positioned read of the file's last `TailBytes`, which
 * holds the whole footer of a file of a few row groups (a second read only for
 * a longer footer). Further byte ranges (native Bloom filters) are read with
 * positioned reads of the same stream, so a file is opened once for its footer
 * and its filters (docs/design/adoption.md#what-a-build-reads).
 */
final class ParquetTail private (in: FSDataInputStream, val size: Long, val footer: Array[Byte],
    val encryptedFooter: Boolean) extends Closeable {
  /** `length` bytes at `offset`, in one positioned read. */
  def read(offset: Long, length: Int): Array[Byte] = {
    if (offset < 0 || length < 0 || offset + length > size) {
      throw new java.io.EOFException(s"range [$offset, +$length) outside a file of $size bytes")
    }
    val bytes = new Array[Byte](length)
    in.readFully(offset, bytes)
    bytes
  }

  override def close(): Unit = in.close()
}

object ParquetTail {
  private val Magic = "PAR1".getBytes(StandardCharsets.US_ASCII)
  /** The magic of a file whose footer is encrypted (Parquet modular encryption): unreadable without its key. */
  private val EncryptedMagic = "PARE".getBytes(StandardCharsets.US_ASCII)

  /** Why `open` gives no footer of a file whose footer is encrypted. */
  val EncryptedFooter = "encrypted footer"

  /** Bytes read at the end of a file at first: the footer of a file of tens of row groups fits. */
  val TailBytes = 64 * 1024

  /**
   * `path` opened, with its footer, when it is a Parquet file of `fileSize` bytes whose footer is plain (its
   * columns may still be encrypted: `EncryptedColumns`); else why not (`EncryptedFooter` for an encrypted one).
   * With `encrypted`, a file whose footer is encrypted is opened too (its footer bytes start with its plaintext
   * crypto metadata: `EncryptionKeys`). The caller closes it.
   */
  def open(path: Path, conf: Configuration, fileSize: Long, encrypted: Boolean = false): Either[String, ParquetTail] = {
    val fs = path.getFileSystem(conf)
    if (fs.getFileStatus(path).getLen != fileSize) return Left("file size differs from the listing")
    if (fileSize < 12) return Left("not a Parquet file")
    val in = fs.open(path)
    try {
      val tail = new Array[Byte](math.min(fileSize, TailBytes.toLong).toInt)
      in.readFully(fileSize - tail.length, tail)
      val magic = tail.takeRight(4)
      val isEncrypted = java.util.Arrays.equals(magic, EncryptedMagic)
      if (!java.util.Arrays.equals(magic, Magic) && !(encrypted && isEncrypted)) {
        in.close()
        return Left(if (isEncrypted) EncryptedFooter else "not a Parquet file")
      }
      val length = ByteBuffer.wrap(tail, tail.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt
      if (length <= 0 || length > fileSize - 12) {
        in.close()
        return Left("footer length out of range")
      }
      val footer = if (length <= tail.length - 8) {
        java.util.Arrays.copyOfRange(tail, tail.length - 8 - length, tail.length - 8)
      } else {
        val bytes = new Array[Byte](length)
        in.readFully(fileSize - 8 - length, bytes)
        bytes
      }
      Right(new ParquetTail(in, fileSize, footer, isEncrypted))
    } catch {
      case e: Throwable => in.close(); throw e
    }
  }
}
