package hsbloom.shim

import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData

/**
 * What parquet-java's footer model has in some of the Parquet releases Spark ships and not in others, read where
 * it exists: Spark 3.5 ships Parquet 1.13, Spark 4 ships 1.15 and later.
 */
object ParquetFooters {
  /** `ColumnChunkMetaData.getBloomFilterLength`, added in Parquet 1.14 (None before). */
  private val bloomFilterLengthGetter: Option[java.lang.reflect.Method] =
    try Some(classOf[ColumnChunkMetaData].getMethod("getBloomFilterLength"))
    catch { case _: NoSuchMethodException => None }

  /**
   * The length in bytes of a column chunk's bloom filter (its header and bitset) as the footer records it (writers
   * since parquet-java 1.14 record it); -1 when it records none or this Parquet cannot read it.
   */
  def bloomFilterLength(chunk: ColumnChunkMetaData): Int =
    bloomFilterLengthGetter.fold(-1)(_.invoke(chunk).asInstanceOf[Int])
}
