"""The exceptions hsbloom's index management raises, so callers can tell them apart.

Every message names the index, what is wrong, and what to do about it.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from hsbloom import settings


class HsbloomError(Exception):
    """Base class of hsbloom's index-management errors."""


class InvalidConfigError(HsbloomError, ValueError):
    """A BFIndexConfig field is invalid (name, columns, fpp, expected_num_items)."""


class ConnectServerArgumentError(HsbloomError, ValueError):
    """An argument of connect_server_command / start_connect_server is invalid (a port, master or conf entry)."""


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
    """A log entry cannot be read (unparseable, or written by a newer hsbloom log format)."""


class SystemPathError(HsbloomError):
    """The system path (spark.hsbloom.system.path) cannot hold indexes: unknown scheme, not a directory, not
    writable, or inside (or containing) the source's directory. Checked before anything is written."""


class IndexPermissionsError(HsbloomError):
    """The index directory could not be given its source's permission (spark.hsbloom.index.permissions): the source's
    directory cannot be read, or the index directory's mode, group or ACL cannot be set. Raised before the
    operation writes anything."""


class OperationFailedError(HsbloomError):
    """An index operation failed for a reason hsbloom has no more specific error for (the cause is chained)."""


def first_line(exc: BaseException, limit: int = 500) -> str:
    """The head of an exception's message (a JVM error's full trace stays on the chained cause)."""
    java_exception = getattr(exc, "java_exception", None)  # py4j: the JVM's message, not "error calling o42"
    message = str(java_exception.toString()) if java_exception is not None else str(exc)
    text = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "..."


# Every failure of an index operation reaches the user as an hsbloom error.
#
# hsbloom's own checks raise HsbloomError subclasses that name the problem and
# the fix. Anything else that escapes an operation (a JVM exception through
# py4j, a Spark error, a RecursionError from a pathological input) is wrapped
# here, at the `Hyperspace` facade, in an OperationFailedError that names the
# operation, the index, the first line of the cause and where to go next; the
# cause stays chained for its full trace. Errors in the caller's arguments
# (TypeError for a wrong type, ValueError for a wrong value such as an unknown
# refresh mode) pass through unchanged.
@contextmanager
def hsbloom_errors(operation: str, name: str | None = None) -> Iterator[None]:
    """Run the block; turn any failure that is not an HsbloomError (or an argument's TypeError or ValueError)
    into OperationFailedError."""
    try:
        yield
    except (HsbloomError, TypeError, ValueError, KeyboardInterrupt):
        raise
    except Exception as exc:
        what = f"{operation} of index {name!r}" if name is not None else operation
        raise OperationFailedError(
            f"{what} failed: {first_line(exc)}. Check {settings.SYSTEM_PATH} and the source; "
            "hs.verify_index(name) reports damaged index files, and docs/troubleshooting.md lists the ways to "
            "recover (delete_index(name, force=True), vacuum_index(name), then create_index again)"
        ) from exc
