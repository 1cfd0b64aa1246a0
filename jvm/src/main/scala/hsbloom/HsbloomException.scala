package hsbloom

import org.apache.spark.sql.AnalysisException

/**
 * An error of hsbloom's index management: a Spark `AnalysisException` whose error class (`getCondition`) says
 * what kind, and whose message names the index, the problem and the fix. Every client sees the same one: a
 * Scala or Java caller catches it, SQL prints it, and Python (classic or Spark Connect) turns the error class
 * into its own exception type (`hsbloom.errors`). The message is also the single message parameter
 * `message`, so a client can show it without Spark's prefix.
 */
class HsbloomException(val condition: String, val text: String, state: String, cause: Throwable = null)
  extends AnalysisException(
    message = text,
    line = None,
    startPosition = None,
    cause = Option(cause),
    errorClass = Some(condition),
    messageParameters = Map("message" -> text),
    context = Array.empty) {
  override def getSqlState: String = state
  override def getMessage: String = s"[$condition] $text"
}

/** The error classes, each with its SQL state, and a constructor per class. */
object HsbloomException {
  /** A BFIndexConfig or statement option is invalid (name, columns, fpp, expected_num_items, granularity). */
  val InvalidConfig = "HSBLOOM_INVALID_CONFIG"
  /** An argument of a call is invalid (an unknown refresh mode, a wrong type). */
  val InvalidArgument = "HSBLOOM_INVALID_ARGUMENT"
  /** The source is not a plain scan of files, or an indexed column is unknown or of a type hsbloom cannot index. */
  val UnsupportedSource = "HSBLOOM_UNSUPPORTED_SOURCE"
  /** An indexed column, or a file's footer, is encrypted (docs/security.md#encrypted-columns). */
  val EncryptedSource = "HSBLOOM_ENCRYPTED_SOURCE"
  val IndexNotFound = "HSBLOOM_INDEX_NOT_FOUND"
  val IndexExists = "HSBLOOM_INDEX_EXISTS"
  /** The operation is not allowed in the index's state (restoring an ACTIVE index, an incremental refresh that must be full). */
  val IndexState = "HSBLOOM_INDEX_STATE"
  /** Another writer runs an operation on the index, or won the race for the next log entry. */
  val ConcurrentOperation = "HSBLOOM_CONCURRENT_OPERATION"
  /** Building the index data failed; the index was rolled back to its previous state. */
  val BuildFailed = "HSBLOOM_BUILD_FAILED"
  /** A log entry cannot be read: unparseable, out of range, too large, or of a newer log format. */
  val CorruptLog = "HSBLOOM_CORRUPT_LOG"
  /** The system path cannot hold indexes (scheme, a file, not writable, inside or containing the source). */
  val SystemPath = "HSBLOOM_SYSTEM_PATH"
  /** The index directory could not be given its source's permission. */
  val IndexPermissions = "HSBLOOM_INDEX_PERMISSIONS"
  /** Any other failure of an operation (the cause is chained). */
  val OperationFailed = "HSBLOOM_OPERATION_FAILED"

  /** Each error class's SQL state (ANSI/ISO classes where one fits). */
  val SqlStates: Map[String, String] = Map(
    InvalidConfig -> "22023", InvalidArgument -> "22023", UnsupportedSource -> "0A000", EncryptedSource -> "0A000",
    IndexNotFound -> "42704", IndexExists -> "42710", IndexState -> "55000", ConcurrentOperation -> "40001",
    BuildFailed -> "58000", CorruptLog -> "XX001", SystemPath -> "58030", IndexPermissions -> "42501",
    OperationFailed -> "58000")

  def apply(condition: String, message: String, cause: Throwable = null): HsbloomException =
    new HsbloomException(condition, message, SqlStates(condition), cause)

  def invalidConfig(message: String): HsbloomException = apply(InvalidConfig, message)
  def invalidArgument(message: String): HsbloomException = apply(InvalidArgument, message)
  def unsupportedSource(message: String): HsbloomException = apply(UnsupportedSource, message)
  def encryptedSource(message: String): HsbloomException = apply(EncryptedSource, message)
  def indexNotFound(message: String): HsbloomException = apply(IndexNotFound, message)
  def indexExists(message: String): HsbloomException = apply(IndexExists, message)
  def indexState(message: String, cause: Throwable = null): HsbloomException = apply(IndexState, message, cause)
  def concurrentOperation(message: String): HsbloomException = apply(ConcurrentOperation, message)
  def buildFailed(message: String, cause: Throwable): HsbloomException = apply(BuildFailed, message, cause)
  def corruptLog(message: String, cause: Throwable = null): HsbloomException = apply(CorruptLog, message, cause)
  def systemPath(message: String, cause: Throwable = null): HsbloomException = apply(SystemPath, message, cause)
  def indexPermissions(message: String, cause: Throwable = null): HsbloomException =
    apply(IndexPermissions, message, cause)
  def operationFailed(message: String, cause: Throwable): HsbloomException = apply(OperationFailed, message, cause)
}
