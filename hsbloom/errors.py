"""The exceptions hsbloom raises, all in one place so callers can tell them apart: each is an HsbloomError, and a
bad argument also a ValueError.

Setting a session up raises HsbloomJarError and HsbloomSessionError, in Python, before or while it starts. Every
other hsbloom error is raised in the jar as a Spark `AnalysisException` whose error class (`HSBLOOM_*`) says what
kind it is; `raised_as_hsbloom_errors` turns it into the matching Python class, on a classic session and on Spark
Connect alike. Every message names the index, what is wrong, and what to do about it. A caller's own statement
(`run_explained`) keeps its own errors: `statement_errors_kept` maps only the jar's.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from hsbloom import settings


class HsbloomError(Exception):
    """Base class of hsbloom's index-management errors."""


class InvalidArgumentError(HsbloomError, ValueError):
    """An argument of a call is invalid (an unknown refresh mode; a port, master or setting of a Connect server)."""


class HsbloomJarError(HsbloomError, RuntimeError):
    """The hsbloom jar is missing, unreadable, or built for another Spark: checked before Spark starts (`configure`,
    `connect_server_command`, `spark_sql_command`), since Spark itself would only log a warning."""


class UnsupportedSparkError(HsbloomJarError):
    """The running Spark is not one hsbloom supports (hsbloom/spark_lines.tsv): no jar of the package serves its
    line, or the line's Spark lacks a feature asked for (Spark Connect's server on a line without it)."""


class HsbloomSessionError(HsbloomError, RuntimeError):
    """The SparkSession (or builder, or Connect server) cannot run hsbloom: no hsbloom extension or jar, a Connect
    server that did not start, or a package the session needs (Delta's, Spark Connect's client) not installed."""


class InvalidConfigError(HsbloomError, ValueError):
    """A BFIndexConfig field is invalid: of the wrong type (refused by BFIndexConfig itself, before any JVM call), or
    a value the jar refuses when the index is created (name, columns, fpp, expected_num_items, granularity)."""


class UnsupportedSourceError(HsbloomError, ValueError):
    """The DataFrame is not a plain scan of files, or an indexed column is unknown or of an unsupported type."""


class EncryptedSourceError(UnsupportedSourceError):
    """An indexed column is encrypted with Parquet modular encryption, or a source file's footer is: the index would
    store in plaintext what the encryption hides (docs/security.md#encrypted-columns). Checked before anything is
    written, at create and at every refresh."""


class IndexNotFoundError(HsbloomError):
    """No index of that name exists (or it was vacuumed)."""


class IndexExistsError(HsbloomError):
    """create_index was asked for a name that an ACTIVE or DELETED index holds."""


class IndexStateError(HsbloomError):
    """The operation is not allowed in the index's current state (e.g. restoring an ACTIVE index)."""


class ConcurrentOperationError(HsbloomError):
    """Another writer is running an operation on the index, or won the race for the next log entry."""


class IndexBuildError(HsbloomError):
    """Building the index data failed; the index was rolled back to its previous state."""


class CorruptLogError(HsbloomError):
    """A log entry cannot be read (unparseable, out of range, too large, or of a newer hsbloom log format)."""


class SystemPathError(HsbloomError):
    """The system path (spark.hsbloom.system.path) cannot hold indexes: unknown scheme, not a directory, not
    writable, or inside (or containing) the source's directory. Checked before anything is written."""


class IndexPermissionsError(HsbloomError):
    """The index directory could not be given its source's permission (spark.hsbloom.index.permissions): the source's
    directory cannot be read, or the index directory's mode, group or ACL cannot be set. Raised before the
    operation writes anything."""


class OperationFailedError(HsbloomError):
    """An index operation failed for a reason hsbloom has no more specific error for (the cause is chained)."""


# The jar's error classes (hsbloom.HsbloomException), each raised in Python as one of the classes above.
ERROR_CLASSES: dict[str, type[HsbloomError]] = {
    "HSBLOOM_INVALID_ARGUMENT": InvalidArgumentError,
    "HSBLOOM_INVALID_CONFIG": InvalidConfigError,
    "HSBLOOM_UNSUPPORTED_SOURCE": UnsupportedSourceError,
    "HSBLOOM_ENCRYPTED_SOURCE": EncryptedSourceError,
    "HSBLOOM_INDEX_NOT_FOUND": IndexNotFoundError,
    "HSBLOOM_INDEX_EXISTS": IndexExistsError,
    "HSBLOOM_INDEX_STATE": IndexStateError,
    "HSBLOOM_CONCURRENT_OPERATION": ConcurrentOperationError,
    "HSBLOOM_BUILD_FAILED": IndexBuildError,
    "HSBLOOM_CORRUPT_LOG": CorruptLogError,
    "HSBLOOM_SYSTEM_PATH": SystemPathError,
    "HSBLOOM_INDEX_PERMISSIONS": IndexPermissionsError,
    "HSBLOOM_OPERATION_FAILED": OperationFailedError,
}


def first_line(exc: BaseException, limit: int = 500) -> str:
    """The head of an exception's message (a JVM error's full trace stays on the chained cause)."""
    java_exception = getattr(exc, "java_exception", None)  # py4j: the JVM's message, not "error calling o42"
    message = str(java_exception.toString()) if java_exception is not None else str(exc)
    text = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


def _hsbloom_error_of(exc: BaseException) -> HsbloomError | None:
    """The hsbloom error a Spark exception carries (its error class and message parameter), else None."""
    # pyspark 4 names it getCondition; 3.5 has only getErrorClass (4 keeps it, deprecated).
    get_condition = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    condition = get_condition() if callable(get_condition) else None
    kind = ERROR_CLASSES.get(condition or "")
    if kind is None:
        return None
    parameters = exc.getMessageParameters() or {}  # type: ignore[attr-defined]
    return kind(parameters.get("message") or first_line(exc))


@contextmanager
def statement_errors_kept() -> Iterator[None]:
    """Run a caller's own SQL statement (run_explained): an hsbloom error of the jar becomes its Python class, and
    every other failure (Spark's, Delta's: the statement's own) is raised unchanged, as `spark.sql(statement)`
    raises it, so the caller's `except` clauses for that statement still match."""
    try:
        yield
    except Exception as exc:
        mapped = _hsbloom_error_of(exc)
        if mapped is None:
            raise
        raise mapped from exc


@contextmanager
def raised_as_hsbloom_errors(operation: str, name: str | None = None) -> Iterator[None]:
    """Run the block; an hsbloom error of the jar becomes its Python class, and any other failure that is not an
    HsbloomError (or an argument's TypeError or ValueError) an OperationFailedError, with the cause chained."""
    try:
        yield
    except (HsbloomError, KeyboardInterrupt):
        raise
    except Exception as exc:
        mapped = _hsbloom_error_of(exc)
        if mapped is not None:
            raise mapped from exc
        if isinstance(exc, (TypeError, ValueError)):
            raise
        what = f"{operation} of index {name!r}" if name is not None else operation
        raise OperationFailedError(
            f"{what} failed: {first_line(exc)}. Check {settings.SYSTEM_PATH} and the source; "
            "hs.verify_index(name) reports damaged index files, and docs/troubleshooting.md lists the ways to "
            "recover (delete_index(name, force=True), vacuum_index(name), then create_index again)"
        ) from exc
