package hsbloom.catalog

import java.util.{ArrayList => JList, LinkedHashMap => JMap}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.sql.catalyst.expressions.AttributeReference
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types._

import hsbloom.shim.{ClassicDataset, Delta, FileSources}

/**
 * Resolves a DataFrame to the files it scans, for `create_index` (Python: hsbloom/sources.py).
 *
 * The check runs here, on the analyzed plan, because the plan is the only
 * reliable description of what a DataFrame reads; probing it through py4j
 * from Python would depend on Scala case-class internals one call at a time.
 *
 * Accepted: a `LogicalRelation` over a `HadoopFsRelation` of a Parquet, ORC, CSV or JSON
 * file source or a Delta table (Delta's `TahoeLogFileIndex`, at its latest or
 * a time-travel version), under any number of `SubqueryAlias` nodes and
 * `Project`s that only select (not compute or rename) columns. Everything else
 * is refused with a message that names what was found and what to pass instead.
 *
 * The answer is a JSON string, either `{"error": message}` or the description
 * (format, root paths, options, catalog table, Delta version and table path,
 * schema, resolved indexed columns, and the file listing sorted by path).
 */
object Sources {
  /** Types whose values hash the way Parquet hashes them, so a filter probe can be exact. */
  private def indexable(dataType: DataType): Boolean = dataType match {
    case s: StringType => s.collationId == StringType.collationId // UTF8_BINARY: equal iff same bytes
    case ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType => true
    case BinaryType | DateType | TimestampType | TimestampNTZType => true
    case _: DecimalType => true
    case _ => false
  }

  val supportedTypes: String =
    "tinyint, smallint, int, bigint, float, double, string (binary collation), binary, date, timestamp, " +
      "timestamp_ntz, decimal"

  private val acceptedFormats = hsbloom.index.Layout.SourceFormats.toSet

  private val howToPass =
    "Pass the plain scan instead, e.g. spark.read.parquet(path), spark.read.format(\"delta\").load(path) " +
      "(optionally with versionAsOf/timestampAsOf) or spark.table(name), optionally followed by " +
      ".select(columns)."

  private class Refused(message: String) extends Exception(message)

  private val mapper = new ObjectMapper()

  /** `columnsJson` is a JSON array of the requested indexed column names. */
  def describe(df: ClassicDataset[_], columnsJson: String): String = describe(df, columnsJson, withFiles = true)

  /**
   * As above; without `withFiles` the file listing is left out ("files" is
   * empty), for a refresh that learns a Delta table's changes from its log.
   */
  def describe(df: ClassicDataset[_], columnsJson: String, withFiles: Boolean): String = {
    val answer = new JMap[String, Any]()
    try {
      val columns = mapper.readValue(columnsJson, classOf[Array[String]]).toSeq
      describeInto(df, columns, answer, withFiles)
    } catch {
      case r: Refused =>
        answer.clear()
        answer.put("error", r.getMessage)
    }
    mapper.writeValueAsString(answer)
  }

  private def describeInto(df: ClassicDataset[_], columns: Seq[String], out: JMap[String, Any], withFiles: Boolean): Unit = {
    if (df.isStreaming) {
      throw new Refused("hsbloom cannot index a streaming DataFrame; index the table its files are in. " + howToPass)
    }
    val plan = df.queryExecution.analyzed
    val relation = scannedRelation(plan)
    val fsRelation = relation.relation.asInstanceOf[HadoopFsRelation]
    val format = FileSources.formatName(fsRelation)
    if (!acceptedFormats.contains(format)) {
      throw new Refused(
        s"hsbloom indexes Parquet, ORC, CSV, JSON and Delta sources, but this DataFrame reads the " +
          s"'$format' format.")
    }
    val schema = df.schema
    val resolved = resolveColumns(df, schema, columns)

    val session = df.sparkSession
    val options = ReadOptions.record(fsRelation.options, session.sessionState.conf)
    val deltaIndex = if (format == "delta") Some(DeltaFileIndex(fsRelation.location)) else None

    out.put("format", format)
    out.put("root_paths", toJList(deltaIndex.map(d => Seq(d.tablePath)).getOrElse(
      fsRelation.location.rootPaths.map(_.toString))))
    out.put("options", toJMap(options.verbatim.toSeq.sortBy(_._1)))
    out.put("hashed_options", toJMap(options.hashed.toSeq.sortBy(_._1)))
    out.put("options_salt", options.salt)
    out.put("table", relation.catalogTable.map(_.identifier.unquotedString)
      .orElse(deltaIndex.flatMap(_.tableName)).orNull)
    out.put("delta_version", deltaIndex.map(d => Long.box(d.version)).orNull)
    out.put("schema", toJMap(schema.fields.toSeq.map(f => f.name -> f.dataType.simpleString)))
    out.put("partition_columns", toJList(fsRelation.partitionSchema.fieldNames.toSeq))
    out.put("columns", toJList(resolved))
    out.put("read_facts", toJMap(readFacts(session, fsRelation, format, resolved).toSeq.sortBy(_._1)))
    out.put("user_schema", userSchema(df).map(_.json).orNull)
    out.put("files", if (withFiles) listFiles(fsRelation.location) else new JList[Any]())
  }

  private def readFacts(session: org.apache.spark.sql.SparkSession, relation: HadoopFsRelation, format: String,
      columns: Seq[String]): ReadFacts.Facts =
    try ReadFacts.of(session, relation, format, columns)
    catch { case e: UnsupportedOperationException => throw new Refused(e.getMessage) }

  /** The schema the DataFrame's reader was given (`spark.read.schema(...)`), which a refresh must read with too. */
  private def userSchema(df: ClassicDataset[_]): Option[StructType] =
    df.queryExecution.logical.collectFirst { case u: UnresolvedDataSource => u.userSpecifiedSchema }.flatten

  /** The one relation under the accepted wrapper nodes, or a refusal naming the first other node. */
  private def scannedRelation(plan: LogicalPlan): LogicalRelation = plan match {
    case SubqueryAlias(_, child) => scannedRelation(child)
    case Project(projectList, child) =>
      val childOutput = child.outputSet
      val computed = projectList.filter {
        case a: AttributeReference => !childOutput.contains(a)
        case _ => true
      }
      if (computed.nonEmpty) {
        throw new Refused(
          "hsbloom can only index a plain scan of files, but this DataFrame's projection computes or " +
            s"renames columns (${computed.map(_.sql).mkString(", ")}). Select the source columns " +
            "as they are. " + howToPass)
      }
      scannedRelation(child)
    case l: LogicalRelation => l.relation match {
      case _: HadoopFsRelation => l
      case other => throw new Refused(
        s"hsbloom can only index a scan of files, but this DataFrame reads a ${other.getClass.getSimpleName} " +
          "relation, which has no file listing. " + howToPass)
    }
    case other =>
      throw new Refused(
        s"hsbloom can only index a plain scan of files (a Parquet, ORC, CSV or JSON path, a catalog table " +
          s"over files, or a Delta table), but this DataFrame contains ${describeNode(other)}. " + howToPass)
  }

  private def describeNode(node: LogicalPlan): String = {
    val what = node match {
      case _: Join => "a join"
      case _: Aggregate => "an aggregation"
      case _: Filter => "a filter (hsbloom indexes whole tables; filter when querying)"
      case _: Union => "a union"
      case _: Range => "spark.range (generated rows, not files)"
      case _: LocalRelation => "local data (for example from spark.createDataFrame), not files"
      case _: Sort => "a sort"
      case _: GlobalLimit | _: LocalLimit => "a limit"
      case _: Sample => "a sample"
      case _: Deduplicate | _: Distinct => "a distinct"
      case _: Window => "a window function"
      case _: Generate => "a generator (explode)"
      case _: Repartition | _: RepartitionByExpression => "a repartition"
      case _ if node.nodeName == "LogicalRDD" => "an RDD or local data (for example from spark.createDataFrame)"
      case _ if node.nodeName.startsWith("DataSourceV2") =>
        "a DataSource V2 scan (file sources are read through V1 when they are listed in " +
          "spark.sql.sources.useV1SourceList, the default)"
      case _ => "a plan node that is not a file scan"
    }
    s"$what [${node.nodeName}]"
  }

  /**
   * The requested names mapped to the DataFrame's own column names, with Spark's
   * resolver (case-insensitive unless spark.sql.caseSensitive), checking each type.
   */
  private def resolveColumns(df: ClassicDataset[_], schema: StructType, requested: Seq[String]): Seq[String] = {
    val resolver = df.sparkSession.sessionState.conf.resolver
    val available = schema.fieldNames
    val fields = requested.map { name =>
      available.filter(resolver(_, name)) match {
        case Array(one) => schema(one)
        case Array() =>
          val nested = if (name.contains(".")) " (only top-level columns can be indexed)" else ""
          throw new Refused(
            s"unknown column '$name'$nested; the DataFrame's columns are: ${available.mkString(", ")}")
        case many =>
          throw new Refused(s"column name '$name' is ambiguous: it matches ${many.mkString(", ")}")
      }
    }
    fields.groupBy(_.name).collectFirst { case (n, fs) if fs.size > 1 => n }.foreach { n =>
      throw new Refused(s"column '$n' is listed more than once in indexed_columns")
    }
    fields.find(f => !indexable(f.dataType)).foreach { f =>
      throw new Refused(
        s"column '${f.name}' has type ${f.dataType.simpleString}, which hsbloom cannot index; " +
          s"indexable types: $supportedTypes")
    }
    fields.map(_.name)
  }

  /** Every file of the relation, sorted by path; path strings are the FileIndex's qualified Paths. */
  private def listFiles(index: FileIndex): JList[Any] = {
    val statuses = index.listFiles(Nil, Nil).flatMap(_.files).map(_.fileStatus)
    val files = new JList[Any]()
    statuses.sortBy(_.getPath.toString).foreach { s =>
      val file = new JMap[String, Any]()
      file.put("path", s.getPath.toString)
      file.put("size", s.getLen)
      file.put("mtime", s.getModificationTime)
      files.add(file)
    }
    files
  }

  /**
   * What hsbloom needs from Delta's file index (read through `shim.Delta`: the
   * jar is compiled without Delta, an optional dependency): the snapshot version
   * the scan reads, the table's root and its catalog name.
   */
  private case class DeltaFileIndex(version: Long, tablePath: String, tableName: Option[String])

  private object DeltaFileIndex {
    def apply(index: FileIndex): DeltaFileIndex = {
      val className = index.getClass.getName
      if (!Delta.isLogFileIndex(index)) {
        throw new Refused(
          s"hsbloom can index a Delta table read at its latest or a time-travel version, but this DataFrame " +
            s"reads it through ${index.getClass.getSimpleName} (for example a change-data feed). " + howToPass)
      }
      try {
        val (version, path, table) = Delta.logFileIndexSnapshot(index)
        DeltaFileIndex(version, path, table.map(_.identifier.unquotedString))
      } catch {
        case NonFatal(e) =>
          throw new IllegalStateException(
            s"hsbloom could not read the snapshot version from Delta's $className; this delta-spark " +
              "version is not supported", e)
      }
    }
  }

  private def toJList(items: Seq[Any]): JList[Any] = new JList[Any](items.asJava)

  private def toJMap(pairs: Seq[(String, Any)]): JMap[String, Any] = {
    val m = new JMap[String, Any]()
    pairs.foreach { case (k, v) => m.put(k, v) }
    m
  }
}
