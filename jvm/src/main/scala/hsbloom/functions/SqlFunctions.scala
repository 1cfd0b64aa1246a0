package hsbloom.functions

import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo, Literal}

import hsbloom.BuildInfo

/** SQL functions that hsbloom adds to every session. */
object SqlFunctions {
  type Registration = (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression)

  /**
   * The class that registers the functions, as `DESCRIBE FUNCTION EXTENDED` shows it: the extension, a layer above
   * this package, so named here rather than imported (its name is fixed: users give it in `spark.sql.extensions`;
   * HsbloomExtensionSuite checks the two agree).
   */
  val RegisteredBy = "hsbloom.HsbloomExtension"

  private def info(name: String, usage: String): ExpressionInfo =
    new ExpressionInfo(RegisteredBy, null, name, usage,
      /* arguments */ "", /* examples */ "", /* note */ "", /* group */ "misc_funcs",
      /* since */ "", /* deprecated */ "", /* source */ "built-in")

  private def arity(name: String, n: Int, args: Seq[Expression]): Unit =
    if (args.size != n) throw new IllegalArgumentException(s"$name takes $n argument(s), got ${args.size}")

  /** `hsbloom_version()`: the jar's version; proves from SQL that the extension is live. */
  val version: Registration = (
    FunctionIdentifier("hsbloom_version"),
    info("hsbloom_version", "_FUNC_() - Returns the version of the hsbloom jar loaded in this session."),
    (args: Seq[Expression]) => { arity("hsbloom_version()", 0, args); Literal(BuildInfo.version) })

  val mightContain: Registration = (
    FunctionIdentifier("hsbloom_might_contain"),
    info("hsbloom_might_contain",
      "_FUNC_(filter, value) - Whether the serialized Parquet SBBF `filter` may contain `value`."),
    (args: Seq[Expression]) => { arity("hsbloom_might_contain(filter, value)", 2, args); MightContain(args(0), args(1)) })

  val hash: Registration = (
    FunctionIdentifier("hsbloom_hash"),
    info("hsbloom_hash", "_FUNC_(value) - The Parquet SBBF hash (XXH64 of the PLAIN encoding) of `value`."),
    (args: Seq[Expression]) => { arity("hsbloom_hash(value)", 1, args); ParquetHashOf(args(0)) })

  val all: Seq[Registration] = Seq(version, mightContain, hash)
}
