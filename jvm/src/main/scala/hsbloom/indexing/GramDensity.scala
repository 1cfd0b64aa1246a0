package hsbloom.indexing

import scala.collection.mutable

import org.apache.spark.sql.DataFrame

import hsbloom.format.ColumnSummary

/**
 * How many distinct n-grams string columns hold, per file and over all the files of a scan: what choosing a
 * substring filter's n needs (`hsbloom.operations.Substrings.chooseNgramSizes`). One scan counts every candidate n
 * of every column at once, with `GramHasher` (the grams a filter of that n would hold) feeding a HyperLogLog per
 * file, column and n; the files' sketches are merged by file, then into the union on the driver.
 */
object GramDensity {
  /** One column's grams of one n: the distinct count of each file that has rows, and of all of them together. */
  final case class Counts(perFile: Seq[Long], union: Long) {
    /** How much the files with grams share them (`ColumnSummary.sharing`); None without two such files. */
    def shared: Option[Double] =
      if (union <= 0) None else ColumnSummary.sharing(perFile.sum.toDouble / union, perFile.count(_ > 0))
  }

  /** Per (column, n), the counts of `df`'s files: `columns` are resolved names of `df`'s string columns. */
  def measure(df: DataFrame, columns: Seq[String], ns: Seq[Int]): Map[(String, Int), Counts] = {
    val keys = for (c <- columns.indices; n <- ns) yield (c, n)
    val sketches = ScanInput.of(df, columns).mapPartitions { chunks =>
      val hashers = keys.map { case (c, n) => new GramHasher(c, n) }
      val byFile = mutable.LinkedHashMap[String, Array[HyperLogLog]]()
      chunks.foreach { chunk =>
        val sketch = byFile.getOrElseUpdate(chunk.file.toString, Array.fill(keys.size)(new HyperLogLog()))
        var k = 0
        while (k < keys.size) {
          val hasher = hashers(k)
          val count = hasher.hashChunk(chunk)
          var i = 0
          while (i < count) { sketch(k).update(hasher.out(i)); i += 1 }
          k += 1
        }
      }
      byFile.iterator
    }.reduceByKey((a, b) => a.zip(b).map { case (x, y) => x.merge(y) }).values.collect().toSeq
    keys.zipWithIndex.map { case ((c, n), k) =>
      val union = new HyperLogLog()
      sketches.foreach(s => union.merge(s(k)))
      (columns(c), n) -> Counts(sketches.map(_(k).estimate), union.estimate)
    }.toMap
  }
}
