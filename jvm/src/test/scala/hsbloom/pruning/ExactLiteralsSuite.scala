package hsbloom.pruning

import java.nio.file.{Files, Paths}
import java.time.{LocalDate, LocalDateTime, ZoneOffset}

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.{AnalysisException, Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{And, Expression}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LocalRelation}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import hsbloom.pruning.PredicateTranslation._
import hsbloom.sbbf.ParquetHash
import hsbloom.shim.CollectionConverters._
import hsbloom.testing.{ErrorConditions, SharedSession, SparkFeatures}

/**
 * The exact-literal rules the jar shares with the Python reader (docs/design/exact-types.md):
 * tests/vectors/exact_literals.json names, per column type and literal, the column values each may probe. Here
 * Spark plans `c = literal` (its coercion and optimizer, session time zone UTC, ANSI on) over a column of that type, and
 * the jar translates what is left: it must probe exactly the hashes of the case's `spark` values, keep every
 * file (`keep`), prove that no value matches (`[]`: no file, or no scan at all), or be refused by Spark
 * (`error`: the types cannot be compared). tests/test_exact_literals.py
 * checks the reader's column against the same file.
 */
class ExactLiteralsSuite extends AnyFunSuite {
  /** A session of the tests' shared context, with its own settings: time zone UTC, ANSI on. */
  private lazy val spark: SparkSession = {
    val session = SharedSession.spark.newSession()
    session.conf.set("spark.sql.session.timeZone", "UTC")
    session.conf.set("spark.sql.ansi.enabled", "true")
    session
  }

  private lazy val cases: Seq[JsonNode] = {
    val path = Paths.get(sys.env.getOrElse("HSBLOOM_VECTORS", "../tests/vectors")).resolve("exact_literals.json")
    new ObjectMapper().readTree(Files.readAllBytes(path)).get("cases").elements().asScala.toSeq
  }

  /** What the jar does with `c = literal`: "keep", "[]" or the probed hashes, sorted. */
  private def jarVerdict(column: DataType, literal: String): Either[String, Seq[Long]] = {
    val schema = StructType(Seq(StructField("c", column)))
    val plan = try {
      spark.createDataFrame(spark.sparkContext.emptyRDD[Row], schema).where(s"c = $literal").queryExecution.optimizedPlan
    } catch {
      case _: AnalysisException => return Left("error") // Spark refuses the comparison
      // This Spark fails the query itself while planning it (SparkFeatures.plansWideDecimalLiterals).
      case e: ArithmeticException with org.apache.spark.SparkThrowable if !SparkFeatures.plansWideDecimalLiterals =>
        return Left(s"spark fails: ${ErrorConditions.of(e)}")
    }
    plan.collectFirst { case f: Filter => f } match {
      case Some(filter) =>
        translate(conjuncts(filter.condition), Map("c" -> column)) match {
          case MayMatch => Left("keep")
          case NoMatch => Left("[]")
          case Probe("c", hashes) => Right(hashes.toSeq.sorted)
          case other => fail(s"c = $literal: unexpected translation $other")
        }
      case None if plan.collectFirst { case r: LocalRelation if r.data.isEmpty => r }.isDefined => Left("[]")
      case None => fail(s"c = $literal: the plan has no filter and is not empty:\n$plan")
    }
  }

  private def conjuncts(e: Expression): Seq[Expression] = e match {
    case And(l, r) => conjuncts(l) ++ conjuncts(r)
    case other => Seq(other)
  }

  /** The golden file's `spark` answer as the same terms. */
  private def expected(column: DataType, spark: JsonNode): Either[String, Seq[Long]] =
    if (spark.isTextual) Left(spark.asText())
    else if (spark.size() == 0) Left("[]")
    else Right(spark.elements().asScala.toSeq.flatMap(v => hashesOf(v.asText(), column)).distinct.sorted)

  private def hashesOf(text: String, column: DataType): Seq[Long] = column match {
    case FloatType if text.toFloat == 0.0f => Seq(0.0f, -0.0f).map(ParquetHash.hashFloat)
    case DoubleType if text.toDouble == 0.0 => Seq(0.0, -0.0).map(ParquetHash.hashDouble)
    case _ => Seq(ParquetHash.hashValue(internal(text, column), column))
  }

  /** A value's text in the golden file as Spark's internal value of `column`'s type. */
  private def internal(text: String, column: DataType): Any = column match {
    case ByteType => text.toByte
    case ShortType => text.toShort
    case IntegerType => text.toInt
    case LongType => text.toLong
    case FloatType => text.toFloat
    case DoubleType => text.toDouble
    case d: DecimalType => Decimal(BigDecimal(text), d.precision, d.scale)
    case _: StringType => UTF8String.fromString(text)
    case BinaryType => hex(text)
    case DateType => LocalDate.parse(text).toEpochDay.toInt
    case TimestampType | TimestampNTZType =>
      val t = LocalDateTime.parse(text).toInstant(ZoneOffset.UTC)
      Math.addExact(Math.multiplyExact(t.getEpochSecond, 1000000L), t.getNano / 1000L)
    case other => fail(s"no values of $other in the golden file")
  }

  private def hex(text: String): Array[Byte] = text.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray

  /** The literal as Spark SQL writes a value of the Python kind (the kinds Spark has: numpy's as their Python twin). */
  private def sqlLiteral(kind: String, text: String): String = kind match {
    case "int" | "np.int64" | "np.int8" | "np.uint64" => text
    case "float" | "np.float64" => s"CAST('$text' AS DOUBLE)"
    case "np.float32" => s"CAST('$text' AS FLOAT)"
    case "decimal" => s"${text}BD"
    case "str" | "np.str_" => "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    case "bytes" | "bytearray" | "np.bytes_" => s"X'$text'"
    case "date" => s"DATE '$text'"
    case "datetime" => s"TIMESTAMP_NTZ '$text'"
    case "datetime_utc" => s"TIMESTAMP '$text'"
    case "bool" => text
    case "null" => "NULL"
    case other => fail(s"no Spark literal for kind $other")
  }

  test("the jar probes exactly the golden file's values for every case Spark can write") {
    val applicable = cases.filterNot(c => c.get("spark").isTextual && c.get("spark").asText() == "-")
    assert(applicable.size > 100)
    val wrong = applicable.flatMap { c =>
      val column = DataType.fromDDL(c.get("column").asText())
      val literal = sqlLiteral(c.get("kind").asText(), c.get("literal").asText())
      val got = jarVerdict(column, literal)
      val want = expected(column, c.get("spark"))
      if (got == want) None
      else if (got.left.exists(_.startsWith("spark fails")) && column.isInstanceOf[DecimalType]) None
      else if (got == Left("keep") && column == TimestampNTZType && c.get("kind").asText() == "datetime_utc" &&
        SparkFeatures.castsNtzColumnsToTimestamp) None
      else Some(s"${c.get("column").asText()} = $literal (${c.get("kind").asText()}): jar ${describe(got)}, " +
        s"golden ${describe(want)}; the reader's values would be ${describe(expected(column, c.get("reader")))}")
    }
    assert(wrong.isEmpty, wrong.mkString("\n", "\n", ""))
  }

  private def describe(v: Either[String, Seq[Long]]): String =
    v.fold(identity, h => s"${h.size} hash(es) ${h.map(java.lang.Long.toHexString).mkString(",")}")
}
