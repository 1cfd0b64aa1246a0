package hsbloom

import java.net.URI

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{Observation, Row, SparkSession}
import org.apache.spark.sql.functions.{broadcast, coalesce, col, input_file_name, length, lit, sum, when}
import org.apache.spark.sql.types.{LongType, StructType}

/**
 * The JVM half of an incremental refresh (Python: hsbloom/refresh.py):
 *
 *  - `deltaChanges`: which data files Delta commits added and removed between
 *    two table versions, read from the commit files of `_delta_log`;
 *  - `globalFilterBlocks`: the global filters' sizes in blocks, so the
 *    appended files' values can be built at the same sizes;
 *  - `assemble`: the new version's tables: the kept rows of the previous
 *    version plus the appended files' rows, and each global filter OR-ed with
 *    the appended files' filter.
 *
 * Tables are read and written only through `IndexTables`.
 */
object IndexRefresh {
  private val mapper = new ObjectMapper()

  /**
   * The data files that Delta commits `fromVersion` to `toVersion` (inclusive)
   * touched, as JSON `[{path, key, size, mtime, present}]`: `present` is
   * whether the file is part of the table after `toVersion` (added by the last
   * commit that touched it), `path` is absolute (relative paths resolved
   * against the table root as Delta does) and `key` is the file key the index
   * matches files by. Returns null when a commit file is missing (the log was
   * cleaned up): the caller then compares full listings instead.
   *
   * A commit that removes and re-adds one path (a new deletion vector) leaves
   * the file present: the index holds filters over a file's physical rows, so a
   * deletion vector does not change them (docs/refresh.md).
   */
  def deltaChanges(spark: SparkSession, tablePath: String, fromVersion: Long, toVersion: Long): String = {
    val root = new Path(tablePath)
    val logDir = new Path(root, "_delta_log")
    val fs = logDir.getFileSystem(spark.sessionState.newHadoopConf())
    val commits = (fromVersion to toVersion).map(v => v -> new Path(logDir, f"$v%020d.json"))
    if (commits.isEmpty) return "[]"
    if (!commits.forall { case (_, p) => fs.exists(p) }) return null
    val version = commits.map { case (v, p) => IndexBuild.fileKey(fs.makeQualified(p).toUri) -> v }.toMap
    val schema = StructType.fromDDL(
      "add struct<path: string, size: long, modificationTime: long>, remove struct<path: string>")
    val actions = spark.read.schema(schema).json(commits.map(_._2.toString): _*)
      .where(col("add").isNotNull || col("remove").isNotNull)
      .select(input_file_name(), col("add.path"), col("add.size"), col("add.modificationTime"), col("remove.path"))
      .collect()
    // Per path: the last commit that touched it decides; within a commit, an add wins (a deletion-vector update).
    final case class Touch(version: Long, added: Boolean, size: Long, mtime: Long)
    val last = scala.collection.mutable.HashMap[String, (String, Touch)]()
    actions.foreach { r =>
      val v = version(IndexBuild.scannedFileKey(r.getString(0)))
      val added = !r.isNullAt(1)
      val path = absolute(root, if (added) r.getString(1) else r.getString(4)).toString
      val touch = if (added) Touch(v, added = true, r.getLong(2), r.getLong(3)) else Touch(v, added = false, 0L, 0L)
      val key = IndexBuild.listedFileKey(path)
      val keep = last.get(key).forall { case (_, t) => t.version < v || (t.version == v && added) }
      if (keep) last(key) = path -> touch
    }
    val out = last.toSeq.sortBy(_._1).map { case (key, (path, t)) =>
      val m = new java.util.LinkedHashMap[String, Any]()
      m.put("path", path); m.put("key", key); m.put("size", t.size); m.put("mtime", t.mtime); m.put("present", t.added)
      m
    }
    mapper.writeValueAsString(out.asJava)
  }

  /** A Delta action's path (a URI, relative to the table root unless absolute) as a Hadoop path. */
  private def absolute(root: Path, actionPath: String): Path = {
    val p = new Path(new URI(actionPath))
    if (p.isAbsolute) p else new Path(root, p)
  }

  /** The file keys of listed paths (a JSON array in, a JSON array out, in order). */
  def fileKeys(pathsJson: String): String =
    mapper.writeValueAsString(mapper.readValue(pathsJson, classOf[Array[String]]).map(IndexBuild.listedFileKey))

  /**
   * Per column, the number of 32-byte blocks of a global filter whose
   * serialization is `bytes` long (the build summary's `global_filter_bytes`),
   * from JSON `{column: bytes}` to JSON `{column: blocks}`; no table is read.
   */
  def globalFilterBlocks(bytesJson: String): String = {
    val blocks = new java.util.LinkedHashMap[String, Any]()
    mapper.readTree(bytesJson).properties.asScala.foreach { e =>
      val total = e.getValue.asLong
      // The serialization is a header of a few bytes and a power-of-two bitset (at least 2 KiB for a global filter).
      val bitset = java.lang.Long.highestOneBit(total)
      if (bitset > Int.MaxValue || Sbbf.header(bitset.toInt).length + bitset != total) {
        throw new IllegalStateException(s"global filter of '${e.getKey}': impossible size $total")
      }
      blocks.put(e.getKey, bitset / 32)
    }
    mapper.writeValueAsString(blocks)
  }

  /**
   * Writes the version at `newPath`: the rows of `oldPath`'s file table whose
   * file ids are in `keptIdsJson`, the rows built for the appended files at
   * `appendedPath` (null: no file was appended), and (with `withGlobal`) each global filter of `oldPath`
   * OR-ed chunk by chunk with the one at `appendedPath` (built at the same
   * size, so their chunks line up). Returns per column of `columnsJson`, over
   * the new file table, `{num_rows, num_nulls, ndv_sum, file_filter_bytes, num_files}` as JSON.
   */
  def assemble(spark: SparkSession, oldPath: String, appendedPath: String, newPath: String, keptIdsJson: String,
      columnsJson: String, withGlobal: Boolean): String = {
    val keptIds = mapper.readValue(keptIdsJson, classOf[Array[Long]]).toSeq.map(id => Row(id))
    val kept = spark.createDataFrame(keptIds.asJava, new StructType().add("file_id", LongType, nullable = false))
    val carried = IndexTables.readFileTable(spark, oldPath).join(broadcast(kept), "file_id")
    val appended = Option(appendedPath).map(IndexTables.readFileTable(spark, _))
    // The statistics are observed while the table is written: no second pass over it.
    val columns = mapper.readValue(columnsJson, classOf[Array[String]]).toSeq
    val observation = Observation("hsbloom refresh statistics")
    val measures = Seq("num_rows" -> col("num_rows"), "num_nulls" -> col("num_nulls"), "ndv_sum" -> col("ndv"),
      "file_filter_bytes" -> length(col("filter")).cast(LongType), "num_files" -> lit(1L))
    val metrics = for ((c, i) <- columns.zipWithIndex; (name, value) <- measures)
      yield coalesce(sum(when(col("column") === c, value)), lit(0L)).cast(LongType).as(s"${name}_$i")
    val rows = appended.map(carried.unionByName(_)).getOrElse(carried).observe(observation, metrics.head, metrics.tail: _*)
    IndexTables.writeFileTable(rows, newPath, "errorifexists")
    val observed = observation.get
    if (withGlobal) appendedPath match {
      case null => IndexTables.writeGlobalTable(IndexTables.readGlobalTable(spark, oldPath), newPath, "errorifexists")
      case path => writeMergedGlobal(spark, oldPath, path, newPath)
    }

    val out = new java.util.LinkedHashMap[String, Any]()
    columns.zipWithIndex.foreach { case (c, i) =>
      val m = new java.util.LinkedHashMap[String, Any]()
      measures.foreach { case (name, _) => m.put(name, observed(s"${name}_$i")) }
      out.put(c, m)
    }
    mapper.writeValueAsString(out)
  }

  /** Each global chunk of `oldPath` OR-ed with the same chunk of `appendedPath`; any mismatch is an error. */
  private def writeMergedGlobal(spark: SparkSession, oldPath: String, appendedPath: String, newPath: String): Unit = {
    val old = IndexTables.readGlobalTable(spark, oldPath)
    val add = IndexTables.readGlobalTable(spark, appendedPath)
    val joined = old.as("o").join(add.as("a"), Seq("column", "chunk_index"), "full_outer")
      .select(col("column"), col("chunk_index"), col("o.num_chunks"), col("a.num_chunks"), col("o.filter_bytes"),
        col("a.filter_bytes"), col("o.chunk"), col("a.chunk"))
    val merged = joined.rdd.map { r =>
      val (column, index) = (r.getString(0), r.getInt(1))
      if (r.isNullAt(2) || r.isNullAt(3) || r.getInt(2) != r.getInt(3) || r.getLong(4) != r.getLong(5)) {
        throw new IllegalStateException(s"global filter chunk $index of column '$column' does not line up between " +
          s"$oldPath and the appended files' filter; run a full refresh")
      }
      val (a, b) = (r.getAs[Array[Byte]](6), r.getAs[Array[Byte]](7))
      require(a.length == b.length, s"global filter chunk $index of column '$column' differs in length")
      val or = new Array[Byte](a.length)
      var i = 0
      while (i < a.length) { or(i) = (a(i) | b(i)).toByte; i += 1 }
      Row(column, index, r.getInt(2), r.getLong(4), or)
    }
    IndexTables.writeGlobalTable(spark.createDataFrame(merged, IndexTables.GlobalTableSchema), newPath, "errorifexists")
  }
}
