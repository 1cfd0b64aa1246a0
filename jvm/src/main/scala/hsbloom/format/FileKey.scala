package hsbloom.format

import java.net.URI

import org.apache.hadoop.fs.Path

/**
 * One key for a source file however it is spelled, used alike by the build,
 * the refresh and the rules: the file index lists Hadoop paths (`file:/a b/x`),
 * the scan reports URL-encoded URIs (`file:///a%20b/x`). The key is scheme,
 * authority (empty when absent) and the decoded path.
 */
object FileKey {
  def of(uri: URI): String = { // once per listed file of a new listing: no Option, one builder
    val (scheme, authority, path) = (uri.getScheme, uri.getAuthority, String.valueOf(uri.getPath)) // as "${null}" spells it
    val key = new java.lang.StringBuilder(
      (if (scheme == null) 0 else scheme.length) + 3 + (if (authority == null) 0 else authority.length) + path.length)
    if (scheme != null) key.append(scheme)
    key.append("://")
    if (authority != null) key.append(authority)
    key.append(path).toString
  }

  /**
   * The key of a path as a file index lists it (a Hadoop path string). A
   * path already spelled as Hadoop spells a qualified, normalized path (what
   * the file tables store) is keyed by reading its parts off the string; any
   * other is parsed as a Hadoop `Path` (the same key: `FileKeySuite`).
   */
  def listed(path: String): String = {
    val plain = plainKey(path)
    if (plain != null) plain else of(new Path(path).toUri)
  }

  /** The key of a file name as a scan reports it (`input_file_name()`: a URL-encoded URI). */
  def scanned(urlEncoded: String): String = of(new URI(urlEncoded))

  /**
   * The key of `path` when it is `scheme:/path` or `scheme://authority/path`
   * with a path that `Path` and `URI` leave as it is: absolute, no empty, `.`
   * or `..` segment, no trailing slash, no `%` (an escape to decode), no
   * backslash (a separator on Windows), no control character and no
   * surrogate; an authority of letters, digits and `.-_:@` only. Null for
   * any other spelling.
   */
  private[format] def plainKey(path: String): String = {
    val colon = path.indexOf(':')
    if (colon <= 0 || !asciiLetter(path.charAt(0))) return null
    var i = 1
    while (i < colon) {
      val c = path.charAt(i)
      if (!(asciiLetter(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')) return null
      i += 1
    }
    val hasAuthority = path.startsWith("//", colon + 1)
    val start = if (hasAuthority) path.indexOf('/', colon + 3) else colon + 1
    if (start < 0 || start >= path.length || path.charAt(start) != '/') return null
    if (hasAuthority) {
      i = colon + 3
      while (i < start) {
        val c = path.charAt(i)
        if (!(asciiLetter(c) || (c >= '0' && c <= '9') || ".-_:@".indexOf(c) >= 0)) return null
        i += 1
      }
    }
    if (!plainPath(path, start)) return null
    val scheme = path.substring(0, colon)
    val authority = if (hasAuthority) path.substring(colon + 3, start) else ""
    scheme + "://" + authority + path.substring(start)
  }

  /** Whether `path` from `start` (a '/') is a path that normalizing and URI quoting leave unchanged. */
  private def plainPath(path: String, start: Int): Boolean = {
    val end = path.length
    if (end - start > 1 && path.charAt(end - 1) == '/') return false
    var segmentStart = start + 1
    var i = start + 1
    while (i <= end) {
      if (i == end || path.charAt(i) == '/') {
        val n = i - segmentStart
        if (i < end && n == 0) return false // "//"
        if ((n == 1 && path.charAt(segmentStart) == '.') ||
            (n == 2 && path.charAt(segmentStart) == '.' && path.charAt(segmentStart + 1) == '.')) return false
        segmentStart = i + 1
      } else {
        val c = path.charAt(i)
        if (c == '%' || c == '\\' || c < 0x20 || (c >= 0x7f && c <= 0x9f) || Character.isSurrogate(c)) return false
      }
      i += 1
    }
    true
  }

  private def asciiLetter(c: Char): Boolean = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
