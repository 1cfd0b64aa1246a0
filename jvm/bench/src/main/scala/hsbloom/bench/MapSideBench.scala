package hsbloom.bench

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types.{LongType, StringType}
import org.apache.spark.sql.vectorized.{ColumnarBatch, ColumnarBatchRow}
import org.apache.spark.unsafe.types.UTF8String

import hsbloom.format.{FileKey, SourceFile}
import hsbloom.indexing.{BuildRequest, MapSettings, MapSide, ScanInput}
import hsbloom.sbbf.ParquetHash

/**
 * The build's map side alone, on one thread, over column batches generated
 * here (a random long and a uuid string column, files of `rowsPerFile` rows in
 * batches of 4,096): nanoseconds per row, without Spark's scan or shuffle, so a
 * change to the per-value work can be measured on a busy machine.
 */
object MapSideBench {
  private val BatchRows = 4096

  private final class Chunk(val file: UTF8String, val blockLength: Long, batch: ColumnarBatch) extends ScanInput.Chunk {
    override def blockStart: Long = 0
    override def numRows: Int = batch.numRows
    private val cursor = new ColumnarBatchRow((0 until batch.numCols).map(batch.column).toArray)
    override def row(i: Int): InternalRow = { cursor.rowId = i; cursor }
    override def columns: ColumnarBatch = batch
  }

  /** CPU nanoseconds (of this thread, so other load on the machine counts little) per row: the best of `rounds` passes over `files` files. */
  def run(files: Int, rowsPerFile: Int, globalFilter: Boolean, rounds: Int): Double = {
    val uuids = SbbfBench.uuids(rowsPerFile, 7)
    val longs = SbbfBench.longs(rowsPerFile, 3)
    val batches = (0 until rowsPerFile by BatchRows).map { start =>
      val n = math.min(BatchRows, rowsPerFile - start)
      val l = new OnHeapColumnVector(n, LongType)
      val s = new OnHeapColumnVector(n, StringType)
      var i = 0
      while (i < n) {
        l.putLong(i, longs(start + i))
        s.putByteArray(i, uuids, (start + i) * SbbfBench.UuidLength, SbbfBench.UuidLength)
        i += 1
      }
      val b = new ColumnarBatch(Array(l, s))
      b.setNumRows(n)
      b
    }
    val listed = (0 until files).map(f => SourceFile(f, s"file:/bench/f$f.parquet", 1000L, 0L))
    val listing = listed.map(f => FileKey.listed(f.path) -> f).toMap
    val names = listed.map(f => UTF8String.fromString(f.path))
    val settings = MapSettings(Array(LongType, StringType),
      None, 0.01, globalFilter, BuildRequest.DefaultMaxBufferedHashes, 4, sharedFpp = 0.01)
    val cpu = java.lang.management.ManagementFactory.getThreadMXBean
    var best = Long.MaxValue
    for (_ <- 0 until rounds) {
      val chunks = names.iterator.flatMap(name => batches.iterator.map(b => new Chunk(name, 1000L, b): ScanInput.Chunk))
      val start = cpu.getCurrentThreadCpuTime
      val side = new MapSide(chunks, settings, listing)
      var records = 0L
      while (side.hasNext) { side.next(); records += 1 }
      best = math.min(best, cpu.getCurrentThreadCpuTime - start)
    }
    best.toDouble / (files.toLong * rowsPerFile)
  }

  /**
   * From sbt: `./dev.sh sbt "bench/runMain hsbloom.bench.MapSideBench [files] [rowsPerFile] [globalFilter] [rounds]"`
   * (defaults 8, 1000000, true, 5); prints CPU nanoseconds per row.
   */
  def main(args: Array[String]): Unit = {
    val files = args.lift(0).map(_.toInt).getOrElse(8)
    val rowsPerFile = args.lift(1).map(_.toInt).getOrElse(1000000)
    val globalFilter = args.lift(2).forall(_.toBoolean)
    val rounds = args.lift(3).map(_.toInt).getOrElse(5)
    val nanos = run(files, rowsPerFile, globalFilter, rounds)
    println(f"map side, $files files of $rowsPerFile rows, global filter $globalFilter: $nanos%.1f ns per row (best of $rounds)")
  }
}
