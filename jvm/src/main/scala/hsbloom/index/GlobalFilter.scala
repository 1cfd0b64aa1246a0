package hsbloom.index

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.spark.SparkEnv
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types._
import org.slf4j.LoggerFactory

import hsbloom.sbbf.{ParquetHash, Sbbf}
import hsbloom.conf.HsbloomConf

/**
 * One column's global filter of one index version: where it lives, not its
 * bytes. An injected join filter carries this (a few hundred bytes in the plan)
 * and each executor JVM loads the filter once, from the index's data
 * directories, through the Hadoop FileSystem (docs/joins.md). A version made
 * of several data directories (docs/refresh.md) has one filter per directory,
 * all of one size; the version's filter is their OR. An encrypted column's
 * (`sealedCopy`) is not read from storage by executors: it is the driver's
 * decrypted copy, broadcast (`SealedGlobal.Plain`).
 */
final case class GlobalFilterRef(dataPaths: Seq[String], column: String, indexName: String, filterBytes: Long,
    sealedCopy: Option[SealedGlobal.Plain] = None) {
  def describe: String = s"global filter of $indexName.$column ($filterBytes bytes)"
}

/** Loading and caching global filters in a JVM (driver or executor). */
object GlobalFilter {
  private val log = LoggerFactory.getLogger(getClass)

  /** A validated serialized SBBF: the bitset is `numBytes` at `offset` of `serialized`. */
  final case class Loaded(serialized: Array[Byte], offset: Int, numBytes: Int) {
    def mightContain(hash: Long): Boolean = Sbbf.mightContainHashInBitset(serialized, offset, numBytes, hash)
  }

  @volatile private var cache: WeighedCache[GlobalFilterRef, Loaded] = _

  private def loaded: WeighedCache[GlobalFilterRef, Loaded] = {
    if (cache == null) synchronized {
      if (cache == null) {
        val max = Option(SparkEnv.get).map(env => HsbloomConf.JoinCacheMaxBytes.get(env.conf))
          .getOrElse(HsbloomConf.JoinCacheMaxBytes.default)
        cache = WeighedCache[GlobalFilterRef, Loaded](max, _.serialized.length.toLong)
      }
    }
    cache
  }

  /**
   * The filter, loaded once per JVM (index versions never change once ACTIVE,
   * so the data path is a safe key). Concurrent tasks wait for one load.
   * Throws when it cannot be read or is corrupt.
   */
  def load(ref: GlobalFilterRef): Loaded =
    loaded.get(ref) {
      val started = System.nanoTime()
      val (bytes, header) = ref.sealedCopy match {
        case Some(plain) => // decrypted by the driver with the session's keys; the cache key has its settings
          val bytes = plain.bytes.value
          require(bytes.length.toLong == ref.filterBytes, s"the ${ref.describe} has ${bytes.length} bytes")
          (bytes, Sbbf.parseHeader(bytes))
        case None => combined(ref, hadoopConf())
      }
      log.info(f"hsbloom: loaded the ${ref.describe} in ${(System.nanoTime() - started) / 1e6}%.1f ms")
      Loaded(bytes, header.headerLength, header.numBytes)
    }

  /**
   * The OR of the column's filters in `ref`'s data directories, with its
   * header. Throws unless every one parses and has the size the log recorded
   * (`filterBytes`): filters that do not line up are never mixed.
   */
  private def combined(ref: GlobalFilterRef, conf: Configuration): (Array[Byte], Sbbf.Header) = {
    val filters = ref.dataPaths.map(p => p -> IndexTables.readGlobalFilter(p, ref.column, conf))
    val checked = filters.map { case (path, bytes) =>
      val header = Sbbf.parseHeader(bytes)
      if (bytes.length.toLong != ref.filterBytes) {
        throw new IllegalStateException(s"the ${ref.describe} in $path has ${bytes.length} bytes, not the " +
          s"${ref.filterBytes} its log entry records; the index's data directories do not line up")
      }
      (bytes, header)
    }
    val (result, header) = checked.head
    checked.tail.foreach { case (bytes, h) =>
      require(h.headerLength == header.headerLength && h.numBytes == header.numBytes,
        s"the ${ref.describe}: filters of different shapes in ${ref.dataPaths.mkString(", ")}")
      var i = header.headerLength
      while (i < result.length) { result(i) = (result(i) | bytes(i)).toByte; i += 1 }
    }
    (result, header)
  }

  /** Hadoop settings as this JVM's Spark configuration gives them (`spark.hadoop.*`). */
  private def hadoopConf(): Configuration = {
    val conf = new Configuration()
    Option(SparkEnv.get).foreach(_.conf.getAll.foreach { case (k, v) =>
      if (k.startsWith("spark.hadoop.")) conf.set(k.stripPrefix("spark.hadoop."), v)
    })
    conf
  }

  /** Rows a task probes before it judges whether the filter pays (see `GlobalFilterContains`). */
  val SampleRows = 32768
  /** A task stops probing when more than this share of its sample passed. */
  val MaxPassRate = 0.9
}

/**
 * `value` (already in the indexed column's type) may be one of the indexed
 * side's keys: the injected join filter. A null `value` (a null key, or a key
 * with no exact equivalent in the column's type) gives `keepNulls`.
 *
 * It never drops a row that can join, so it may always answer true: when the
 * filter cannot be loaded (warned once per task), and when it does not pay.
 * Each task probes its first `SampleRows` rows; if more than `MaxPassRate` of
 * them pass, the filter drops too little to repay its probes, and the task
 * stops probing. So a join the filter cannot help costs a sample of probes and
 * one load per executor, not a probe per row.
 */
final case class GlobalFilterContains(child: Expression, ref: GlobalFilterRef, keepNulls: Boolean)
  extends UnaryExpression {

  override def dataType: DataType = BooleanType
  override def nullable: Boolean = false
  override def prettyName: String = "hsbloom_join_filter"
  override def toString: String = s"hsbloom_join_filter($child in ${ref.describe}${if (keepNulls) ", nulls kept" else ""})"
  override def sql: String = s"hsbloom_join_filter(${child.sql}, '${ref.indexName}.${ref.column}')"

  @transient private lazy val probe = new GlobalFilterContains.Probe(ref, child.dataType)

  override def eval(input: org.apache.spark.sql.catalyst.InternalRow): Any = {
    val v = child.eval(input)
    if (v == null) keepNulls else test(v)
  }

  /** Called by generated code, too. */
  def test(v: Any): Boolean = probe.test(v)
  def testLong(v: Long): Boolean = probe.testHash(ParquetHash.hashLong(v))
  def testInt(v: Int): Boolean = probe.testHash(ParquetHash.hashInt(v))

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val self = ctx.addReferenceObj("hsbloomJoinFilter", this, classOf[GlobalFilterContains].getName)
    val c = child.genCode(ctx)
    val call = child.dataType match {
      case LongType | TimestampType | TimestampNTZType => s"$self.testLong(${c.value})"
      case IntegerType | DateType => s"$self.testInt(${c.value})"
      case _ => s"$self.test(${c.value})"
    }
    ev.copy(code = code"""
      ${c.code}
      boolean ${ev.value} = ${c.isNull} ? $keepNulls : $call;""", isNull = FalseLiteral)
  }

  override protected def withNewChildInternal(newChild: Expression): GlobalFilterContains = copy(child = newChild)
}

object GlobalFilterContains {
  private val log = LoggerFactory.getLogger(classOf[GlobalFilterContains])

  /** One task's probing state: the loaded filter, and the sample that decides whether to go on. */
  final class Probe(ref: GlobalFilterRef, valueType: DataType) {
    private var filter: GlobalFilter.Loaded = _
    private var active = true
    private var seen = 0L
    private var passed = 0L

    private def ensureLoaded(): Boolean = {
      if (filter == null && active) {
        try filter = GlobalFilter.load(ref) catch {
          case NonFatal(e) =>
            log.warn(s"hsbloom: cannot load the ${ref.describe} ($e); this task keeps every row")
            active = false
        }
      }
      active
    }

    def testHash(h: Long): Boolean = {
      if (!ensureLoaded()) return true
      val hit = filter.mightContain(h)
      count(hit)
      hit
    }

    def test(v: Any): Boolean = valueType match {
      case FloatType =>
        val f = v.asInstanceOf[Float]
        if (f.isNaN) true
        else if (f == 0.0f) testHashes(ParquetHash.hashFloat(0.0f), ParquetHash.hashFloat(-0.0f))
        else testHash(ParquetHash.hashFloat(f))
      case DoubleType =>
        val d = v.asInstanceOf[Double]
        if (d.isNaN) true
        else if (d == 0.0) testHashes(ParquetHash.hashDouble(0.0), ParquetHash.hashDouble(-0.0))
        else testHash(ParquetHash.hashDouble(d))
      case _ => testHash(ParquetHash.hashValue(v, valueType))
    }

    private def testHashes(a: Long, b: Long): Boolean = {
      if (!ensureLoaded()) return true
      val hit = filter.mightContain(a) || filter.mightContain(b)
      count(hit)
      hit
    }

    private def count(hit: Boolean): Unit = {
      seen += 1
      if (hit) passed += 1
      if (seen == GlobalFilter.SampleRows && passed > GlobalFilter.MaxPassRate * seen) {
        log.info(s"hsbloom: ${ref.describe} passed $passed of $seen rows; this task stops probing it")
        active = false
      }
    }
  }
}
