package hsbloom.indexing

import org.apache.spark.hsbloom.CurrentInputFile
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.functions.{col, input_file_block_length, input_file_block_start, input_file_name}
import org.apache.spark.sql.vectorized.{ColumnarBatch, ColumnarBatchRow}
import org.apache.spark.unsafe.types.UTF8String

import hsbloom.shim.ColumnarScan

/**
 * The rows the index build reads: the indexed columns of every source file,
 * in chunks that each come from one file block.
 *
 * Where the scan of those columns is a plain columnar file scan (Parquet and
 * ORC with Spark's vectorized readers), the build consumes the reader's
 * batches as they are: no conversion to rows, and the file is looked up once
 * per batch (a batch never spans two files). Any other scan (CSV, JSON, a
 * reader that is not vectorized, Delta with deletion vectors) falls back to
 * rows that carry `input_file_name()` and the block's offsets, one chunk per row.
 */
object ScanInput {
  /** Some rows of one file block; the indexed columns are ordinals 0 until n of `row(i)`. */
  trait Chunk {
    def file: UTF8String
    def blockStart: Long
    def blockLength: Long
    def numRows: Int
    /** Row `i` of the chunk; the object may be reused by the next call. */
    def row(i: Int): InternalRow
    /** The chunk as column vectors (the indexed columns, in order), or null for a chunk of rows. */
    def columns: ColumnarBatch
  }

  /** Chunks of `columns` (resolved names of `df`) for every file `df` reads. */
  def of(df: DataFrame, columns: Seq[String]): RDD[Chunk] = {
    val scanned = df.select(columns.map(c => col(quote(c))): _*)
    ColumnarScan.of(scanned.queryExecution.executedPlan) match {
      case Some(scan) =>
        scan.executeColumnar().mapPartitions(_.map(batch => new BatchChunk(batch): Chunk))
      case None =>
        val n = columns.size
        df.select(columns.map(c => col(quote(c))) ++ Seq(input_file_name(), input_file_block_start(),
          input_file_block_length()): _*).queryExecution.toRdd.mapPartitions(_.map(row => new RowChunk(row, n): Chunk))
    }
  }

  /** A columnar batch; the file is the one the scan task reads while the batch is handed out. */
  private final class BatchChunk(batch: ColumnarBatch) extends Chunk {
    override val file: UTF8String = CurrentInputFile.path
    override val blockStart: Long = CurrentInputFile.blockStart
    override val blockLength: Long = CurrentInputFile.blockLength
    override val numRows: Int = batch.numRows
    private val cursor = new ColumnarBatchRow((0 until batch.numCols).map(batch.column).toArray)
    override def row(i: Int): InternalRow = { cursor.rowId = i; cursor }
    override def columns: ColumnarBatch = batch
  }

  /** One row, with its file name and block offsets after the `n` indexed columns. */
  private final class RowChunk(value: InternalRow, n: Int) extends Chunk {
    override def file: UTF8String = value.getUTF8String(n)
    override def blockStart: Long = value.getLong(n + 1)
    override def blockLength: Long = value.getLong(n + 2)
    override def numRows: Int = 1
    override def row(i: Int): InternalRow = value
    override def columns: ColumnarBatch = null
  }

  private def quote(name: String): String = "`" + name.replace("`", "``") + "`"
}
