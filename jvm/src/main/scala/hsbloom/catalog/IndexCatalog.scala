package hsbloom.catalog

import java.io.FileNotFoundException
import java.util.concurrent.TimeUnit

import scala.annotation.nowarn
import scala.util.control.NonFatal

import com.google.common.cache.{Cache, CacheBuilder}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.AttributeReference
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.types.StringType
import org.slf4j.LoggerFactory

import hsbloom.conf.HsbloomConf
import hsbloom.format.{FileKey, Layout, ReadFacts, ReadOptions}
import hsbloom.index.{IndexData, SealedTable, WeighedCache}
import hsbloom.log.IndexLog
import hsbloom.sbbf.ParquetHash
import hsbloom.shim.FileSources

/**
 * Which indexes are ACTIVE, which of them cover a relation, and their data,
 * for query planning. Everything here is cached in the JVM:
 *
 *  - the list of ACTIVE indexes of a system path, for
 *    `spark.hsbloom.catalog.refreshIntervalMs`, because finding
 *    it costs a listing of every index's log directory (a few ms an index:
 *    with a hundred indexes under the path, a few hundred ms). Past the
 *    interval a query still uses the list it has and the list is read again
 *    in the background (`DriverPool`), so no query waits for it but the first
 *    (and every one with an interval of 0). `invalidate()` (called
 *    by `Hyperspace` after each index operation of this process) drops it at once,
 *    and a background read begun before is not kept; changes made by other
 *    processes are seen within the interval and one read;
 *  - the file-level table of each index version (immutable once its log entry
 *    is ACTIVE) without its filters, in a cache bounded by
 *    `spark.hsbloom.cache.maxBytes` (least recently used
 *    first out), and per loaded version the filter blocks probes have read,
 *    up to `spark.hsbloom.cache.blockBytes`;
 *  - a version that failed to load, for the refresh interval, so a broken
 *    index costs one warning, not one failed read per query.
 *
 * Using a cached, older version is never wrong: every index row carries its
 * file's size and modification time, and a file that does not match them is
 * read (see `IndexData.slotOf`).
 */
object IndexCatalog {
  private val log = LoggerFactory.getLogger(getClass)

  /**
   * An ACTIVE index version: its log entry and the data directories it reads,
   * oldest first (several after incremental refreshes that referred to earlier
   * versions' data instead of copying it; docs/refresh.md).
   */
  final case class ActiveIndex(entry: IndexLog.Entry, dataPaths: Seq[String]) {
    /** What identifies the version's data: its directories and the file ids dropped from their tables. */
    def dataKey: DataKey = DataKey(dataPaths, entry.droppedFileIds)
  }

  /** The data of an index version (directories are written once, so this never names two contents). */
  final case class DataKey(dataPaths: Seq[String], droppedFileIds: Set[Long], crypto: String = "")

  private final case class Listing(at: Long, indexes: Seq[ActiveIndex])
  private val listings = new java.util.concurrent.ConcurrentHashMap[String, Listing]()
  private val reading = java.util.concurrent.ConcurrentHashMap.newKeySet[String]() // system paths read in the background
  private val generation = new java.util.concurrent.atomic.AtomicLong() // bumped by invalidate()

  @volatile private var dataCache: WeighedCache[DataKey, IndexData] = _
  @volatile private var dataMaxBytes = 0L
  private val loadCount = new java.util.concurrent.atomic.AtomicLong()
  private val tooLarge = java.util.concurrent.ConcurrentHashMap.newKeySet[DataKey]() // warned about once

  /**
   * How many index versions this JVM has loaded (read from storage) for planning: a query served from the
   * loaded-data cache adds none. For tests and diagnostics.
   */
  def loads: Long = loadCount.get

  @volatile private var failures: Cache[DataKey, String] = _

  /** Forgets which indexes are ACTIVE (and failed loads), so the next query reads the logs again. */
  def invalidate(): Unit = {
    generation.incrementAndGet()
    listings.clear()
    Option(failures).foreach(_.invalidateAll())
  }

  /** Also drops the loaded index data (for tests and after vacuum). */
  def invalidateAll(): Unit = {
    invalidate()
    Option(dataCache).foreach(_.invalidateAll())
  }

  /** The qualified system path of this session's indexes. */
  def systemPath(spark: SparkSession): Path = qualify(spark, Layout.systemPath(spark))

  private def qualify(spark: SparkSession, raw: String): Path = {
    val p = new Path(raw)
    p.getFileSystem(spark.sessionState.newHadoopConf()).makeQualified(p)
  }

  /**
   * Every ACTIVE index under the session's system path (cached for the refresh
   * interval, keyed by the configured path, so the optimizer's many calls cost
   * a map lookup).
   */
  def activeIndexes(spark: SparkSession): Seq[ActiveIndex] = {
    val raw = Layout.systemPath(spark)
    val ttl = HsbloomConf.CatalogRefreshIntervalMs.get(spark)
    val cached = listings.get(raw)
    if (cached == null || ttl <= 0) {
      val (at, seen) = (System.currentTimeMillis(), generation.get)
      val found = readActive(spark, qualify(spark, raw))
      if (generation.get == seen) listings.put(raw, Listing(at, found))
      found
    } else {
      if (System.currentTimeMillis() - cached.at >= ttl && reading.add(raw)) {
        val seen = generation.get
        try {
          hsbloom.index.DriverPool.submit { () =>
            try {
              val at = System.currentTimeMillis()
              val found = readActive(spark, qualify(spark, raw))
              // Not over a newer list, nor over what an index operation of this process has invalidated since.
              if (generation.get == seen) listings.put(raw, Listing(at, found))
            } catch {
              case NonFatal(e) => log.warn(s"hsbloom: cannot list the indexes under $raw ($e); using the last list")
            } finally reading.remove(raw)
          }
        } catch { case NonFatal(e) => reading.remove(raw); throw e }
      }
      cached.indexes
    }
  }

  private def readActive(spark: SparkSession, root: Path): Seq[ActiveIndex] = {
    val conf = spark.sessionState.newHadoopConf()
    val fs = root.getFileSystem(conf)
    val dirs = try fs.listStatus(root).toSeq.filter(_.isDirectory).map(_.getPath) catch {
      case _: FileNotFoundException => Nil
    }
    dirs.sortBy(_.getName).flatMap { dir =>
      try {
        IndexLog.latestStable(dir, conf).filter(_.state == Layout.Active).flatMap { e =>
          if (e.dataParts.isEmpty) {
            log.warn(s"hsbloom: index ${e.describe} is ACTIVE but its log entry has no data_version; not used")
            None
          } else {
            // From where the log is (not the recorded data_path), so a moved system path still works.
            Some(ActiveIndex(e, e.dataParts.map(v => IndexLog.dataDirectory(dir, v).toString)))
          }
        }
      } catch {
        case NonFatal(e) =>
          log.warn(s"hsbloom: cannot read the log of index ${dir.getName} ($e); it is not used for pruning")
          None
      }
    }
  }

  /**
   * An indexed column as the relation sees it: the relation's attribute and the index that covers it, with its
   * values' filters (`indexColumn` the stored key), or with `ngram` its substring filter (docs/substring.md), with
   * `lower` of its lower-cased values.
   */
  final case class CoveredColumn(attribute: AttributeReference, index: ActiveIndex, indexColumn: String,
      ngram: Option[Int] = None, lower: Boolean = false, advice: Option[String] = None) {
    /** The name a `FilePredicate` gives the check (`PredicateTranslation`): the attribute's, or its grams'. */
    def predicateKey: String =
      ngram.fold(attribute.name)(n => IndexCatalog.gramPredicateKey(attribute.name, n, lower))
  }

  /** The predicate key of `column`'s `n`-gram filter: with a `Nul`, which `coverage` requires no column name to hold. */
  def gramPredicateKey(column: String, n: Int, lower: Boolean): String =
    column + Nul + "ngram" + n + (if (lower) s"${Nul}lower" else "")
  val Nul: Char = 0.toChar

  /**
   * How an ACTIVE index built over the same files (same format and root paths) stands to a relation: the relation's
   * columns it covers, or why it covers none (for `hs.explain`); `grams` those it covers with substring filters.
   */
  final case class Coverage(index: ActiveIndex, covered: Seq[CoveredColumn], whyNot: Option[String],
      grams: Seq[CoveredColumn] = Nil)

  /**
   * The columns of `relation` (with output `output`) that ACTIVE indexes cover.
   * An index covers a relation when it was built from the same source: the
   * same format, the same root paths and the same read options; when the
   * relation is read with the same facts the index recorded (`ReadFacts`:
   * schema, column mapping, the session settings that change values); and a
   * column only when the relation reads it with the type the index was built
   * with (a user-given schema that reads `id` as a string must not be probed
   * with hashes of longs).
   */
  def coveredColumns(spark: SparkSession, relation: HadoopFsRelation, output: Seq[AttributeReference]): Seq[CoveredColumn] =
    coverage(spark, relation, output).flatMap(_.covered)

  /** `coveredColumns` and the substring filters' columns: only a scan's own filters read the latter (not joins). */
  def coveredForFilters(spark: SparkSession, relation: HadoopFsRelation, output: Seq[AttributeReference])
      : Seq[CoveredColumn] =
    coverage(spark, relation, output).flatMap(c => c.covered ++ c.grams)

  /** Every ACTIVE index over the files `relation` reads, with what it covers or why not. */
  def coverage(spark: SparkSession, relation: HadoopFsRelation, output: Seq[AttributeReference]): Seq[Coverage] = {
    val indexes = activeIndexes(spark)
    if (indexes.isEmpty) return Nil
    val format = formatName(relation)
    val roots = relation.location.rootPaths.map(p => FileKey.of(p.toUri)).toSet
    val resolver = spark.sessionState.conf.resolver
    indexes.filter { i =>
      i.entry.format == format && i.entry.rootKeys == roots
    }.map { i =>
      val optionsDiffer = ReadOptions.difference(i.entry.options, relation.options, spark.sessionState.conf)
      val whyNot = if (optionsDiffer.isDefined) optionsDiffer else i.entry.readFacts match {
        case None => Some("the index records no read settings (it was built by an older hsbloom); run " +
          s"refresh_index('${i.entry.indexName}', 'full')")
        case Some(recorded) =>
          try ReadFacts.differenceWhereRead(recorded, ScanFacts.of(spark, relation, format, i.entry.sourceColumns))
          catch { case NonFatal(e) => Some(e.getMessage) }
      }
      val covered = if (whyNot.isDefined) Nil else i.entry.indexedColumns.flatMap { c =>
        output.find(a => resolver(a.name, c)).filter { a =>
          i.entry.schema.get(c).contains(a.dataType.simpleString) && ParquetHash.isSupported(a.dataType)
        }.map(CoveredColumn(_, i, c))
      }
      // A string of the binary collation, as indexed; no attribute's name may hold the predicate keys' NUL.
      val allGrams = if (whyNot.isDefined || output.exists(_.name.contains(Nul))) Nil else i.entry.grams.flatMap { g =>
        output.find(a => resolver(a.name, g.source)).filter { a =>
          a.dataType == StringType && i.entry.schema.get(g.source).contains(a.dataType.simpleString)
        }.map(CoveredColumn(_, i, g.key, g.ngram, g.lower))
      }
      Coverage(i, covered, whyNot, allGrams.map(g => g.copy(advice =
        i.entry.columnSummaries.get(g.indexColumn).flatMap(_.filledAdvice(g.indexColumn, i.entry.numFiles)))))
    }
  }


  /** The format's short name, as the index log records it ("delta" for Delta tables). */
  def formatName(relation: HadoopFsRelation): String = FileSources.formatName(relation)

  /**
   * The loaded file-level tables of an index version (the union of its parts'
   * tables without the dropped file ids). Throws when it cannot be
   * read; a version that failed is not tried again within the refresh interval.
   */
  def indexData(spark: SparkSession, index: ActiveIndex): IndexData = {
    ensureCaches(spark)
    // Decrypted filters (`SealedTable`) serve only sessions with the same crypto settings.
    val hadoopConf = spark.sessionState.newHadoopConf()
    val dataKey = index.dataKey.copy(crypto = SealedTable.cryptoSettings(hadoopConf))
    Option(failures.getIfPresent(dataKey)).foreach { reason =>
      throw new IllegalStateException(s"index ${index.entry.describe} failed to load recently: $reason")
    }
    try {
      dataCache.get(dataKey) {
        val started = System.nanoTime()
        val blockBytes = HsbloomConf.CacheBlockBytes.get(spark)
        val data = IndexData.load(index.dataPaths, index.entry.droppedFileIds, hadoopConf, blockBytes)
        loadCount.incrementAndGet()
        log.info(f"hsbloom: loaded index ${index.entry.describe}: ${data.numFiles} files, ${data.bytes} bytes in " +
          f"${(System.nanoTime() - started) / 1e6}%.1f ms")
        if (data.bytes > dataMaxBytes && tooLarge.add(dataKey)) {
          log.warn(s"hsbloom: index ${index.entry.describe} takes ${data.bytes} bytes loaded (its encrypted " +
            s"columns' filters count whole), more than ${HsbloomConf.CacheMaxBytes.key}=$dataMaxBytes: it is " +
            "not kept, and every query loads it again; raise the setting")
        }
        if (data.corruptFilters > 0) {
          log.warn(s"hsbloom: index ${index.entry.describe} has ${data.corruptFilters} corrupt filters; " +
            "their files are always read")
        }
        data
      }
    } catch {
      case NonFatal(e) =>
        failures.put(dataKey, e.toString)
        throw e
    }
  }

  private def ensureCaches(spark: SparkSession): Unit = synchronized {
    if (dataCache == null) {
      dataMaxBytes = HsbloomConf.CacheMaxBytes.get(spark)
      dataCache = WeighedCache[DataKey, IndexData](dataMaxBytes, _.bytes)
      failures = failureCache(math.max(HsbloomConf.CatalogRefreshIntervalMs.get(spark), 1L))
    }
  }

  /**
   * Failed loads, each kept `ttlMs`. By the (long, TimeUnit) form of `expireAfterWrite`: Guava 14 (Spark 3.5's)
   * has no `Duration` one, and Guava 33 deprecates this one.
   */
  @nowarn("cat=deprecation")
  private def failureCache(ttlMs: Long): Cache[DataKey, String] =
    CacheBuilder.newBuilder().expireAfterWrite(ttlMs, TimeUnit.MILLISECONDS).build[DataKey, String]()
}
