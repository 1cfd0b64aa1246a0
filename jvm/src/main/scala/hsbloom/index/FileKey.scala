package hsbloom.index

import java.net.URI

import org.apache.hadoop.fs.Path

/**
 * One key for a source file however it is spelled, used alike by the build,
 * the refresh and the rules: the file index lists Hadoop paths (`file:/a b/x`),
 * the scan reports URL-encoded URIs (`file:///a%20b/x`). The key is scheme,
 * authority (empty when absent) and the decoded path.
 */
object FileKey {
  def of(uri: URI): String =
    s"${Option(uri.getScheme).getOrElse("")}://${Option(uri.getAuthority).getOrElse("")}${uri.getPath}"
  /** The key of a path as a file index lists it (a Hadoop path string). */
  def listed(path: String): String = of(new Path(path).toUri)
  /** The key of a file name as a scan reports it (`input_file_name()`: a URL-encoded URI). */
  def scanned(urlEncoded: String): String = of(new URI(urlEncoded))
}
