"""delete, restore, vacuum and cancel: the operations that change an index's state but build nothing."""

from __future__ import annotations

from typing import Any

from hsbloom.errors import IndexNotFoundError, IndexStateError, first_line
from hsbloom.index.log import LogEntry, State
from hsbloom.operations.protocol import (
    IndexContext,
    Operation,
    cancel_stuck,
    latest_settled,
    nothing_entry,
    require_state,
    roll_back,
    version_directories,
)


def delete_index(spark: Any, name: str) -> LogEntry:
    """Soft delete: ACTIVE -> DELETED; queries stop using it, its data stays until vacuum_index."""
    ctx = IndexContext.open(spark, name)
    base = require_state(ctx, {State.ACTIVE}, "delete")
    return _simple_transition(ctx, base, State.DELETING, State.DELETED, "delete")


def restore_index(spark: Any, name: str) -> LogEntry:
    """Undo a soft delete: DELETED -> ACTIVE."""
    ctx = IndexContext.open(spark, name)
    base = require_state(ctx, {State.DELETED}, "restore")
    return _simple_transition(ctx, base, State.RESTORING, State.ACTIVE, "restore")


def vacuum_index(spark: Any, name: str) -> LogEntry:
    """Remove data: all of a DELETED index's (it becomes DOESNOTEXIST, freeing the name), or the
    data directories an ACTIVE index no longer reads. Also clears data left by cancelled builds."""
    ctx = IndexContext.open(spark, name)
    base = latest_settled(ctx)
    if base is None or (base.state == State.DOESNOTEXIST and not version_directories(ctx)):
        raise IndexNotFoundError(f"index {name!r} does not exist")
    keep = set(base.parts) if base.state == State.ACTIVE else set()  # every directory the version reads
    op = Operation(ctx, base, "vacuum")
    begin = op.begins(State.VACUUMING)

    def work() -> LogEntry:
        for version in version_directories(ctx) - keep:
            ctx.fs.delete_data_version(ctx.layout, version)
        return op.ends(begin, State.ACTIVE) if base.state == State.ACTIVE else nothing_entry(begin, op.writer, "vacuum")

    def on_failure(begin: LogEntry, exc: BaseException) -> None:
        if base.state == State.ACTIVE:
            roll_back(ctx, begin, base, f"vacuum failed: {first_line(exc)}")
        else:  # part of the data may be gone: the index cannot go back to DELETED, only forward
            ctx.log.append(begin, nothing_entry(begin, op.writer, "vacuum", f"vacuum failed: {first_line(exc)}"))

    return op.run(begin, work, on_failure=on_failure)


def cancel(spark: Any, name: str) -> LogEntry:
    """Return an index stuck in a transient state to the stable state its operation started from."""
    ctx = IndexContext.open(spark, name)
    latest = ctx.log.latest()
    if latest is None:
        raise IndexNotFoundError(f"index {name!r} does not exist")
    if latest.state.is_stable:
        raise IndexStateError(f"index {name!r} is {latest.state.value}: no operation is in progress to cancel")
    return cancel_stuck(ctx, latest, "cancelled by cancel()")


def _simple_transition(ctx: IndexContext, base: LogEntry, transient: State, final: State, operation: str) -> LogEntry:
    """An operation whose only work is the state change itself (delete, restore)."""
    op = Operation(ctx, base, operation)
    begin = op.begins(transient)
    return op.run(begin, lambda: op.ends(begin, final))
