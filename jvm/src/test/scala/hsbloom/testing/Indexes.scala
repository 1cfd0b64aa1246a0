package hsbloom.testing

import java.io.File

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col, concat, lit}

import hsbloom.{BFIndexConfig, Hyperspace}
import hsbloom.format.{Layout, LogEntry, SourceFile}
import hsbloom.index.SourceListing
import hsbloom.log.OperationLog

/**
 * Indexes of the test's system path as the tests look at them: the facade (`hs`), an index's log read through
 * the jar's own reader (`log`, `states`), its data directories on storage (`versions`), the files a version holds
 * (`held`), and small tables to index (`keyed`: files of distinct keys, each key in one file).
 */
trait Indexes { self: SharedSession =>
  protected def hs: Hyperspace = new Hyperspace(spark)

  protected def log(name: String): OperationLog =
    new OperationLog(name, new Path(s"file:$systemPath/$name/${Layout.LogDir}"), spark.sessionState.newHadoopConf())

  /** The states of index `name`'s log entries, oldest first. */
  protected def states(name: String): Seq[String] = log(name).entries().map(_.state.name)

  /** The names of index `name`'s data directories (`v__=N`) on storage. */
  protected def versions(name: String): Set[String] =
    Option(new File(s"$systemPath/$name").listFiles).toSeq.flatten.map(_.getName).filter(_.startsWith("v__=")).toSet

  /** Whether data directory `version` of `name` has a complete file table (its `_SUCCESS`). */
  protected def complete(name: String, version: String): Boolean =
    new File(s"$systemPath/$name/$version/files/_SUCCESS").exists

  /** The latest stable entry of `name`, as readers use it. */
  protected def stable(name: String): LogEntry = log(name).latestStable().getOrElse(fail(s"no stable entry of $name"))

  /** The files the latest stable version of `name` holds, from its file tables (and how many rows failed checks). */
  protected def held(name: String): (Seq[SourceFile], Int) = {
    val entry = stable(name)
    SourceListing.held(entry.parts.map(v => s"file:$systemPath/$name/v__=$v"), entry.droppedFileIds.toSet,
      spark.sessionState.newHadoopConf())
  }

  /**
   * `numFiles` files of `perFile` distinct keys each, from `firstKey` (key k in one file): id, key (= id),
   * name ("k<id>"), v (id % 7).
   */
  protected def keyed(firstKey: Long, numFiles: Int, perFile: Int = 50): DataFrame =
    spark.range(firstKey, firstKey + numFiles.toLong * perFile, 1, numFiles)
      .select(col("id"), col("id").as("key"), concat(lit("k"), col("id")).as("name"), (col("id") % 7).as("v"))

  /** Creates index `name` on `columns` of `df`. */
  protected def create(df: DataFrame, name: String, columns: Seq[String], globalFilter: Boolean = false): Unit =
    hs.createIndex(df, BFIndexConfig(name, columns, globalFilter = globalFilter))

  /** The Parquet part files of the directory `path`, sorted. */
  protected def partFiles(path: String): Seq[File] =
    Option(new File(path).listFiles).toSeq.flatten.filter(f => f.getName.startsWith("part-")).sortBy(_.getName)

  /** Removes a part file and Hadoop's checksum of it, as another writer that deletes a file does. */
  protected def removePart(file: File): Unit = {
    assert(file.delete(), s"could not delete $file")
    new File(file.getParentFile, s".${file.getName}.crc").delete()
  }
}
