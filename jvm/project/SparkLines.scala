import sbt._

/**
 * One row of ../hsbloom/spark_lines.tsv: a Spark line (minor release and Scala version) hsbloom builds a jar for,
 * the Spark it compiles against, the releases the tests run and the Delta that serves it (see the table's header).
 */
case class SparkLine(line: String, scala: String, compile: String, suite: String, tested: Seq[String],
    delta: Option[String]) {
  def scalaBinary: String = scala.split('.').take(2).mkString(".")
  /** The sbt project's id: spark42_213. */
  def id: String = s"spark${line.replace(".", "")}_${scalaBinary.replace(".", "")}"
  /** The jar's name in the Python package (hsbloom/spark_lines.py names it the same way). */
  def jarName: String = s"hsbloom-spark${line}_$scalaBinary.jar"
  private val (source, release) = compile.split(':') match {
    case Array(s @ ("maven" | "pyspark"), r) => (s, r)
    case _ => sys.error(s"spark_lines.tsv: line $line's compile column is `$compile`, not maven:X.Y.Z or pyspark:X.Y.Z")
  }
  /** The Spark release the jar is compiled against. */
  def sparkRelease: String = release
  def fromMaven: Boolean = source == "maven"
  if (suite != release && !fromMaven)
    sys.error(s"spark_lines.tsv: line $line's suite column is $suite: a pyspark line's suite runs on its compile release")
  /** Where build-jar.sh unpacks the jars/ folder of pyspark `sparkRelease` for a `pyspark:` line. */
  def pysparkJars: File = file(".spark") / s"pyspark-$release" / "jars"
  private val Minor = """(\d+)\.(\d+)""".r
  private def minor(v: String): (Int, Int) = v match { case Minor(a, b) => (a.toInt, b.toInt) }
  /** Whether a version folder `spark-X.Y` or `spark-X.Y-A.B` serves this line. */
  def servedBy(folder: String): Boolean = {
    val Single = """spark-(\d+\.\d+)""".r
    val Range = """spark-(\d+\.\d+)-(\d+\.\d+)""".r
    import Ordering.Implicits._
    folder match {
      case Single(a) => minor(a) == minor(line)
      case Range(a, b) => minor(a) <= minor(line) && minor(line) <= minor(b)
      case _ => false
    }
  }
}



object SparkLine {
  /** The table's rows, in order (the first is the primary line). */
  def readTable(table: File): Seq[SparkLine] = {
    val rows = IO.readLines(table).filterNot(l => l.startsWith("#") || l.trim.isEmpty)
    rows.drop(1).map(_.split('\t')).map {
      case Array(line, scala, compile, suite, tested, delta, _) =>
        SparkLine(line, scala, compile, suite, tested.split(' ').toSeq, Some(delta).filter(_ != "-"))
      case other => sys.error(s"$table: a row of 7 tab-separated columns expected, not ${other.mkString("|")}")
    }
  }
}
