package hsbloom.shim

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.example.data.simple.SimpleGroupFactory
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.example.ExampleParquetWriter
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.schema.MessageTypeParser
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.sbbf.Sbbf

/** `ParquetFooters` on the Parquet of the Spark the tests run with (1.13 in Spark 3.5, 1.15 and later in Spark 4). */
class ParquetFootersSuite extends AnyFunSuite {
  /** Whether this Parquet reads a bloom filter's length from a footer (`getBloomFilterLength`, 1.14 and later). */
  private val readsLength = {
    val Array(major, minor) = org.apache.parquet.Version.VERSION_NUMBER.split('.').take(2).map(_.toInt)
    major > 1 || minor >= 14
  }

  test("a bloom filter's recorded length is its header and bitset where the Parquet reads it, else -1") {
    val conf = new Configuration()
    val path = new Path(Files.createTempDirectory("footers").resolve("f.parquet").toUri)
    val schema = MessageTypeParser.parseMessageType("message m { required int64 v; }")
    val writer = ExampleParquetWriter.builder(path).withConf(conf).withType(schema)
      .withBloomFilterEnabled(true).withBloomFilterNDV("v", 100).build()
    val rows = new SimpleGroupFactory(schema)
    try {
      (0 until 100).foreach(i => writer.write(rows.newGroup().append("v", i.toLong)))
    } finally writer.close()
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(path, conf))
    val chunk = try reader.getFooter.getBlocks.get(0).getColumns.get(0) finally reader.close()

    val recorded = ParquetFooters.bloomFilterLength(chunk)
    if (!readsLength) assert(recorded == -1) else {
      val bytes = new Array[Byte](recorded)
      val in = path.getFileSystem(conf).open(path)
      try in.readFully(chunk.getBloomFilterOffset, bytes) finally in.close()
      val header = Sbbf.parseHeader(bytes)
      assert(header.headerLength + header.numBytes == recorded)
    }
  }
}
