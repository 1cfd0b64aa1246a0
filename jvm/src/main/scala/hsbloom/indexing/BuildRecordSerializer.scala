package hsbloom.indexing

import java.io.{DataInputStream, DataOutputStream, EOFException, InputStream, ObjectOutputStream, OutputStream}
import java.nio.ByteBuffer

import scala.reflect.ClassTag

import org.apache.spark.serializer.{DeserializationStream, SerializationStream, Serializer, SerializerInstance}

import hsbloom.format.SourceFile
import hsbloom.shim.JarObjectInput


/**
 * The wire format of the index build's shuffle. With a global filter nearly
 * every record is a batch of 8-byte hashes on its way to a bucket; without one,
 * the bytes are the whole files' filters (about 2.2 bytes per value at the
 * default fpp of 200 files). Java serialization writes hashes a long at a time,
 * copies a filter through growing buffers and tags each object with its
 * class, which costs more than the hashing that made them. Here a key is a
 * tag and two numbers, a hash batch one bulk copy, and a whole file's result
 * its numbers and its filter as one bulk copy; the few other records (split
 * files' parts, zones, each task's distinct counters) still go through Java
 * serialization.
 */
final class BuildRecordSerializer extends Serializer with Serializable {
  override def newInstance(): SerializerInstance = new BuildRecordSerializer.Instance
}

object BuildRecordSerializer {
  private val FileKeyTag = 0
  private val BucketKeyTag = 1
  private val HashesTag = 2
  private val OtherPayloadTag = 3
  private val SketchKeyTag = 4
  private val ZoneKeyTag = 5
  private val FileResultTag = 6

  private final class Instance extends SerializerInstance {
    override def serializeStream(s: OutputStream): SerializationStream = new Writer(new DataOutputStream(s))
    override def deserializeStream(s: InputStream): DeserializationStream = new Reader(new DataInputStream(s))
    override def serialize[T: ClassTag](t: T): ByteBuffer =
      throw new UnsupportedOperationException("the index build's shuffle serializer only streams records")
    override def deserialize[T: ClassTag](bytes: ByteBuffer): T =
      throw new UnsupportedOperationException("the index build's shuffle serializer only streams records")
    override def deserialize[T: ClassTag](bytes: ByteBuffer, loader: ClassLoader): T =
      throw new UnsupportedOperationException("the index build's shuffle serializer only streams records")
  }

  private final class Writer(out: DataOutputStream) extends SerializationStream {
    private var scratch = new Array[Byte](0)

    override def writeObject[T: ClassTag](t: T): SerializationStream = {
      t match {
        case FileColumnKey(fileId, column) => out.writeByte(FileKeyTag); out.writeLong(fileId); out.writeInt(column)
        case BucketKey(column, bucket) => out.writeByte(BucketKeyTag); out.writeInt(column); out.writeInt(bucket)
        case SketchKey(partition) => out.writeByte(SketchKeyTag); out.writeInt(partition)
        case ZoneKey(fileId, rowGroup, column) =>
          out.writeByte(ZoneKeyTag); out.writeLong(fileId); out.writeInt(rowGroup); out.writeInt(column)
        case BucketHashes(hashes) =>
          out.writeByte(HashesTag)
          out.writeInt(hashes.length)
          if (scratch.length < hashes.length * 8) scratch = new Array[Byte](hashes.length * 8)
          ByteBuffer.wrap(scratch).asLongBuffer().put(hashes)
          out.write(scratch, 0, hashes.length * 8)
        case FileResult(file, rows, nulls, ndv, filter) =>
          out.writeByte(FileResultTag)
          out.writeLong(file.fileId)
          val path = file.path.getBytes(java.nio.charset.StandardCharsets.UTF_8)
          out.writeInt(path.length)
          out.write(path)
          out.writeLong(file.size); out.writeLong(file.mtime)
          out.writeLong(rows); out.writeLong(nulls); out.writeLong(ndv)
          out.writeInt(filter.length)
          out.write(filter)
        case other: Payload =>
          out.writeByte(OtherPayloadTag)
          val bytes = new java.io.ByteArrayOutputStream()
          val objects = new ObjectOutputStream(bytes)
          objects.writeObject(other)
          objects.close()
          out.writeInt(bytes.size)
          bytes.writeTo(out)
        case other => throw new IllegalArgumentException(s"not an index build record: ${other.getClass.getName}")
      }
      this
    }
    override def flush(): Unit = out.flush()
    override def close(): Unit = out.close()
  }

  private final class Reader(in: DataInputStream) extends DeserializationStream {
    private var scratch = new Array[Byte](0)

    override def readObject[T: ClassTag](): T = {
      val tag = in.read()
      if (tag < 0) throw new EOFException
      val value: Any = tag match {
        case FileKeyTag => FileColumnKey(in.readLong(), in.readInt())
        case BucketKeyTag => BucketKey(in.readInt(), in.readInt())
        case SketchKeyTag => SketchKey(in.readInt())
        case ZoneKeyTag => ZoneKey(in.readLong(), in.readInt(), in.readInt())
        case HashesTag =>
          val n = in.readInt()
          if (scratch.length < n * 8) scratch = new Array[Byte](n * 8)
          in.readFully(scratch, 0, n * 8)
          val hashes = new Array[Long](n)
          ByteBuffer.wrap(scratch, 0, n * 8).asLongBuffer().get(hashes)
          BucketHashes(hashes)
        case FileResultTag =>
          val fileId = in.readLong()
          val path = new String(bytes(in.readInt()), java.nio.charset.StandardCharsets.UTF_8)
          val file = SourceFile(fileId, path, in.readLong(), in.readLong())
          val (rows, nulls, ndv) = (in.readLong(), in.readLong(), in.readLong())
          FileResult(file, rows, nulls, ndv, bytes(in.readInt()))
        case OtherPayloadTag =>
          val bytes = new Array[Byte](in.readInt())
          in.readFully(bytes)
          JarObjectInput.read(bytes)
        case other => throw new IllegalStateException(s"corrupt index build shuffle record (tag $other)")
      }
      value.asInstanceOf[T]
    }

    /** The next `n` bytes, as a new array. */
    private def bytes(n: Int): Array[Byte] = {
      if (n < 0) throw new IllegalStateException(s"corrupt index build shuffle record (length $n)")
      val out = new Array[Byte](n)
      in.readFully(out)
      out
    }
    override def close(): Unit = in.close()
  }
}
