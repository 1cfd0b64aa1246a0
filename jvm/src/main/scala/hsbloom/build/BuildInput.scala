package hsbloom.build

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Project, SubqueryAlias}
import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation, LogicalRelation, PartitionDirectory}

import hsbloom.pruning.DelegatingFileIndex
import hsbloom.shim.{ClassicDataset, FileRelation}
import hsbloom.index.FileKey

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
 * The relation is the one `Sources` accepted (a plain scan under aliases and
 * column selections); its file index is wrapped by `SelectedFileIndex`.
 */
object BuildInput {
  /** `df`'s relation reading only `pathsJson` (a JSON array of listed paths; null: all files), all rows. */
  def of(df: ClassicDataset[_], pathsJson: String): DataFrame = {
    val relation = scannedRelation(df.queryExecution.analyzed)
    val fs = relation.relation.asInstanceOf[HadoopFsRelation]
    val keys = Option(pathsJson).map { json =>
      new ObjectMapper().readValue(json, classOf[Array[String]]).map(FileKey.listed).toSet
    }
    val selected = fs.copy(location = new SelectedFileIndex(fs.location, keys))(fs.sparkSession)
    df.sparkSession.baseRelationToDataFrame(selected)
  }

  private def scannedRelation(plan: LogicalPlan): LogicalRelation = plan match {
    case SubqueryAlias(_, child) => scannedRelation(child)
    case Project(_, child) => scannedRelation(child)
    case FileRelation(l, _, _, _) => l
    case other => throw new IllegalArgumentException(s"not a plain scan of files: ${other.nodeName}")
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
