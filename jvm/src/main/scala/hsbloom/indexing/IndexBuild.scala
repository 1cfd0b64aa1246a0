package hsbloom.indexing

import org.apache.hadoop.fs.Path
import org.apache.spark.rdd.{PartitionPruningRDD, RDD, ShuffledRDD}
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types.{DataType, StringType}
import org.apache.spark.util.SerializableConfiguration
import com.fasterxml.jackson.databind.ObjectMapper

import hsbloom.format.{FileKey, SourceFile, TableSchemas}
import hsbloom.index.{IndexTables, SealedTable, ZoneTable}
import hsbloom.indexing.BuildPartitioner.{NumBuckets, bucketPartition}
import hsbloom.sbbf.{ParquetHash, Sbbf}
import hsbloom.shim.CollectionConverters._
import hsbloom.shim.{ClassicDataset, FileRelation}

/**
 * The distributed build of an index version: one scan of the indexed columns
 * gives, per source file and column, an SBBF with row, null and distinct
 * counts, and per column one global SBBF.
 *
 * How the work is split:
 *  1. Map side (the only scan; `MapSide`): rows arrive file by file, in column
 *     batches where the scan is columnar; each column of a batch is hashed in
 *     one pass. Each file's hashes are buffered; when the file ends, its filter
 *     is built at an upper bound (the number of non-null values) and folded
 *     down to the target fpp, so a small file gets a small filter. A file read
 *     by several tasks (a split file) sends its parts to be merged
 *     (`FileFilters`). For the global filters, every hash goes to one of 64
 *     buckets by its top 6 bits (which fix its block range in a filter of any
 *     power-of-two size), and into a per-column HyperLogLog, which each task
 *     sends to every bucket partition.
 *  2. One shuffle, with file keys and bucket keys in separate partitions
 *     (`ShuffleRecords`, `BuildPartitioner`, `BuildRecordSerializer`).
 *  3. Two jobs over that shuffle, at the same time (`Alongside`): one writes
 *     the file-level table from the file partitions (running the map side); the
 *     other builds each bucket's block range of the global filters from the
 *     bucket partitions (`GlobalReducer`), sized from the merged HyperLogLogs,
 *     and writes the global table in chunks. No filter passes through the driver.
 *  0. Where the source files carry Parquet-native SBBFs of the indexed columns,
 *     a first pass takes each file's filters from its footer instead, reading
 *     each footer and filter once (`Adoption`, `AdoptionReads`, `NativeFilters`;
 *     with zones, its row groups' filters too: `NativeZones`); the scan reads
 *     only the files not adopted, and does not run when every file is; each
 *     table is written once, adopted and hashed rows together.
 *  4. With zones (`granularity="row_group"`), the map side also builds one
 *     filter per row group and column (`ZoneTracker`); they go to partitions
 *     of their own in the same shuffle, and a third job over it writes the
 *     zone table (`ZoneTable`) once the other two are done.
 */
object IndexBuild {
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)

  def build(df: DataFrame, request: BuildRequest): BuildSummary = {
    val spark = df.sparkSession
    val sc = spark.sparkContext
    val columnTypes = request.valueColumns.map(c => df.schema(df.schema.fieldIndex(resolveName(df, c))).dataType)
    request.valueColumns.zip(columnTypes).foreach { case (c, dt) =>
      if (!ParquetHash.isSupported(dt)) throw new IllegalArgumentException(s"column '$c' has unsupported type $dt")
    }
    request.grams.foreach { case (c, _, _) =>
      val dt = df.schema(df.schema.fieldIndex(resolveName(df, c))).dataType
      if (!dt.isInstanceOf[StringType]) throw new IllegalArgumentException(s"substring column '$c' has type $dt")
    }

    // Files whose own Parquet filters can stand for a hashed build are adopted first; the scan reads the rest.
    val begun = System.nanoTime()
    val adoption = Adoption.of(df, request, request.valueColumns.map(c => resolveName(df, c)), columnTypes)
    val started = System.nanoTime()
    log.info(f"${request.description}: ${adoption.adopted.size} files' filters adopted from their Parquet " +
      f"Bloom filters (${(started - begun) / 1e9}%.2f s); hashed: " +
      adoption.hashedWhy.map { case (why, n) => s"$n ($why)" }.mkString(", "))
    val hashedFiles = request.files.filterNot(f => adoption.adopted(f.fileId))
    val noScan = adoption.adopted.nonEmpty && hashedFiles.isEmpty
    val (scanStats, global, distinct, sealedGlobal) = if (noScan) {
      // Every file adopted: no scan, no job over data pages; the tables are the adopted files' rows.
      IndexTables.writeStoredFileTable(adoption.fileTable(spark).get, request.dataPath, "errorifexists")
      if (request.zones) {
        ZoneTable.writeStored(adoption.zoneTable(spark).getOrElse(spark.createDataFrame(
          java.util.Collections.emptyList[Row](), TableSchemas.StoredZoneTable)), request.dataPath, "errorifexists")
      }
      (Nil, Map.empty[String, (Long, Long)], Map.empty[String, Long], None)
    } else scanAndWrite(df, request, columnTypes, hashedFiles, adoption)
    val written = System.nanoTime()

    // Files that produced no rows (empty, or every row deleted) get an empty filter.
    val stats = scanStats ++ adoption.stats
    val indexed = stats.map(_.fileId).toSet
    val missing = request.files.filterNot(f => indexed.contains(f.fileId))
    val emptyFilter = Sbbf.ofBytes(Sbbf.MinBytes).toBytes
    if (missing.nonEmpty) {
      val rows = for (f <- missing; c <- request.columns) yield Row(f.fileId, f.path, f.size, f.mtime, c, 0L, 0L, 0L, emptyFilter)
      BuildTables.writeFileRows(spark, sc.parallelize(rows, 1), request, "append", None)
    }
    val allStats = stats ++ (for (f <- missing; c <- request.columns) yield FileStats(f.fileId, c, 0, 0, 0, emptyFilter.length))
    sealedGlobal.foreach(EncryptedColumns.writeSealedGlobal(spark, _, global, allStats, request))
    val done = System.nanoTime()
    log.info(f"${request.description}: ${if (noScan) "no scan, " else "scan, "}file-level table, zones and " +
      f"global filters ${(written - started) / 1e9}%.2f s, " +
      f"empty files ${(done - written) / 1e9}%.2f s")
    val dataPath = new Path(request.dataPath)
    val indexBytes = dataPath.getFileSystem(spark.sessionState.newHadoopConf()).getContentSummary(dataPath).getLength
    BuildSummary.of(request, allStats, global, distinct, indexBytes, adoption)
  }

  /**
   * Scans `hashedFiles` (all listed files when none was adopted), hashes their values and writes the
   * file table, the global filters and the zones, each table in one write with the adopted files' rows
   * (`adoption`). Returns the scanned files' statistics, the global filters' sizes, and without global filters per
   * column the distinct count over the scanned files (every map task's HyperLogLog, merged on the driver).
   */
  private def scanAndWrite(df: DataFrame, request: BuildRequest, columnTypes: Seq[DataType],
      hashedFiles: Seq[SourceFile], adoption: Adoption.Outcome)
      : (Seq[FileStats], Map[String, (Long, Long)], Map[String, Long], Option[DataFrame]) = {
    val spark = df.sparkSession
    val sc = spark.sparkContext
    val scanned = if (adoption.adopted.isEmpty) df
      else BuildInput.of(df, Some(hashedFiles.map(_.path)))
    val listing = sc.broadcast(request.files.map(f => FileKey.listed(f.path) -> f).toMap)
    val filePartitions = math.max(1, math.min(request.files.size, sc.defaultParallelism))
    val globalPartitions = if (!request.globalFilter) 0 else {
      // One task per 128 MiB of source, so a small source does not pay for many small writes, but
      // never more than 32 buckets per task (its slices at the largest filter size: 64 MiB) and at
      // most 4 tasks per core.
      val bySize = (request.files.map(_.size).sum / (128L << 20) + 1).toInt
      val columns = request.valueColumns.size
      math.min(NumBuckets * columns, math.max(2 * columns, math.min(bySize, 4 * sc.defaultParallelism)))
    }
    // The scan reads the value columns (ordinals 0 until their number), then the substring columns not among them.
    val scanColumns = (request.valueColumns ++ request.grams.map(_._1)).map(c => resolveName(scanned, c)).distinct
    val settings = MapSettings(columnTypes.toArray, request.expectedNumItems, request.fileFpp, request.globalFilter,
      request.maxBufferedHashes, globalPartitions, request.sharedFpp,
      request.grams.map { case (c, n, lower) => (scanColumns.indexOf(resolveName(scanned, c)), n, lower) }.toArray)
    val zonePartitions = if (request.zones) filePartitions else 0
    // The zones' footers are read as the scan reads the files: with the read's options (an encrypted source's
    // crypto factory and KMS settings may be given only there).
    val readOptions = scanned.queryExecution.analyzed.collectFirst { case FileRelation(_, fs, _, _) => fs.options }
      .getOrElse(Map.empty[String, String])
    val hadoopConf = if (!request.zones) None else Some(
      sc.broadcast(new SerializableConfiguration(spark.sessionState.newHadoopConfWithOptions(readOptions))))
    // Without a global filter the map tasks' distinct counters come to the driver (with one, to its reducers).
    val sketches = if (request.globalFilter) None else Some(DistinctSketches.registered(sc, request.columns.size))
    val mapped: RDD[(BuildKey, Payload)] = ScanInput.of(scanned, scanColumns)
      .mapPartitions { chunks =>
        val zones = hadoopConf.map(conf => new ZoneTracker(settings, conf.value.value))
        new MapSide(chunks, settings, listing.value, zones, sketches)
      }
    val partitioner = new BuildPartitioner(filePartitions, globalPartitions, zonePartitions)
    val shuffled = new ShuffledRDD[BuildKey, Payload, Payload](mapped, partitioner)
      .setSerializer(new BuildRecordSerializer)

    // Two jobs over the one shuffle, run at the same time: the file-level table
    // (this thread; its map stage is the scan) and the global filters (a second
    // thread, whose job waits for the same map stage instead of scanning again).
    val fileStats = sc.collectionAccumulator[FileStats]("hsbloom file statistics")
    val fileRows = PartitionPruningRDD.create(shuffled, _ < filePartitions)
      .mapPartitions(records => FileFilters.reduce(records, settings, request.columns).map { row =>
        fileStats.add(FileStats(row.getLong(0), row.getString(4), row.getLong(5), row.getLong(6), row.getLong(7),
          row.getAs[Array[Byte]](8).length))
        row
      })
    val (_, (global, sealedGlobal)) = Alongside.run(sc) {
      if (request.globalFilter) buildGlobal(spark, request, shuffled, filePartitions, globalPartitions)
      else (Map.empty[String, (Long, Long)], None)
    } {
      BuildTables.writeFileRows(spark, fileRows, request, "errorifexists", adoption.fileTable(spark))
    }
    if (request.zones) {
      val columns = request.columns
      val zoneRows = PartitionPruningRDD.create(shuffled, _ >= filePartitions + globalPartitions)
        .mapPartitions(_.map {
          case (k: ZoneKey, z: ZoneResult) => Row(z.file.fileId, z.file.path, z.file.size, z.file.mtime,
            columns(k.column), z.rows, z.nulls, z.ndv, z.filter, z.rowGroup, z.rowGroups, z.start, z.length)
          case (k, p) => throw new IllegalStateException(s"unexpected $k / ${p.getClass.getSimpleName} in a zone partition")
        })
      BuildTables.writeZoneRows(spark.createDataFrame(zoneRows, TableSchemas.ZoneInput), request, adoption.zoneTable(spark))
    }
    (fileStats.value.asScala.toSeq, global, sketches.fold(Map.empty[String, Long])(_.estimates(request.columns)),
      sealedGlobal)
  }

  /**
   * Builds each column's global filter from the bucket partitions and writes
   * the global table. Each bucket's reducer fills its own block range and
   * writes it as one chunk (bucket 0's chunk starts with the header), so no
   * filter passes through the driver. The size comes from the distinct
   * counters every map task sends to every bucket partition (see
   * `GlobalReducer`); each reducer reports the size it used, which must agree.
   * Returns per column (distinct estimate, serialized bytes), and the sealed
   * columns' chunks (`request.sealing`), cached, for `SealedGlobal.write` once
   * their counts are known: none of them is in the plaintext global table.
   */
  private def buildGlobal(
      spark: SparkSession,
      request: BuildRequest,
      shuffled: RDD[(BuildKey, Payload)],
      filePartitions: Int,
      globalPartitions: Int): (Map[String, (Long, Long)], Option[DataFrame]) = {
    val columns = request.valueColumns
    val fixedBlocks = columns.map(c => request.globalFilterBlocks.getOrElse(c, 0)).toArray
    val (sharedFpp, heldHashes) = (request.sharedFpp, request.globalHeldHashes)
    val sizes = spark.sparkContext.collectionAccumulator[(Int, Long, Int)]("hsbloom global filter sizes")
    val chunks = PartitionPruningRDD.create(shuffled, p => p >= filePartitions && p < filePartitions + globalPartitions)
      .mapPartitionsWithIndex { case (index, records) =>
        // A pruned RDD numbers its partitions from 0: index i is bucket partition i.
        val owned = for {
          c <- columns.indices
          b <- 0 until NumBuckets
          if bucketPartition(c, b, globalPartitions) == index
        } yield BucketKey(c, b)
        val reducer = new GlobalReducer(owned, fixedBlocks, sharedFpp, heldHashes)
        records.foreach {
          case (k: BucketKey, BucketHashes(hashes)) => reducer.add(k, hashes)
          case (_: SketchKey, Sketches(s)) => reducer.merge(s)
          case (k, p) => throw new IllegalStateException(s"unexpected $k / ${p.getClass.getSimpleName} in a bucket partition")
        }
        val (rows, used) = reducer.finish(columns)
        used.foreach(sizes.add)
        rows
      }
    val all = spark.createDataFrame(chunks, TableSchemas.GlobalTable)
    val sealedColumns = request.sealedColumns.toSeq
    val sealedChunks = if (sealedColumns.isEmpty) None else Some(
      all.persist(org.apache.spark.storage.StorageLevel.MEMORY_AND_DISK))
    import org.apache.spark.sql.functions.col
    val plain = sealedChunks.fold(all)(_.where(!col("column").isin(sealedColumns: _*)))
    try IndexTables.writeGlobalTable(plain, request.dataPath, "errorifexists") catch {
      case e: Throwable => sealedChunks.foreach(_.unpersist()); throw e
    }
    val reported = sizes.value.asScala.toSeq.groupBy(_._1)
    columns.indices.map { c =>
      val agreed = reported.getOrElse(c, Nil).map { case (_, ndv, blocks) => (ndv, blocks) }.distinct
      if (agreed.size != 1) {
        throw new IllegalStateException(s"global filter of '${columns(c)}': the bucket tasks reported sizes $agreed")
      }
      val (ndv, blocks) = agreed.head
      columns(c) -> (ndv, Sbbf.header(blocks * 32).length + blocks * 32L)
    }.toMap -> sealedChunks.map(_.where(col("column").isin(sealedColumns: _*)))
  }

  private def resolveName(df: DataFrame, name: String): String = {
    val resolver = df.sparkSession.sessionState.conf.resolver
    df.schema.fieldNames.find(resolver(_, name))
      .getOrElse(throw new IllegalArgumentException(
        s"column '$name' is not in the DataFrame; available: ${df.schema.fieldNames.mkString(", ")}"))
  }
}
