"""Every failure of an index operation reaches the user as an hsbloom error.

hsbloom's own checks raise HsbloomError subclasses that name the problem and
the fix. Anything else that escapes an operation (a JVM exception through
py4j, a Spark error, a RecursionError from a pathological input) is wrapped
here, at the `Hyperspace` facade, in an OperationFailedError that names the
operation, the index, the first line of the cause and where to go next; the
cause stays chained for its full trace. Errors in the caller's arguments
(TypeError for a wrong type, ValueError for a wrong value such as an unknown
refresh mode) pass through unchanged.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from hsbloom.errors import HsbloomError, OperationFailedError, first_line


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
            f"{what} failed: {first_line(exc)}. Check spark.hsbloom.system.path and the source; "
            "hs.verify_index(name) reports damaged index files, and docs/troubleshooting.md lists the ways to "
            "recover (delete_index(name, force=True), vacuum_index(name), then create_index again)"
        ) from exc
