package hsbloom.shim

/**
 * `asScala` and `asJava` between Java's collections and Scala's, the same on Scala 2.12 and 2.13 (import
 * `hsbloom.shim.CollectionConverters._`). On 2.12 they are `scala.collection.JavaConverters`' (the 2.13
 * library's `scala.jdk.CollectionConverters` is not in 2.12's, and Spark 3.5.0 ships no
 * `scala-collection-compat` to bring it); src/main/scala-2.13 has the 2.13 object.
 */
object CollectionConverters extends scala.collection.convert.DecorateAsJava with scala.collection.convert.DecorateAsScala
