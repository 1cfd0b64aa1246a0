package hsbloom

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo, Literal}

/**
 * Entry point named in `spark.sql.extensions`: registers hsbloom's optimizer
 * rules and SQL functions in every session.
 *
 * It first checks that the running Spark is the one the jar was built for;
 * Spark reports an exception thrown here as a failure to create the session,
 * which is where a mismatch should surface.
 */
class HsbloomExtension extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    BuildInfo.checkSparkVersion(org.apache.spark.SPARK_VERSION)
    extensions.injectOptimizerRule(session => new FilePruningRule(session))
    SqlFunctions.all.foreach(extensions.injectFunction)
  }
}

/** SQL functions that hsbloom adds to every session. */
object SqlFunctions {
  type Registration = (FunctionIdentifier, ExpressionInfo, Seq[Expression] => Expression)

  /** `hsbloom_version()`: the jar's version; proves from SQL that the extension is live. */
  val version: Registration = (
    FunctionIdentifier("hsbloom_version"),
    new ExpressionInfo(classOf[HsbloomExtension].getName, null, "hsbloom_version",
      "_FUNC_() - Returns the version of the hsbloom jar loaded in this session.",
      /* arguments */ "", /* examples */ "", /* note */ "", /* group */ "misc_funcs",
      /* since */ "", /* deprecated */ "", /* source */ "built-in"),
    (args: Seq[Expression]) => {
      if (args.nonEmpty) throw new IllegalArgumentException(s"hsbloom_version() takes no arguments, got ${args.size}")
      Literal(BuildInfo.version)
    })

  val all: Seq[Registration] = Seq(version)
}
