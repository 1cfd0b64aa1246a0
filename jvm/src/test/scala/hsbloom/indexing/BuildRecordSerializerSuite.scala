package hsbloom.indexing

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, EOFException}

import org.scalatest.funsuite.AnyFunSuite

import hsbloom.format.SourceFile
import hsbloom.sbbf.Sbbf

class BuildRecordSerializerSuite extends AnyFunSuite {
  test("every record of the build's shuffle reads back as it was written, in order") {
    val file = SourceFile(7, "file:/tmp/a b/ü.parquet", 1234, 5678)
    val filter = Sbbf.forNdv(1000, 0.01)
    (0 until 1000).foreach(i => filter.insertHash(i * 0x9E3779B97F4A7C15L))
    val sketch = new HyperLogLog()
    sketch.update(42L)
    val records: Seq[(BuildKey, Payload)] = Seq(
      FileColumnKey(7, 1) -> FileResult(file, 10, 2, 8, filter.toBytes),
      FileColumnKey(8, 0) -> FileResult(SourceFile(8, "", 0, 0), 0, 0, 0, Array.emptyByteArray),
      FileColumnKey(9, 0) -> FilePart(file, 3, 1, Array(1L, -2L), Some(filter)),
      BucketKey(1, 63) -> BucketHashes(Array(Long.MinValue, 0L, Long.MaxValue)),
      SketchKey(2) -> Sketches(Array(sketch)),
      ZoneKey(7, 3, 1) -> ZoneResult(file, 3, 4, 100, 200, 10, 0, 10, filter.toBytes))
    val bytes = new ByteArrayOutputStream()
    val writer = new BuildRecordSerializer().newInstance().serializeStream(bytes)
    records.foreach { case (k, v) => writer.writeObject(k); writer.writeObject(v) }
    writer.close()
    val reader = new BuildRecordSerializer().newInstance().deserializeStream(new ByteArrayInputStream(bytes.toByteArray))
    val read = records.map(_ => (reader.readObject[BuildKey](), reader.readObject[Payload]()))
    assertThrows[EOFException](reader.readObject[BuildKey]())
    // Case classes with arrays compare arrays by identity: compare their contents.
    def plain(p: Payload): Any = p match {
      case FileResult(f, r, n, d, b) => (f, r, n, d, b.toSeq)
      case FilePart(f, r, n, h, s) => (f, r, n, h.toSeq, s)
      case BucketHashes(h) => h.toSeq
      case Sketches(s) => s.map(_.estimate).toSeq
      case z: ZoneResult => z.copy(filter = null) -> z.filter.toSeq
    }
    assert(read.map { case (k, v) => k -> plain(v) } == records.map { case (k, v) => k -> plain(v) })
  }
}
