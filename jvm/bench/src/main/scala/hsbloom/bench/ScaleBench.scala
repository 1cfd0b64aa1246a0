package hsbloom.bench

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.{FileStatusWithMetadata, PartitionDirectory}

import hsbloom.format.TableSchemas
import hsbloom.index.{IndexData, IndexTables}
import hsbloom.pruning.PredicateTranslation.Probe
import hsbloom.pruning.SlotPredicates
import hsbloom.sbbf.Sbbf

/**
 * Planning over a synthetic index of many files (bench/scale.py's 1,000,000
 * files): a real file table and real `blocks/` side files written here (one
 * indexed column, each file's filter of `bitsetBytes` holding
 * `valuesPerFile` random values), loaded by `IndexData.load` as planning
 * loads a version, and a synthetic listing of the same files. It times what
 * `PrunedFileIndex.prune` does after translating the filters: the load (the
 * first query of a version), the listing's slots, and the predicate over all
 * slots; no Spark query runs, so no Spark planning is in these figures.
 */
object ScaleBench {
  private val Column = "k"
  private var loaded = false

  /** Writes the synthetic version at `<dir>/synthetic/v__=0` once (kept for later runs); returns its data path. */
  def write(spark: SparkSession, dir: String, files: Int, valuesPerFile: Int, bitsetBytes: Int): String = {
    val dataPath = new Path(dir, s"synthetic_${files}_${bitsetBytes}/v__=0").toString
    val conf = spark.sessionState.newHadoopConf()
    val done = new Path(IndexTables.filesPath(dataPath), "_SUCCESS")
    if (done.getFileSystem(conf).exists(done)) return dataPath
    // Rows made by tasks (not gathered in the driver, whose heap the run measures).
    val rows = spark.range(0, files, 1, 8).map { (id: java.lang.Long) =>
      val f = id.intValue
      val sbbf = Sbbf.ofBytes(bitsetBytes)
      (0 until valuesPerFile).foreach(v => sbbf.insertHash(valueHash(f, v)))
      Row(f.toLong, path(f), 1000L + f, 7L, Column, valuesPerFile.toLong, 0L, valuesPerFile.toLong, sbbf.toBytes)
    }(org.apache.spark.sql.Encoders.row(TableSchemas.FileTable))
    IndexTables.writeFileTable(rows.toDF(), dataPath, "errorifexists")
    dataPath
  }

  /** The `v`-th value of synthetic file `f`, as a hash (values are spread evenly; no two files share one). */
  def valueHash(f: Int, v: Int): Long = hsbloom.sbbf.ParquetHash.hashValue((f.toLong << 20) | v,
    org.apache.spark.sql.types.LongType)

  private def path(f: Int): String = f"file:/synthetic/data/part-$f%07d.parquet"

  /**
   * Milliseconds of: loading the version (first query), the first listing's
   * slots (hashing every path), `=` and IN of `inValues` over the same
   * listing objects (later queries: median of `rounds`), and a new listing
   * (its paths hashed again); with the files kept and the loaded index's
   * estimated bytes and the heap it took. A string of `name=value` fields.
   */
  def run(spark: SparkSession, dataPath: String, files: Int, inValues: Int, rounds: Int): String = {
    val cold = !loaded // the JVM's first load: its code not compiled yet
    loaded = true
    val conf = spark.sessionState.newHadoopConf()
    System.gc()
    val heapBefore = usedHeap()
    val threads = java.lang.management.ManagementFactory.getThreadMXBean
    // The process's CPU: the load runs on the driver's pool (DriverPool), and GC and the JIT count too.
    val process = java.lang.management.ManagementFactory.getOperatingSystemMXBean
      .asInstanceOf[com.sun.management.OperatingSystemMXBean]
    val loadCpu = process.getProcessCpuTime
    var t = System.nanoTime()
    val data = IndexData.load(Seq(dataPath), Set.empty, conf, 256L << 20)
    val loadMs = (System.nanoTime() - t) / 1e6
    val loadCpuMs = (process.getProcessCpuTime - loadCpu) / 1e6
    System.gc()
    val heapIndex = usedHeap() - heapBefore
    val listing = synthetic(files)
    t = System.nanoTime()
    val firstKept = query(data, listing, Array(valueHash(files / 2, 0)))
    val firstMs = (System.nanoTime() - t) / 1e6
    var eqCpuMs = 0.0
    def timed(hashes: Array[Long], fresh: Boolean): (Double, Int) = {
      val times = (0 until rounds).map { _ =>
        val l = if (fresh) synthetic(files) else listing
        val (start, cpu) = (System.nanoTime(), threads.getCurrentThreadCpuTime)
        val kept = query(data, l, hashes)
        eqCpuMs = (threads.getCurrentThreadCpuTime - cpu) / 1e6 // this thread's CPU: the machine's load counts little
        ((System.nanoTime() - start) / 1e6, kept)
      }.sortBy(_._1)
      times(times.size / 2)
    }
    val random = new scala.util.Random(18)
    val eq = Array(valueHash(random.nextInt(files), 0))
    val in = Array.fill(inValues)(valueHash(random.nextInt(files), 1))
    val (eqMs, eqKept) = timed(eq, fresh = false)
    val eqCpu = eqCpuMs
    val (inMs, inKept) = timed(in, fresh = false)
    val (freshMs, _) = timed(eq, fresh = true)
    Seq("files" -> files, "cold" -> cold, "load_ms" -> f"$loadMs%.1f", "load_cpu_ms" -> f"$loadCpuMs%.1f",
      "first_query_ms" -> f"${loadMs + firstMs}%.1f",
      "first_kept" -> firstKept, "eq_ms" -> f"$eqMs%.2f", "eq_cpu_ms" -> f"$eqCpu%.2f", "eq_kept" -> eqKept, "in_ms" -> f"$inMs%.2f",
      "in_kept" -> inKept, "new_listing_eq_ms" -> f"$freshMs%.2f", "index_bytes_estimate" -> data.bytes,
      "index_heap_bytes" -> heapIndex).map { case (k, v) => s"$k=$v" }.mkString(" ")
  }

  /** Where the first query's time goes at `dataPath` (`LoadProfile`): `name=value` fields. */
  def profileLoad(spark: SparkSession, dataPath: String, files: Int, rounds: Int): String =
    LoadProfile.run(spark, dataPath, files, rounds)

  /**
   * The loaded index of these data paths (comma-separated) in the driver: "estimate N bytes, heap M bytes",
   * the heap as the mean over 3 copies loaded side by side (one copy's figure drowns in what else the driver
   * frees meanwhile: Spark's listeners, the catalog's caches).
   */
  def memory(spark: SparkSession, dataPaths: String): String = {
    val load = () => IndexData.load(dataPaths.split(",").toSeq, Set.empty, spark.sessionState.newHadoopConf(), 256L << 20)
    load() // code and classes loaded before measuring
    val before = usedHeap()
    val copies = Seq.fill(3)(load())
    val heap = (usedHeap() - before) / copies.size
    f"${copies.head.numFiles}%,d files: estimate ${copies.head.bytes}%,d bytes, heap $heap%,d bytes"
  }

  /** The heap in use after full collections (several: G1 may leave garbage after one). */
  private def usedHeap(): Long = {
    val runtime = Runtime.getRuntime
    (0 until 3).foreach(_ => System.gc())
    runtime.totalMemory - runtime.freeMemory
  }

  /** What `PrunedFileIndex.prune` does for one version and one probe: slots, predicate, the kept listing. */
  private def query(data: IndexData, listing: Seq[PartitionDirectory], hashes: Array[Long]): Int = {
    val slots = Array(data.listings.slotsOf(listing))
    val compiled = SlotPredicates.compile(Probe(Column, hashes), IndexedSeq(data), _ => Seq(0 -> Column))
    // As PrunedFileIndex keeps the listed files that may match.
    val kept = Vector.newBuilder[FileStatusWithMetadata]
    var i = 0
    listing.head.files.foreach { f => if (compiled.mayMatch(slots, i)) kept += f; i += 1 }
    kept.result().size
  }

  /**
   * Plans `df` to an RDD (Spark's whole planning, file listing included; no
   * job runs) and returns "spark_ms hsbloom_ms files_before files_after"
   * (hsbloom's figures from the pruned scan's report, -1 when no scan was pruned).
   */
  def plan(df: hsbloom.shim.ClassicDataset[_]): String = {
    val fresh = df.select("*").asInstanceOf[hsbloom.shim.ClassicDataset[_]]
    val start = System.nanoTime()
    fresh.queryExecution.toRdd
    val sparkMs = (System.nanoTime() - start) / 1e6
    val reports = fresh.queryExecution.executedPlan.collect {
      case s: org.apache.spark.sql.execution.FileSourceScanExec => s.relation.location
    }.collect { case p: hsbloom.pruning.PruningFileIndex => p.lastReport }.flatten
    reports.headOption.map(r => f"$sparkMs%.2f ${r.millis.getOrElse(-1.0)}%.2f ${r.filesBefore} ${r.filesAfter}")
      .getOrElse(f"$sparkMs%.2f -1 -1 -1")
  }

  private[bench] def synthetic(files: Int): Seq[PartitionDirectory] = Seq(PartitionDirectory(InternalRow.empty,
    (0 until files).map(f => FileStatusWithMetadata(new FileStatus(1000L + f, false, 1, 1L, 7L, new Path(path(f)))))))
}
