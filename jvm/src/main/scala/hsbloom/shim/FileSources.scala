package hsbloom.shim

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeSet, Cast, Expression, UpCast}
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke
import org.apache.spark.sql.execution.datasources.{FileIndex, HadoopFsRelation, PartitioningAwareFileIndex}
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType

/** What hsbloom asks of a file relation that Spark answers only through class names. */
object FileSources {
  /** The format's short name, as the index log records it ("delta" for Delta tables). */
  def formatName(relation: HadoopFsRelation): String = relation.fileFormat match {
    case f if Delta.isDeltaClass(f) => "delta"
    case r: DataSourceRegister => r.shortName()
    case f => f.getClass.getSimpleName
  }

  /**
   * Whether `listing` is Spark's `InMemoryFileIndex` itself (a listing fixed
   * when the relation was made), not a subclass or another index. Matched by
   * class name so that a subclass with its own listing does not count.
   */
  def isFixedListing(listing: FileIndex): Boolean =
    listing.getClass.getName == "org.apache.spark.sql.execution.datasources.InMemoryFileIndex"

  /**
   * The schema the relation's reader was given (`spark.read.schema(...)`), which Spark keeps only in the file
   * index's private field: the same answer whether the DataFrame arrives as it is or through a temporary view,
   * whose stored plan is analyzed (the reader's unresolved node is gone). None for other file indexes.
   */
  def userSpecifiedSchema(listing: FileIndex): Option[StructType] = listing match {
    case p: PartitioningAwareFileIndex => Try {
      val field = classOf[PartitioningAwareFileIndex].getDeclaredField("userSpecifiedSchema")
      field.setAccessible(true)
      field.get(p).asInstanceOf[Option[StructType]]
    }.getOrElse(throw new IllegalStateException(
      "hsbloom cannot read the reader's schema from Spark's file index; this Spark version is not supported"))
    case _ => None
  }

  /**
   * Whether a projection's `expression` only selects a column of `childOutput` as it is: the column itself, or
   * (as a SQL view's projection has it) the column under its own name cast to its own type.
   */
  def selectsAsIs(expression: Expression, childOutput: AttributeSet): Boolean = expression match {
    case a: Attribute => childOutput.contains(a)
    case Alias(a: Attribute, name) => childOutput.contains(a) && a.name == name
    case Alias(Cast(a: Attribute, to, _, _), name) => childOutput.contains(a) && a.name == name && a.dataType == to
    case Alias(UpCast(a: Attribute, to, _), name) => childOutput.contains(a) && a.name == name && a.dataType == to
    case _ => false
  }

  /**
   * The column of `childOutput` that a projection's `expression` reads under its own name with the read-side
   * padding Spark adds for a CHAR column of a catalog table (`spark.sql.readSideCharPadding`, Spark's
   * `CharVarcharCodegenUtils.readSidePadding`); None for any other expression.
   */
  def readSidePadded(expression: Expression, childOutput: AttributeSet): Option[Attribute] = expression match {
    case Alias(s: StaticInvoke, name) if s.functionName == "readSidePadding" => s.arguments.headOption.collect {
      case a: Attribute if childOutput.contains(a) && a.name == name => a
    }
    case _ => None
  }
}
