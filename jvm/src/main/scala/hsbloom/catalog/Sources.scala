package hsbloom.catalog

import scala.util.control.NonFatal

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types._

import hsbloom.HsbloomException
import hsbloom.format.{IndexSource, ReadFacts, ReadOptions, SourceFile}
import hsbloom.shim.{ClassicDataset, Collations, Delta, FileSources}

/**
 * Resolves a DataFrame to the files it scans, for create and refresh: the source description the log records,
 * the indexed columns as the DataFrame spells them, and the listing (sorted by path).
 *
 * The check runs on the analyzed plan, because the plan is the only reliable description of what a DataFrame
 * reads. Accepted: a `LogicalRelation` over a `HadoopFsRelation` of a Parquet, ORC, CSV or JSON file source or a
 * Delta table (Delta's `TahoeLogFileIndex`, at its latest or a time-travel version), under any number of
 * `SubqueryAlias` and view nodes and `Project`s that only select (not compute or rename) columns: what
 * `spark.read...`, `spark.table`, a temporary view of either, and `SELECT cols FROM` one of them give.
 * Everything else is refused (`HsbloomException.UnsupportedSource`) naming what was found and what to pass.
 */
object Sources {
  /** Types whose values hash the way Parquet hashes them, so a filter probe can be exact. */
  private def indexable(dataType: DataType): Boolean = dataType match {
    case s: StringType => Collations.isBinary(s) // UTF8_BINARY: equal iff same bytes
    case ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType => true
    case BinaryType | DateType | TimestampType | TimestampNTZType => true
    case _: DecimalType => true
    case _ => false
  }

  val supportedTypes: String =
    "tinyint, smallint, int, bigint, float, double, string (binary collation), binary, date, timestamp, " +
      "timestamp_ntz, decimal"

  private val acceptedFormats = hsbloom.format.Layout.SourceFormats.toSet

  private val howToPass =
    "Pass the plain scan instead, e.g. spark.read.parquet(path), spark.read.format(\"delta\").load(path) " +
      "(optionally with versionAsOf/timestampAsOf) or spark.table(name) (in SQL: a table, a temporary view, " +
      "parquet.`path` or delta.`path` [VERSION AS OF n]), optionally selecting columns."

  private def refused(message: String): Nothing = throw HsbloomException.unsupportedSource(message)

  /** What a DataFrame reads: the source as the log records it, the indexed columns as spelled, and its files. */
  final case class Described(source: IndexSource, columns: Seq[String], files: Seq[SourceFile])

  /**
   * The source `df` scans and `columns` resolved against it; without `withFiles` the listing is left empty (a
   * refresh that learns a Delta table's changes from its log).
   */
  def describe(df: DataFrame, columns: Seq[String], withFiles: Boolean = true): Described = {
    if (df.isStreaming) refused("hsbloom cannot index a streaming DataFrame; index the table its files are in. " + howToPass)
    val analyzed = ClassicDataset.of(df).queryExecution.analyzed
    val relation = scannedRelation(analyzed)
    val fsRelation = relation.relation.asInstanceOf[HadoopFsRelation]
    val format = FileSources.formatName(fsRelation)
    if (!acceptedFormats.contains(format)) {
      refused(s"hsbloom indexes Parquet, ORC, CSV, JSON and Delta sources, but this DataFrame reads the '$format' format.")
    }
    val schema = df.schema
    val resolved = resolveColumns(df, schema, columns)
    refusePadded(analyzed, resolved)
    val session = df.sparkSession
    val options = ReadOptions.record(fsRelation.options, session.sessionState.conf)
    val deltaIndex = if (format == "delta") Some(DeltaFileIndex(fsRelation.location)) else None
    val catalogTable = relation.catalogTable.map(_.identifier.unquotedString).orElse(deltaIndex.flatMap(_.tableName))
    val source = IndexSource(
      format = format,
      rootPaths = deltaIndex.map(d => Seq(d.tablePath)).getOrElse(fsRelation.location.rootPaths.map(_.toString)),
      options = options,
      table = catalogTable,
      deltaVersion = deltaIndex.map(_.version),
      schema = schema.fields.toSeq.map(f => f.name -> f.dataType.simpleString),
      partitionColumns = fsRelation.partitionSchema.fieldNames.toSeq,
      readFacts = readFacts(session, fsRelation, format, resolved),
      // A table is read again by its name; a path with the schema the reader was given (which its file index keeps,
      // however the DataFrame reached here: directly, or through a temporary view).
      userSchema = if (relation.catalogTable.isDefined) None else FileSources.userSpecifiedSchema(fsRelation.location).map(_.json))
    Described(source, resolved, if (withFiles) listFiles(fsRelation.location) else Nil)
  }

  private def readFacts(session: org.apache.spark.sql.SparkSession, relation: HadoopFsRelation, format: String,
      columns: Seq[String]): ReadFacts.Facts =
    try ScanFacts.of(session, relation, format, columns)
    catch { case e: UnsupportedOperationException => refused(e.getMessage) }

  /** The one relation under the accepted wrapper nodes, or a refusal naming the first other node. */
  def scannedRelation(plan: LogicalPlan): LogicalRelation = plan match {
    case SubqueryAlias(_, child) => scannedRelation(child)
    case v: View => scannedRelation(v.child)
    case Project(projectList, child) =>
      val childOutput = child.outputSet
      val computed = projectList.filterNot(e =>
        FileSources.selectsAsIs(e, childOutput) || FileSources.readSidePadded(e, childOutput).isDefined)
      if (computed.nonEmpty) {
        refused(
          "hsbloom can only index a plain scan of files, but this DataFrame's projection computes or " +
            s"renames columns (${computed.map(_.sql).mkString(", ")}). Select the source columns " +
            "as they are. " + howToPass)
      }
      scannedRelation(child)
    case l: LogicalRelation => l.relation match {
      case _: HadoopFsRelation => l
      case other => refused(
        s"hsbloom can only index a scan of files, but this DataFrame reads a ${other.getClass.getSimpleName} " +
          "relation, which has no file listing. " + howToPass)
    }
    case other =>
      refused(
        s"hsbloom can only index a plain scan of files (a Parquet, ORC, CSV or JSON path, a catalog table " +
          s"over files, or a Delta table), but this DataFrame contains ${describeNode(other)}. " + howToPass)
  }

  /**
   * Refuses indexing a CHAR column Spark pads when it reads it: a query compares the padded value, the files hold
   * what their writer wrote (padded by Spark, maybe not by another writer), so a filter of the stored values could
   * miss a row. The table's other columns index as usual (docs/design/exact-types.md).
   */
  private def refusePadded(analyzed: LogicalPlan, columns: Seq[String]): Unit = {
    val padded = analyzed.collect { case Project(list, child) =>
      list.flatMap(e => FileSources.readSidePadded(e, child.outputSet)).map(_.name)
    }.flatten.toSet
    columns.filter(padded.contains).foreach { c =>
      refused(s"column '$c' is a CHAR column that Spark pads to its length when it reads it " +
        "(spark.sql.readSideCharPadding is true), so a query compares values the files may not hold. Index the " +
        "table's other columns, or set spark.sql.readSideCharPadding to false in the sessions that build and query " +
        "the index (queries then compare the values as stored, which Spark pads when it writes a CHAR column).")
    }
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
  private def resolveColumns(df: DataFrame, schema: StructType, requested: Seq[String]): Seq[String] = {
    val resolver = df.sparkSession.sessionState.conf.resolver
    val available = schema.fieldNames
    val fields = requested.map { name =>
      available.filter(resolver(_, name)) match {
        case Array(one) => schema(one)
        case Array() =>
          val nested = if (name.contains(".")) " (only top-level columns can be indexed)" else ""
          refused(
            s"unknown column '$name'$nested; the DataFrame's columns are: ${available.mkString(", ")}")
        case many =>
          refused(s"column name '$name' is ambiguous: it matches ${many.mkString(", ")}")
      }
    }
    fields.groupBy(_.name).collectFirst { case (n, fs) if fs.size > 1 => n }.foreach { n =>
      refused(s"column '$n' is listed more than once in indexed_columns")
    }
    fields.find(f => !indexable(f.dataType)).foreach { f =>
      refused(
        s"column '${f.name}' has type ${f.dataType.simpleString}, which hsbloom cannot index; " +
          s"indexable types: $supportedTypes")
    }
    fields.map(_.name)
  }

  /** Every file of the relation, sorted by path, numbered from 0; path strings are the FileIndex's qualified Paths. */
  private def listFiles(index: FileIndex): Seq[SourceFile] =
    index.listFiles(Nil, Nil).flatMap(_.files).map(_.fileStatus).sortBy(_.getPath.toString).zipWithIndex.map {
      case (s, i) => SourceFile(i, s.getPath.toString, s.getLen, s.getModificationTime)
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
        refused(
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

}
