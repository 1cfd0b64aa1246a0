package hsbloom.indexing

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation, PartitionDirectory}

import hsbloom.catalog.Sources
import hsbloom.format.FileKey
import hsbloom.shim.{ClassicDataset, DelegatingFileIndex}

/**
 * What a build scans: every physical row of chosen files of a relation.
 *
 * Two things a plain read of the DataFrame would get wrong for an index:
 *  - a refresh must scan only the appended files, with the partition values
 *    and read options of the relation (a read of their paths alone would lose
 *    partition columns and options);
 *  - a Delta index holds each file's filter over all rows stored in the file,
 *    deleted by a deletion vector or not (docs/refresh.md), so that the filter
 *    is valid at every table version that references the file, including
 *    time travel. Delta applies deletion vectors only to scans through its own
 *    file index classes; behind this wrapper it reads the files whole, while
 *    its file format still maps column names (column mapping) and fills
 *    partition values.
 *
 * The relation is the one `Sources` accepted (a plain scan under aliases, views and
 * column selections); its file index is wrapped by `SelectedFileIndex`.
 */
object BuildInput {
  /** `df`'s relation reading only the files `paths` (as listed; None: all files), all rows of each. */
  def of(df: DataFrame, paths: Option[Seq[String]]): DataFrame = {
    val relation = Sources.scannedRelation(ClassicDataset.of(df).queryExecution.analyzed)
    val fs = relation.relation.asInstanceOf[HadoopFsRelation]
    val keys = paths.map(_.map(FileKey.listed).toSet)
    val selected = fs.copy(location = new SelectedFileIndex(fs.location, keys))(fs.sparkSession)
    df.sparkSession.baseRelationToDataFrame(selected)
  }
}

/** A relation's file listing restricted to the files whose keys are in `keys` (None: every file). */
final class SelectedFileIndex(val delegate: FileIndex, keys: Option[Set[String]]) extends DelegatingFileIndex {
  private def selected(path: Path): Boolean = keys.forall(_.contains(FileKey.of(path.toUri)))

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    delegate.listFiles(partitionFilters, dataFilters)
      .map(dir => dir.copy(files = dir.files.filter(f => selected(f.getPath))))
      .filter(_.files.nonEmpty)
  override def inputFiles: Array[String] = delegate.inputFiles.filter(p => selected(new Path(p)))
  override def sizeInBytes: Long = listFiles(Nil, Nil).flatMap(_.files).map(_.getLen).sum
  override def toString: String = s"SelectedFileIndex(${keys.map(k => s"${k.size} files").getOrElse("all files")}; $delegate)"
}
