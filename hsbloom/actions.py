"""Index operations (create, delete, restore, vacuum, cancel) as steps of the operation log.

(refresh follows the same protocol, in hsbloom/refresh.py, with the helpers here.)

Every operation follows one protocol:

1. check everything that can be checked without writing (config, source, state);
2. append a transient entry right after the latest entry; if another writer
   got that entry id first, fail with ConcurrentOperationError (nothing written);
3. do the work (build data, remove data);
4. append the stable entry that completes it; on failure in 3, append the
   stable entry the operation started from instead (the rollback), remove what
   step 3 wrote, and raise with the cause attached.

A transient entry left by a writer that died is returned to its stable state by
cancel(), or automatically by the next operation when that writer is provably
dead (same host and its process is gone): see docs/log.md.
"""

from __future__ import annotations

import datetime
import logging
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, TypeVar

from hsbloom.build import build_index_data
from hsbloom.config import BFIndexConfig
from hsbloom.errors import (
    ConcurrentOperationError,
    CorruptLogError,
    IndexBuildError,
    IndexExistsError,
    IndexNotFoundError,
    IndexStateError,
    first_line,
)
from hsbloom.filesystem import HadoopFileSystem
from hsbloom.layout import DATA_LAYOUT, IndexLayout, data_version_of
from hsbloom.syspath import check_apart_from_source, check_writable, qualified_system_path
from hsbloom.log import LogEntry, OperationLog, State, Writer, running
from hsbloom.sources import resolve_source

_logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class IndexContext:
    """The session and the paths, file system and log of one index."""

    spark: Any
    fs: HadoopFileSystem
    layout: IndexLayout
    log: OperationLog

    @classmethod
    def open(cls, spark: Any, name: str) -> "IndexContext":
        fs = HadoopFileSystem(spark)
        layout = IndexLayout(qualified_system_path(spark, fs), name)
        return cls(spark, fs, layout, OperationLog(spark, layout.log_path))

    @property
    def name(self) -> str:
        return self.layout.name


def create_index(spark: Any, df: Any, config: BFIndexConfig) -> LogEntry:
    """Build the index `config` describes over the files `df` scans; returns its ACTIVE entry."""
    if not isinstance(config, BFIndexConfig):
        raise TypeError(f"create_index needs a BFIndexConfig, got {type(config).__name__}")
    ctx = IndexContext.open(spark, config.index_name)
    listing = f"hsbloom: listing the source of index '{ctx.name}'"
    with job_group(spark, job_group_id("create", ctx.name), listing, cancel_on_failure=False):
        source, columns = resolve_source(spark, df, config.indexed_columns)  # Delta runs jobs to list
    config = replace(config, indexed_columns=columns)
    check_apart_from_source(ctx.layout.system_path, source.root_paths, ctx.fs.qualify)
    check_writable(spark, ctx.layout.system_path)
    base = _latest_settled(ctx)
    if base is not None and base.state in (State.ACTIVE, State.DELETED):
        advice = (
            "delete_index and vacuum_index it first, or choose another name"
            if base.state == State.ACTIVE
            else "restore_index it, or vacuum_index it to free the name"
        )
        raise IndexExistsError(f"index {ctx.name!r} already exists ({base.state.value}); {advice}")

    version = next_data_version(ctx)
    data_path = ctx.layout.data_path(version)
    writer = Writer.current()
    begin = LogEntry(
        id=base.id + 1 if base else 0,
        state=State.CREATING,
        operation="create",
        writer=writer,
        config=config,
        source=source,
        data_version=version,
        data_path=data_path,
        data_layout=DATA_LAYOUT,
    )
    with running(writer.operation_id):
        begin_operation(ctx, base, begin)
        summary = build_whole_version(ctx, begin, base, df, "so it was not created")
        return finish_operation(ctx, begin, begin.successor(State.ACTIVE, "create", writer, summary=summary), [data_path])


def build_whole_version(ctx: IndexContext, begin: LogEntry, base: LogEntry | None, df: Any, outcome: str) -> dict:
    """Build every file of `begin.source` into `begin.data_path` (create, full refresh); returns the summary."""
    assert begin.config is not None and begin.source is not None and begin.data_path is not None
    config, source = begin.config, begin.source
    description = (
        f"hsbloom: {begin.operation} index '{ctx.name}' on {', '.join(config.indexed_columns)} over "
        f"{len(source.files)} files ({source.describe()})"
    )
    return run_build(
        ctx,
        begin,
        base,
        description,
        outcome,
        lambda: build_index_data(
            ctx.spark,
            df,
            source.files,
            list(config.indexed_columns),
            config.expected_num_items,
            config.fpp,
            config.global_filter,
            begin.data_path,
            description,
        ),
    )


def run_build(
    ctx: IndexContext, begin: LogEntry, base: LogEntry | None, description: str, outcome: str, work: Callable[[], T]
) -> T:
    """Run `work`, which writes the new data version `begin.data_path`, under the operation's job group.

    On failure: cancel what is left of its jobs, append the entry the operation
    started from (rollback), remove the partial data, and raise IndexBuildError
    saying `outcome` (e.g. "so it was not created") with the cause chained.
    """
    try:
        # The group is ours alone now (we hold the transient entry): on failure, cancel its jobs.
        with job_group(ctx.spark, job_group_id(begin.operation, ctx.name), description, cancel_on_failure=True):
            return work()
    except BaseException as exc:
        _roll_back(ctx, begin, base, f"{begin.operation} failed: {first_line(exc)}")
        assert begin.data_path is not None and (base is None or begin.data_version != base.data_version)
        ctx.fs.delete(begin.data_path)
        if isinstance(exc, Exception):
            raise IndexBuildError(
                f"{begin.operation} of index {ctx.name!r} failed, {outcome} (its partial data was removed): "
                f"{first_line(exc)}"
            ) from exc
        raise


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
    base = _latest_settled(ctx)
    if base is None or (base.state == State.DOESNOTEXIST and not _version_directories(ctx)):
        raise IndexNotFoundError(f"index {name!r} does not exist")
    keep = set(base.parts) if base.state == State.ACTIVE else set()  # every directory the version reads
    final_state = State.ACTIVE if base.state == State.ACTIVE else State.DOESNOTEXIST
    writer = Writer.current()
    begin = base.successor(State.VACUUMING, "vacuum", writer)
    with running(writer.operation_id):
        begin_operation(ctx, base, begin)
        try:
            for version, directory in _version_directories(ctx).items():
                if version not in keep:
                    ctx.fs.delete(directory)
        except BaseException as exc:
            if final_state == State.ACTIVE:
                _roll_back(ctx, begin, base, f"vacuum failed: {first_line(exc)}")
            else:
                # Part of the data may be gone: the index cannot go back to DELETED, only forward.
                ctx.log.append(begin, _nothing(begin, writer, "vacuum", f"vacuum failed: {first_line(exc)}"))
            raise
        if final_state == State.ACTIVE:
            final = begin.successor(State.ACTIVE, "vacuum", writer)
        else:
            final = _nothing(begin, writer, "vacuum")
        return finish_operation(ctx, begin, final, [])


def cancel(spark: Any, name: str) -> LogEntry:
    """Return an index stuck in a transient state to the stable state its operation started from."""
    ctx = IndexContext.open(spark, name)
    latest = ctx.log.latest()
    if latest is None:
        raise IndexNotFoundError(f"index {name!r} does not exist")
    if latest.state.is_stable:
        raise IndexStateError(f"index {name!r} is {latest.state.value}: no operation is in progress to cancel")
    return _cancel(ctx, latest, "cancelled by cancel()")


def job_group_id(operation: str, name: str) -> str:
    """The Spark job group an operation's jobs run under (shown in the Spark UI)."""
    return f"hsbloom-{operation}-{name}"


# --- the protocol ---------------------------------------------------------------------------


def _latest_settled(ctx: IndexContext) -> LogEntry | None:
    """The latest entry, which must be stable; a dead writer's transient entry is cancelled first."""
    latest = ctx.log.latest()
    while latest is not None and not latest.state.is_stable and latest.writer.is_provably_dead():
        _logger.warning(
            "index %r: log entry %d was left %s by %s, which is gone; returning it to its last stable state",
            ctx.name,
            latest.id,
            latest.state.value,
            latest.writer.describe(),
        )
        try:
            return _cancel(ctx, latest, f"recovered: {latest.writer.describe()} died during {latest.operation}")
        except ConcurrentOperationError:
            latest = ctx.log.latest()  # the writer finished after all, or another recovery won: look again
    if latest is None or latest.state.is_stable:
        return latest
    raise ConcurrentOperationError(
        f"index {ctx.name!r} is busy: {latest.state.value} since {_format_ms(latest.timestamp_ms)} by "
        f"{latest.writer.describe()}. Wait for it to finish; if that writer is gone, call cancel({ctx.name!r})."
    )


def require_state(ctx: IndexContext, states: set[State], operation: str) -> LogEntry:
    base = _latest_settled(ctx)
    if base is None or base.state == State.DOESNOTEXIST:
        raise IndexNotFoundError(f"index {ctx.name!r} does not exist")
    if base.state not in states:
        raise IndexStateError(
            f"cannot {operation} index {ctx.name!r}: it is {base.state.value}, "
            f"and {operation} needs {' or '.join(sorted(s.value for s in states))}"
        )
    return base


def begin_operation(ctx: IndexContext, base: LogEntry | None, begin: LogEntry) -> None:
    if not ctx.log.append(base, begin):
        raise ConcurrentOperationError(
            f"another writer started an operation on index {ctx.name!r} at the same time "
            f"(it wrote log entry {begin.id} first); nothing was changed"
        )


def finish_operation(ctx: IndexContext, begin: LogEntry, final: LogEntry, written: list[str]) -> LogEntry:
    """Append the completing entry; if someone cancelled meanwhile, remove `written` and raise."""
    if ctx.log.append(begin, final):
        return final
    for path in written:
        ctx.fs.delete(path)
    raise ConcurrentOperationError(
        f"{begin.operation} of index {ctx.name!r} was cancelled while it ran (log entry {final.id} was written "
        "by another writer); its work was discarded"
    )


def _roll_back(ctx: IndexContext, begin: LogEntry, base: LogEntry | None, message: str) -> None:
    """After a failure, append the stable entry `begin` started from (best effort: report, don't mask)."""
    restored = _restored_entry(begin, base, Writer.current(), begin.operation, message)
    try:
        if not ctx.log.append(begin, restored):
            _logger.warning("index %r: rollback not written, log entry %d already exists", ctx.name, restored.id)
    except Exception:  # the original failure is what the caller must see
        _logger.exception("index %r: could not write the rollback entry %d", ctx.name, restored.id)


def _cancel(ctx: IndexContext, stuck: LogEntry, message: str) -> LogEntry:
    base = _stable_before(ctx, stuck)
    writer = Writer.current()
    if stuck.state == State.VACUUMING and (base is None or base.state != State.ACTIVE):
        # A vacuum of a deleted index may have removed part of its data: it can only go forward.
        restored = _nothing(stuck, writer, "cancel", message)
    else:
        restored = _restored_entry(stuck, base, writer, "cancel", message)
    if not ctx.log.append(stuck, restored):
        raise ConcurrentOperationError(
            f"could not cancel the {stuck.state.value} of index {ctx.name!r}: its writer finished or another "
            f"cancel won (log entry {restored.id} exists); nothing was changed"
        )
    abandoned = stuck.data_version
    if abandoned is not None and abandoned != restored.data_version:
        ctx.fs.delete(ctx.layout.data_path(abandoned))
    return restored


def _restored_entry(
    stuck: LogEntry, base: LogEntry | None, writer: Writer, operation: str, message: str
) -> LogEntry:
    """`base` again as the entry after `stuck` (or DOESNOTEXIST when the index had no stable state)."""
    if base is None:
        return _nothing(stuck, writer, operation, message)
    return replace(base.successor(base.state, operation, writer), id=stuck.id + 1, message=message)


def _nothing(after: LogEntry, writer: Writer, operation: str, message: str | None = None) -> LogEntry:
    return LogEntry(id=after.id + 1, state=State.DOESNOTEXIST, operation=operation, writer=writer, message=message)


def _stable_before(ctx: IndexContext, entry: LogEntry) -> LogEntry | None:
    for entry_id in range(entry.id - 1, -1, -1):
        candidate = ctx.log.read(entry_id)
        if candidate.state.is_stable:
            return candidate
    return None


def _simple_transition(ctx: IndexContext, base: LogEntry, transient: State, final: State, operation: str) -> LogEntry:
    """An operation whose only work is the state change itself (delete, restore)."""
    writer = Writer.current()
    begin = base.successor(transient, operation, writer)
    with running(writer.operation_id):
        begin_operation(ctx, base, begin)
        return finish_operation(ctx, begin, begin.successor(final, operation, writer), [])


def _version_directories(ctx: IndexContext) -> dict[int, str]:
    """The index's data directories on storage, by version."""
    found = {}
    for name in ctx.fs.list_directories(ctx.layout.index_path):
        version = data_version_of(name)
        if version is not None:
            found[version] = ctx.layout.data_path(version)
    return found


def next_data_version(ctx: IndexContext) -> int:
    """A version no entry of the log and no directory on storage has used, so data is never reused.

    Every build took a version above all earlier ones, so the log is read backwards only to the latest entry
    that started a build (CREATING, or REFRESHING with another version than the entry before it): its cost is
    the entries since then, not the index's whole history.
    """
    used = set(_version_directories(ctx))
    later: LogEntry | None = None
    for entry_id in reversed(ctx.log.ids()):
        try:
            entry = ctx.log.read(entry_id)
        except CorruptLogError:  # e.g. before a forced delete: its directory, if any, is in `used`
            continue
        if later is not None and later.state == State.REFRESHING and later.data_version != entry.data_version:
            break  # `later` started a build: its version is above every one before it
        if entry.data_version is not None:
            used.add(entry.data_version)
        if entry.state == State.CREATING:
            break
        later = entry
    return max(used) + 1 if used else 0


@contextmanager
def job_group(spark: Any, group_id: str, description: str, cancel_on_failure: bool) -> Iterator[None]:
    """Run the block's Spark jobs under a job group (then restore the caller's); on failure, if
    asked, cancel what is left of them (e.g. after Ctrl-C, which does not stop the JVM's jobs)."""
    sc = spark.sparkContext
    keys = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")
    saved = {key: sc.getLocalProperty(key) for key in keys}
    sc.setJobGroup(group_id, description, interruptOnCancel=True)
    try:
        yield
    except BaseException:
        if cancel_on_failure:
            sc.cancelJobGroup(group_id)
        raise
    finally:
        for key, value in saved.items():
            sc.setLocalProperty(key, value)


def _format_ms(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")

