package hsbloom

import java.io.File

import org.apache.spark.SparkContext

/**
 * Puts this jar on the executors' classpath when the driver was given it only on its own classpath.
 *
 * `hsbloom.configure` hands the jar to the driver with `spark.driver.extraClassPath`, not `spark.jars`:
 * a builder's `spark.jars` replaces the list spark-submit builds from `spark.jars.packages`, and Delta's
 * jars would then reach a cluster's executors as plain files, off their classpath. So the extension
 * ships its own jar here (SparkContext.addJar), unless a jar of the same name is already shipped
 * (spark-submit --jars) or the executors share the driver's JVM (local mode).
 */
object ExecutorJar {
  def ensureShipped(sc: SparkContext): Unit = synchronized {
    if (!sc.isLocal) ownJar.foreach { jar =>
      val shipped = sc.listJars().exists(url => url.substring(url.lastIndexOf('/') + 1) == jar.getName)
      if (!shipped) sc.addJar(jar.getPath)
    }
  }

  /** The jar these classes were loaded from (None when they come from a classes directory, as in sbt tests). */
  private def ownJar: Option[File] =
    Option(getClass.getProtectionDomain.getCodeSource)
      .map(source => new File(source.getLocation.toURI))
      .filter(file => file.isFile && file.getName.endsWith(".jar"))
}
