package hsbloom.indexing

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.example.data.simple.SimpleGroupFactory
import org.apache.parquet.hadoop.ParquetWriter
import org.apache.parquet.hadoop.example.ExampleParquetWriter
import org.apache.parquet.schema.MessageTypeParser
import org.scalatest.funsuite.AnyFunSuite

class RowGroupsSuite extends AnyFunSuite {
  private val conf = new Configuration()

  /** A Parquet file of `rows` longs in row groups of about `groupBytes`; returns its path and size. */
  private def parquetFile(rows: Int, groupBytes: Int): (Path, Long) = {
    val dir = Files.createTempDirectory("rowgroups")
    val path = new Path(dir.resolve("f.parquet").toUri)
    val schema = MessageTypeParser.parseMessageType("message m { required int64 v; }")
    val writer = ExampleParquetWriter.builder(path).withConf(conf).withType(schema).withRowGroupSize(groupBytes.toLong)
      .withPageSize(256).withDictionaryEncoding(false).withMinRowCountForPageSizeCheck(10)
      .withMaxRowCountForPageSizeCheck(10).build()
    val groups = new SimpleGroupFactory(schema)
    try {
      (0 until rows).foreach(i => writer.write(groups.newGroup().append("v", i.toLong * 7919L)))
    } finally writer.close()
    (path, path.getFileSystem(conf).getFileStatus(path).getLen)
  }

  test("a whole file's row groups, each provably read alone by a split of its own range") {
    val (path, size) = parquetFile(5000, 2048)
    val (n, groups) = RowGroups.ofBlock(path, conf, size, 0, size).get
    assert(n > 3 && groups.size == n)
    assert(groups.map(_.ordinal) == (0 until n))
    assert(groups.map(_.rows).sum == 5000)
    groups.zip(groups.tail).foreach { case (a, b) => assert(a.start + a.length <= b.start) }
  }

  test("a block gets the row groups whose midpoints it holds, and together the blocks get each once") {
    val (path, size) = parquetFile(5000, 2048)
    val cuts = (0L to size by 3000L) :+ size
    val seen = cuts.zip(cuts.tail).flatMap { case (a, b) => RowGroups.ofBlock(path, conf, size, a, b - a).get._2 }
    assert(seen.map(_.ordinal) == (0 until RowGroups.ofBlock(path, conf, size, 0, size).get._1))
  }

  test("no zones for a file of another size than listed, or one that is not Parquet") {
    val (path, size) = parquetFile(100, 1 << 20)
    assert(RowGroups.ofBlock(path, conf, size + 1, 0, size + 1).isEmpty)
    val text = new Path(Files.createTempFile("rowgroups", ".txt").toUri)
    Files.write(java.nio.file.Paths.get(text.toUri), "not parquet at all, just text".getBytes)
    assert(RowGroups.ofBlock(text, conf, 29, 0, 29).isEmpty)
  }

  test("a footer longer than the tail's first read is read whole, and its row groups found") {
    val (path, size) = parquetFile(80000, 512)
    val tail = ParquetTail.open(path, conf, size).toOption.get
    try assert(tail.footer.length > ParquetTail.TailBytes) finally tail.close()
    val (n, groups) = RowGroups.ofBlock(path, conf, size, 0, size).get
    assert(groups.size == n && groups.map(_.rows).sum == 80000)
  }
}
