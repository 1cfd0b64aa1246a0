package org.apache.spark.hsbloom

import org.apache.spark.rdd.InputFileBlockHolder
import org.apache.spark.unsafe.types.UTF8String

/**
 * The file block a scan task is reading now, as Spark's file scan records it
 * for `input_file_name()`. Spark keeps that holder package-private; this
 * accessor (in Spark's package for that reason alone) lets the index build
 * read it once per columnar batch instead of projecting the file name into
 * every row.
 */
object CurrentInputFile {
  def path: UTF8String = InputFileBlockHolder.getInputFilePath
  def blockStart: Long = InputFileBlockHolder.getStartOffset
  def blockLength: Long = InputFileBlockHolder.getLength
}
