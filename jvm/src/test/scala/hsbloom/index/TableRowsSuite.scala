package hsbloom.index

import java.io.{ByteArrayOutputStream, DataOutputStream}
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.example.data.Group
import org.apache.parquet.example.data.simple.SimpleGroupFactory
import org.apache.parquet.hadoop.ParquetReader
import org.apache.parquet.hadoop.example.{ExampleParquetWriter, GroupReadSupport}
import org.apache.parquet.hadoop.util.HadoopOutputFile
import org.apache.parquet.schema.{MessageType, MessageTypeParser}
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.format.Checksums

/**
 * The column-wise rows of a file table (`TableRows`) are the rows a record
 * reader reads, and their checksums are over the bytes row checksums have
 * always covered (`java.io.DataOutputStream`'s encoding, written out here as
 * the reference): over required and optional columns, dictionary and plain
 * pages, several row groups and pages, and strings with spaces, `%`,
 * unicode, empty ones and long ones.
 */
class TableRowsSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private val random = new scala.util.Random(18)
  private val seed = Checksums.directorySeed("file:/idx/name/v__=3")

  private def schema(repetition: String): MessageType = MessageTypeParser.parseMessageType(
    s"""message spark_schema {
       |  $repetition int64 file_id; $repetition binary file_path (UTF8); $repetition int64 file_size;
       |  $repetition int64 file_mtime; $repetition binary column (UTF8); $repetition int64 num_rows;
       |  $repetition int64 num_nulls; $repetition int64 ndv; $repetition binary blocks_file (UTF8);
       |  $repetition int64 blocks_offset; $repetition int32 blocks_count; $repetition int32 blocks_position;
       |  $repetition int32 bitset_bytes; $repetition int64 filter_checksum; $repetition int64 row_checksum;
       |  optional binary filter_source (UTF8);
       |}""".stripMargin)

  private val names = Seq("", "a b", "100%", "a%20b", "日本語", "é", "x" * 3000, "emoji \uD83D\uDE00", "c")

  /** The old encoding, as `Checksums.RowFields.checksum` wrote it through a DataOutputStream. */
  private def reference(f: Checksums.RowFields): Long = {
    val buffer = new ByteArrayOutputStream()
    val out = new DataOutputStream(buffer)
    def string(s: String): Unit = { val b = s.getBytes(StandardCharsets.UTF_8); out.writeInt(b.length); out.write(b) }
    out.writeLong(f.fileId); string(f.path); out.writeLong(f.size); out.writeLong(f.mtime); string(f.column)
    out.writeLong(f.numRows); out.writeLong(f.numNulls); string(f.blocksFile); out.writeLong(f.blocksOffset)
    out.writeInt(f.blocksCount); out.writeInt(f.blocksPosition); out.writeInt(f.bitsetBytes); out.writeLong(f.filterChecksum)
    out.flush()
    Checksums.xxh64(buffer.toByteArray, seed)
  }

  private def randomFields(i: Int): Checksums.RowFields = Checksums.RowFields(random.nextLong(),
    s"file:/data/${names(random.nextInt(names.size))}/part-${i / 3}.parquet", random.nextLong(), random.nextLong(),
    names(i % 3 + 1), random.nextLong(), random.nextLong(), names(random.nextInt(names.size)), random.nextLong(),
    random.nextInt(), random.nextInt(), random.nextInt(), random.nextLong())

  /** Writes `rows` (None: a row of nulls) with their checksums into a part, with parquet-java's example writer. */
  private def write(rows: Seq[Option[Checksums.RowFields]], repetition: String, dictionary: Boolean,
      checksumOf: Checksums.RowFields => Long = _.checksum(seed)): Path = {
    val part = new Path(Files.createTempDirectory("table-rows").toUri.toString, "part-0.parquet")
    val writer = ExampleParquetWriter.builder(HadoopOutputFile.fromPath(part, conf)).withConf(conf)
      .withType(schema(repetition)).withDictionaryEncoding(dictionary).withRowGroupSize(8L << 10).withPageSize(1024)
      .withPageRowCountLimit(50).build()
    val groups = new SimpleGroupFactory(schema(repetition))
    try rows.foreach { row =>
      val g = groups.newGroup()
      row.foreach { f =>
        g.add("file_id", f.fileId); g.add("file_path", f.path); g.add("file_size", f.size); g.add("file_mtime", f.mtime)
        g.add("column", f.column); g.add("num_rows", f.numRows); g.add("num_nulls", f.numNulls); g.add("ndv", 1L)
        g.add("blocks_file", f.blocksFile); g.add("blocks_offset", f.blocksOffset); g.add("blocks_count", f.blocksCount)
        g.add("blocks_position", f.blocksPosition); g.add("bitset_bytes", f.bitsetBytes)
        g.add("filter_checksum", f.filterChecksum); g.add("row_checksum", checksumOf(f)); g.add("filter_source", "hashed")
      }
      writer.write(g)
    } finally writer.close()
    part
  }

  private def recordReader(part: Path): Seq[Group] = {
    val reader = ParquetReader.builder(new GroupReadSupport(), part).withConf(conf).build()
    try Iterator.continually(reader.read()).takeWhile(_ != null).toList finally reader.close()
  }

  for ((repetition, dictionary) <- Seq(("required", false), ("required", true), ("optional", true))) {
    test(s"rows read column-wise are the record reader's, with the same checksums ($repetition, dictionary $dictionary)") {
      val fields = (0 until 2000).map(randomFields)
      val part = write(fields.map(Some(_)), repetition, dictionary)
      val rows = TableRows.open(part, conf, IndexDataLoad.Columns)
      val out = new Checksums.RowBytes
      val read = try Iterator.continually(rows.next()).takeWhile(identity).map { _ =>
        assert(!rows.hasNull)
        val f = IndexDataLoad.fields(rows)
        assert(rows.checksum(IndexDataLoad.Checksummed, out, seed) == reference(f))
        assert(IndexDataLoad.intact(rows, out, seed))
        f
      }.toList finally rows.close()
      assert(read == fields)
      assert(recordReader(part).map(IndexData.rowFields) == fields)
      assert(fields.forall(f => f.checksum(seed) == reference(f)))
    }
  }

  test("a row with a null is marked, the rows around it are read") {
    val fields = (0 until 300).map(randomFields)
    val part = write(fields.map(Some(_)).patch(150, Seq(None), 1), "optional", dictionary = true)
    val rows = TableRows.open(part, conf, IndexDataLoad.Columns)
    val out = new Checksums.RowBytes
    val read = try Iterator.continually(rows.next()).takeWhile(identity)
      .map(_ => if (rows.hasNull) None else Some(IndexDataLoad.fields(rows) -> IndexDataLoad.intact(rows, out, seed)))
      .toList finally rows.close()
    assert(read.size == 300 && read(150).isEmpty)
    assert(read.flatten.map(_._1) == fields.patch(150, Nil, 1) && read.flatten.forall(_._2))
  }

  test("a row whose fields changed fails its checksum; a missing or retyped column refuses the part, naming it") {
    val f = randomFields(1)
    val part = write(Seq(Some(f)), "required", dictionary = false, checksumOf = g => g.copy(numRows = g.numRows + 1).checksum(seed))
    val rows = TableRows.open(part, conf, IndexDataLoad.Columns)
    try { assert(rows.next()); assert(!IndexDataLoad.intact(rows, new Checksums.RowBytes, seed)) } finally rows.close()
    val missing = intercept[IllegalStateException](TableRows.open(part, conf, IndexDataLoad.Columns :+
      TableRows.Column("no_such_column", TableRows.Int64)))
    assert(missing.getMessage.contains("no_such_column") && missing.getMessage.contains(part.toString))
    val retyped = intercept[IllegalStateException](TableRows.open(part, conf, Seq(TableRows.Column("file_size", TableRows.Int32))))
    assert(retyped.getMessage.contains("file_size"))
  }
}
