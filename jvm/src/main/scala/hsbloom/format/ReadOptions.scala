package hsbloom.format

import java.nio.charset.StandardCharsets.UTF_8
import java.security.SecureRandom
import java.util.{HexFormat, Locale}
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.internal.SQLConf

/**
 * Which of a scan's read options an index records, and how a scan's options
 * are compared with them (docs/security.md, "What the log holds").
 *
 * Read options carry secrets as often as settings: credentials of the file
 * system (`fs.s3a.secret.key`), the Parquet master keys of a test or local
 * KMS (`parquet.encryption.key.list`), tokens. Spark's redaction pattern
 * catches some of them by name, not all. So the log keeps an option in one of
 * three ways, decided by its name alone:
 *
 *  - '''recorded''': the options that decide which values a scan reads
 *    (`ValueDeciding`, Spark's and Delta's documented reader options), kept
 *    verbatim: a refresh reads the source with them, and a scan with other
 *    values is not covered;
 *  - '''never written''': names that hold credentials or key material
 *    (Spark's redaction pattern, `fs.*`, `parquet.encryption.*`
 *    and words such as key, secret, token, password). They do not change the
 *    values read (a wrong key fails the read; it does not read other values),
 *    so they are not compared either;
 *  - '''hashed''': any other option, an HMAC-SHA256 of its value keyed by a
 *    random salt of the entry. Unknown options may decide values, so they are
 *    still compared (a scan must have the same value), without writing it.
 *
 * Paths (`path`, `paths`) are not options here: the index records its roots.
 */
object ReadOptions {

  /** What the log records of a scan's options. Keys are lower case. */
  final case class Recorded(verbatim: Map[String, String], hashed: Map[String, String], salt: String)

  /** Reader options of Spark's file sources and Delta that decide the values read (lower case). */
  val ValueDeciding: Set[String] = Set(
    // every file source
    "mergeschema", "pathglobfilter", "recursivefilelookup", "modifiedbefore", "modifiedafter", "basepath",
    "ignorecorruptfiles", "ignoremissingfiles",
    // Parquet and ORC
    "datetimerebasemode", "int96rebasemode",
    // CSV and JSON
    "header", "sep", "delimiter", "encoding", "charset", "quote", "escape", "comment", "inferschema",
    "ignoreleadingwhitespace", "ignoretrailingwhitespace", "nullvalue", "nanvalue", "positiveinf", "negativeinf",
    "emptyvalue", "dateformat", "timestampformat", "timestampntzformat", "enforceschema", "preferdate",
    "enabledatetimeparsingfallback", "maxcolumns", "maxcharspercolumn", "mode", "columnnameofcorruptrecord",
    "multiline", "chartoescapequoteescaping", "samplingratio", "locale", "linesep", "unescapedquotehandling",
    "primitivesasstring", "prefersdecimal", "allowcomments", "allowunquotedfieldnames", "allowsinglequotes",
    "allownumericleadingzeros", "allowbackslashescapingonycharacter", "allowunquotedcontrolchars",
    "allownonnumericnumbers", "dropfieldifallnull", "timezone", "escapequotes", "quoteall",
    // Delta
    "versionasof", "timestampasof", "readchangefeed", "startingversion", "startingtimestamp", "endingversion",
    "endingtimestamp")

  /** Names that hold credentials or key material, whatever the source. */
  private val SecretWords =
    ("(?i)(^fs\\.|^parquet\\.encryption\\.|^parquet\\.crypto\\.|secret|password|passwd|token|credential|" +
      "key|sas|signature|auth|kms|cert|private)").r


  /** What the log records of `options` (a scan's, as given), with a new random salt. */
  def record(options: Map[String, String], conf: SQLConf): Recorded = {
    val bytes = new Array[Byte](16)
    new SecureRandom().nextBytes(bytes)
    record(options, HexFormat.of.formatHex(bytes), conf)
  }

  /** What the log records of `options` with `salt` (a recorded entry's, to compare a scan with it). */
  def record(options: Map[String, String], salt: String, conf: SQLConf): Recorded = {
    val asGiven = (options match {
      case m: CaseInsensitiveMap[String @unchecked] => m.originalMap // the keys as the user spelled them
      case m => m
    }).filter { case (k, _) => !k.equalsIgnoreCase("path") && !k.equalsIgnoreCase("paths") }
    val redacted = conf.redactOptions(asGiven) // Spark's redaction pattern, once for the whole scan
    // A name that may hold a secret (never written, not compared), unless it is a known value-deciding option.
    def isSecret(name: String): Boolean = SecretWords.findFirstIn(name).isDefined || redacted(name) != asGiven(name)
    val (verbatim, other) = asGiven.toSeq.map { case (k, v) => (k, k.toLowerCase(Locale.ROOT), v) }
      .filter { case (k, lower, _) => ValueDeciding.contains(lower) || !isSecret(k) }
      .map { case (_, lower, v) => lower -> v }.toMap
      .partition { case (k, _) => ValueDeciding.contains(k) }
    Recorded(verbatim, other.map { case (k, v) => k -> hmac(salt, k, v) }, salt)
  }

  /**
   * Why a scan with `options` does not read the values the index recorded
   * (None: it does). Names hashed options without their values.
   */
  def difference(recorded: Recorded, options: Map[String, String], conf: SQLConf): Option[String] = {
    val now = record(options, recorded.salt, conf)
    if (now.verbatim == recorded.verbatim && now.hashed == recorded.hashed) None
    else {
      def shown(r: Recorded): String = {
        val all = r.verbatim.toSeq.sorted.map { case (k, v) => s"$k=$v" } ++ r.hashed.keys.toSeq.sorted.map(k => s"$k=(hashed)")
        if (all.isEmpty) "no options" else all.mkString(", ")
      }
      Some(s"read options differ: the index was built with ${shown(recorded)}; this scan reads with ${shown(now)}")
    }
  }

  private def hmac(salt: String, key: String, value: String): String = {
    val mac = Mac.getInstance("HmacSHA256")
    mac.init(new SecretKeySpec(s"hsbloom:$salt".getBytes(UTF_8), "HmacSHA256")) // never empty (older entries: no salt)
    HexFormat.of.formatHex(mac.doFinal(s"$key=$value".getBytes(UTF_8)))
  }
}
