package hsbloom.shim

/**
 * `asScala` and `asJava` between Java's collections and Scala's, the same on Scala 2.12 and 2.13 (import
 * `hsbloom.shim.CollectionConverters._`). On 2.13 they are `scala.jdk.CollectionConverters`' (2.13 deprecates
 * `scala.collection.JavaConverters`, 2.12's); src/main/scala-2.12 has the 2.12 object.
 */
object CollectionConverters extends scala.collection.convert.AsJavaExtensions with scala.collection.convert.AsScalaExtensions
