"""Forced delete: the way out for an index whose log cannot be followed any more.

A normal delete follows the log protocol (docs/design/log.md), which needs a readable
latest entry in a state that allows it. When the latest entry is damaged
(truncated, garbage, written by a newer hsbloom), or an operation left by a
writer that is not provably dead holds the index, `delete_index(name,
force=True)` appends a DOESNOTEXIST entry after whatever the latest entry is,
without reading it. Queries stop using the index at once; `vacuum_index`
then removes its data, and the name is free for `create_index`.

A writer still running on the index loses the race for its completing entry
and discards its work, as after cancel().
"""

from __future__ import annotations

import logging
from typing import Any

from hsbloom.operations.protocol import IndexContext, version_directories
from hsbloom.errors import ConcurrentOperationError, CorruptLogError, IndexNotFoundError
from hsbloom.index.log import LogEntry, State, Writer

FORCED_MESSAGE = "force-deleted"  # how a forced delete's entry begins its message (verify_index looks for it)

_logger = logging.getLogger(__name__)


def force_delete(spark: Any, name: str) -> LogEntry:
    """Mark index `name` DOESNOTEXIST whatever its log holds; its data stays until vacuum_index."""
    ctx = IndexContext.open(spark, name)
    ids = ctx.log.ids()
    latest: LogEntry | None = None
    damaged = ""
    if ids:
        try:
            latest = ctx.log.read(ids[-1])
        except CorruptLogError as exc:
            damaged = f" (its latest log entry {ids[-1]} was unreadable: {str(exc).split('. If no', 1)[0]})"
    has_data = bool(version_directories(ctx))
    if not ids and not has_data:
        raise IndexNotFoundError(f"index {name!r} does not exist")
    if latest is not None and latest.state == State.DOESNOTEXIST:
        if has_data:
            raise IndexNotFoundError(
                f"index {name!r} does not exist (already deleted); vacuum_index({name!r}) removes its leftover data"
            )
        raise IndexNotFoundError(f"index {name!r} does not exist")
    entry = LogEntry(
        id=ids[-1] + 1 if ids else 0,
        state=State.DOESNOTEXIST,
        operation="delete",
        writer=Writer.current(),
        message=f"{FORCED_MESSAGE}{damaged}",
    )
    if not ctx.log.append_unchecked(entry):
        raise ConcurrentOperationError(
            f"could not force-delete index {name!r}: another writer wrote log entry {entry.id} at the same time; "
            "try again"
        )
    _logger.warning("index %r force-deleted at log entry %d%s; vacuum_index removes its data", name, entry.id, damaged)
    return entry
