package hsbloom.catalog

import scala.util.Try
import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.types._

import hsbloom.format.ReadFacts
import hsbloom.shim.Delta

/**
 * The read facts (`ReadFacts`, docs/design/read-facts.md) of a scan of a relation in the session's current
 * settings: which settings apply to its format and indexed columns, and their values now.
 */
object ScanFacts {
  private val CaseSensitive = "spark.sql.caseSensitive"
  private val TimeZone = "spark.sql.session.timeZone"
  private val Int96Conversion = "spark.sql.parquet.int96TimestampConversion"
  private val ParquetFieldId = "parquet.field.id"

  /** The formats whose files are read by column name through Parquet's reader. */
  private val parquetLike = Set("parquet", "delta")
  /** The formats whose values are parsed from text in the session's settings. */
  private val textual = Set("csv", "json")

  /** What decides whether a setting applies to a relation and its indexed columns. */
  private final case class Scope(session: SparkSession, format: String, types: Seq[DataType],
      partitionTypes: Seq[DataType], fieldIds: Boolean) {
    def has(p: DataType => Boolean): Boolean = types.exists(p)
    def parquetLike: Boolean = ScanFacts.parquetLike.contains(format)
    def textual: Boolean = ScanFacts.textual.contains(format)
  }

  private def isDatetime(t: DataType): Boolean = t == DateType || t == TimestampType || t == TimestampNTZType
  private def isTimestamp(t: DataType): Boolean = t == TimestampType

  /** Session settings that change the values read, each with the relations it applies to. */
  private val settings: Seq[(String, Scope => Boolean)] = Seq(
    // Column names are matched to the files' (Parquet, ORC, JSON, CSV headers) case-sensitively or not.
    CaseSensitive -> (_ => true),
    // Text is parsed into timestamps in the session time zone; ORC timestamps and timestamp partition
    // values are read in it; Parquet INT96 values are shifted by it when the conversion is on.
    TimeZone -> (s => (s.textual && s.has(isDatetime)) || (s.format == "orc" && s.has(isTimestamp)) ||
      s.partitionTypes.exists(isTimestamp) ||
      (s.parquetLike && s.has(isTimestamp) && setting(s.session, Int96Conversion).equalsIgnoreCase("true"))),
    "spark.sql.legacy.timeParserPolicy" -> (s => s.textual && s.has(isDatetime)),
    "spark.sql.legacy.csv.enableDateTimeParsingFallback" -> (s => s.format == "csv" && s.has(isDatetime)),
    "spark.sql.legacy.json.enableDateTimeParsingFallback" -> (s => s.format == "json" && s.has(isDatetime)),
    // Without partial results a field that fails to parse nulls its whole row, the indexed column included.
    "spark.sql.json.enablePartialResults" -> (s => s.format == "json"),
    "spark.sql.csv.parser.columnPruning.enabled" -> (s => s.format == "csv"),
    // Dates and timestamps before 1582 (and INT96 timestamps) are rebased between calendars, or not.
    "spark.sql.parquet.datetimeRebaseModeInRead" -> (s => s.parquetLike && s.has(isDatetime)),
    "spark.sql.parquet.int96RebaseModeInRead" -> (s => s.parquetLike && s.has(isTimestamp)),
    Int96Conversion -> (s => s.parquetLike && s.has(isTimestamp)),
    // Parquet columns matched by field id instead of name: only columns whose schema carries a field id.
    // (Spark itself turns the first setting on in a session that has written Parquet.)
    "spark.sql.parquet.fieldId.read.enabled" -> (s => s.parquetLike && s.fieldIds),
    "spark.sql.parquet.fieldId.read.ignoreMissing" -> (s => s.parquetLike && s.fieldIds))

  /**
   * The facts of a scan of `relation` (of format `format`, as the index log names it) for the index
   * columns `columns`, in the session's current settings.
   */
  def of(session: SparkSession, relation: HadoopFsRelation, format: String, columns: Seq[String]): ReadFacts.Facts = {
    val resolver = session.sessionState.conf.resolver
    val partitionNames = relation.partitionSchema.fieldNames.toSet
    val fields = (relation.dataSchema.fields ++ relation.partitionSchema.fields).toSeq
    val resolved = columns.map(c => c -> fields.filter(f => resolver(f.name, c)))
    val found = resolved.collect { case (_, Seq(f)) => f }
    val scope = Scope(session, format, found.map(_.dataType),
      found.filter(f => partitionNames.contains(f.name)).map(_.dataType),
      found.exists(_.metadata.contains(ParquetFieldId)))
    val deltaMapping = DeltaColumnMapping.of(relation)

    val columnFacts = resolved.map { case (c, matches) =>
      val value = matches match {
        case Seq(f) =>
          val mapping = deltaMapping.flatMap(_.physical.get(f.name)).map(" " + _).getOrElse("")
          s"name=${f.name} type=${f.dataType.catalogString} partition=${partitionNames.contains(f.name)}$mapping"
        case Seq() => ReadFacts.Absent
        case many => s"ambiguous: ${many.map(_.name).mkString(", ")}"
      }
      s"column.$c" -> value
    }
    // Formats that match columns by position (CSV), or whose parsing of one field depends on the schema of
    // the others (CSV, JSON), or that fall back to positions for some files (ORC from old Hive writers).
    val schemaFact = if (parquetLike.contains(format)) Nil else Seq("data_schema" -> describe(relation.dataSchema))
    val mappingFact = deltaMapping.map(m => "delta.columnMapping.mode" -> m.mode).toSeq
    val settingFacts = settings.collect { case (key, applies) if applies(scope) => key -> setting(session, key) }
    (columnFacts ++ schemaFact ++ mappingFact ++ settingFacts).toMap
  }

  private def describe(schema: StructType): String = schema.fields.map { f =>
    s"${f.name} ${f.dataType.catalogString}${if (f.nullable) "" else " not null"}"
  }.mkString(", ")

  private def setting(session: SparkSession, key: String): String =
    if (key == TimeZone) session.sessionState.conf.sessionLocalTimeZone
    else Try(Option(session.conf.get(key))).toOption.flatten.getOrElse("(unset)")

  /**
   * A Delta table's column mapping: its mode and, per logical column name, the physical name and field
   * id the Parquet files hold it under. Read from Delta's file format through `shim.Delta` (the jar is
   * built without Delta).
   */
  private final case class DeltaColumnMapping(mode: String, physical: Map[String, String])

  private object DeltaColumnMapping {
    private val PhysicalName = "delta.columnMapping.physicalName"
    private val FieldId = "delta.columnMapping.id"

    def of(relation: HadoopFsRelation): Option[DeltaColumnMapping] = {
      val format = relation.fileFormat
      if (!Delta.isDeltaClass(format)) return None
      val (mode, schema) = try Delta.columnMapping(format) catch {
        case NonFatal(e) => throw new UnsupportedOperationException(
          s"hsbloom cannot read the column mapping of Delta's ${format.getClass.getName} ($e); this " +
            "delta-spark version is not supported", e)
      }
      val physical = schema.fields.map { f =>
        val m = f.metadata
        val name = if (m.contains(PhysicalName)) m.getString(PhysicalName) else f.name
        val id = if (m.contains(FieldId)) m.getLong(FieldId).toString else "none"
        f.name -> s"physical=$name id=$id"
      }.toMap
      Some(DeltaColumnMapping(mode, physical))
    }
  }
}
