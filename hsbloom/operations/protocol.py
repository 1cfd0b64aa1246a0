"""The protocol every index operation follows, written once (`Operation`), and what operations share.

Every operation (create, refresh, delete, restore, vacuum) follows one protocol:

1. check everything that can be checked without writing (config, source, state)
   (the operation's own module does this, then hands over to `Operation.run`);
2. append a transient entry right after the latest entry; if another writer
   got that entry id first, fail with ConcurrentOperationError (nothing written);
3. do the work (build data, remove data);
4. append the stable entry that completes it; on failure in 3, append the
   stable entry the operation started from instead (the rollback), remove what
   step 3 wrote, and raise with the cause attached.

A transient entry left by a writer that died is returned to its stable state by
cancel(), or automatically by the next operation when that writer is provably
dead (same host and its process is gone): see docs/design/log.md.
"""

from __future__ import annotations

import datetime
import logging
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator

from hsbloom.errors import (
    ConcurrentOperationError,
    CorruptLogError,
    IndexBuildError,
    IndexNotFoundError,
    IndexStateError,
    first_line,
)
from hsbloom.index.filesystem import HadoopFileSystem
from hsbloom.index.layout import IndexLayout, data_version_of
from hsbloom.index.log import LogEntry, OperationLog, State, Writer, running
from hsbloom.index.syspath import qualified_system_path

_logger = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class Build:
    """How an operation's work writes a new data version (`begin.data_path`): what its Spark jobs are called
    in the UI, and what a failure means for the user (e.g. "so it was not created")."""

    description: str
    outcome: str


class Operation:
    """One operation on one index: append its transient entry, do the work, append the entry that completes
    it; on failure, append the entry it started from again and remove what it wrote (module docstring)."""

    def __init__(self, ctx: IndexContext, base: LogEntry | None, name: str) -> None:
        self.ctx = ctx
        self.base = base  # the stable entry the operation starts from (None: a new index)
        self.name = name
        self.writer = Writer.current()

    def begins(self, state: State, **fields: Any) -> LogEntry:
        """The transient entry after `base`, with `base`'s content changed by `fields`."""
        assert self.base is not None
        return self.base.successor(state, self.name, self.writer, **fields)

    def ends(self, begin: LogEntry, state: State, **fields: Any) -> LogEntry:
        """The stable entry that completes the operation begun by `begin`."""
        return begin.successor(state, self.name, self.writer, **fields)

    def run(
        self,
        begin: LogEntry,
        work: Callable[[], LogEntry],
        build: Build | None = None,
        on_failure: Callable[[LogEntry, BaseException], None] | None = None,
    ) -> LogEntry:
        """Append `begin`, run `work` (which returns the completing entry) and append its result.

        With `build`, the work writes the data version `begin.data_path`: its jobs run under the operation's
        job group, and a failure rolls back, removes the partial data and raises IndexBuildError. Otherwise a
        failure rolls back (or runs `on_failure` instead) and is raised as it is.
        """
        with running(self.writer.operation_id):
            if not self.ctx.log.append(self.base, begin):
                raise ConcurrentOperationError(
                    f"another writer started an operation on index {self.ctx.name!r} at the same time "
                    f"(it wrote log entry {begin.id} first); nothing was changed. Wait for that operation to "
                    f"finish (hs.index({self.ctx.name!r}).state), then run this one again if it is still needed"
                )
            if build is not None:
                return self.finish(begin, self._build(begin, build, work), [begin.data_version])
            try:
                final = work()
            except BaseException as exc:
                (on_failure or self._roll_back)(begin, exc)
                raise
            return self.finish(begin, final, [])

    def finish(self, begin: LogEntry, final: LogEntry, written: list[int | None]) -> LogEntry:
        """Append the completing entry; if someone cancelled meanwhile, remove the data versions `written` and
        raise."""
        if self.ctx.log.append(begin, final):
            return final
        for version in written:
            if version is not None:
                self.ctx.fs.delete_data_version(self.ctx.layout, version)
        raise ConcurrentOperationError(
            f"{begin.operation} of index {self.ctx.name!r} was cancelled while it ran (log entry {final.id} was "
            "written by another writer); its work was discarded"
        )

    def _build(self, begin: LogEntry, build: Build, work: Callable[[], LogEntry]) -> LogEntry:
        try:
            # The group is ours alone now (we hold the transient entry): on failure, cancel its jobs.
            with job_group(self.ctx.spark, job_group_id(begin.operation, self.ctx.name), build.description,
                           cancel_on_failure=True):
                return work()
        except BaseException as exc:
            self.roll_back(begin, exc)
            assert begin.data_version is not None
            assert self.base is None or begin.data_version != self.base.data_version
            self.ctx.fs.delete_data_version(self.ctx.layout, begin.data_version)
            if isinstance(exc, Exception):
                raise IndexBuildError(
                    f"{begin.operation} of index {self.ctx.name!r} failed, {build.outcome} (its partial data was "
                    f"removed): {first_line(exc)}"
                ) from exc
            raise

    def roll_back(self, begin: LogEntry, exc: BaseException) -> None:
        roll_back(self.ctx, begin, self.base, f"{begin.operation} failed: {first_line(exc)}")



# --- what operations share ----------------------------------------------------------------------------


def job_group_id(operation: str, name: str) -> str:
    """The Spark job group an operation's jobs run under (shown in the Spark UI)."""
    return f"hsbloom-{operation}-{name}"


def latest_settled(ctx: IndexContext) -> LogEntry | None:
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
            return cancel_stuck(ctx, latest, f"recovered: {latest.writer.describe()} died during {latest.operation}")
        except ConcurrentOperationError:
            latest = ctx.log.latest()  # the writer finished after all, or another recovery won: look again
    if latest is None or latest.state.is_stable:
        return latest
    raise ConcurrentOperationError(
        f"index {ctx.name!r} is busy: {latest.state.value} since {format_ms(latest.timestamp_ms)} by "
        f"{latest.writer.describe()}. Wait for it to finish; if that writer is gone, call cancel({ctx.name!r})."
    )


def require_state(ctx: IndexContext, states: set[State], operation: str) -> LogEntry:
    base = latest_settled(ctx)
    if base is None or base.state == State.DOESNOTEXIST:
        raise IndexNotFoundError(f"index {ctx.name!r} does not exist")
    if base.state not in states:
        raise IndexStateError(
            f"cannot {operation} index {ctx.name!r}: it is {base.state.value}, "
            f"and {operation} needs {' or '.join(sorted(s.value for s in states))}"
        )
    return base


def roll_back(ctx: IndexContext, begin: LogEntry, base: LogEntry | None, message: str) -> None:
    """After a failure, append the stable entry `begin` started from (best effort: report, don't mask)."""
    restored = restored_entry(begin, base, Writer.current(), begin.operation, message)
    try:
        if not ctx.log.append(begin, restored):
            _logger.warning("index %r: rollback not written, log entry %d already exists", ctx.name, restored.id)
    except Exception:  # the original failure is what the caller must see
        _logger.exception("index %r: could not write the rollback entry %d", ctx.name, restored.id)


def cancel_stuck(ctx: IndexContext, stuck: LogEntry, message: str) -> LogEntry:
    base = stable_before(ctx, stuck)
    writer = Writer.current()
    if stuck.state == State.VACUUMING and (base is None or base.state != State.ACTIVE):
        # A vacuum of a deleted index may have removed part of its data: it can only go forward.
        restored = nothing_entry(stuck, writer, "cancel", message)
    else:
        restored = restored_entry(stuck, base, writer, "cancel", message)
    if not ctx.log.append(stuck, restored):
        raise ConcurrentOperationError(
            f"could not cancel the {stuck.state.value} of index {ctx.name!r}: its writer finished or another "
            f"cancel won (log entry {restored.id} exists); nothing was changed"
        )
    abandoned = stuck.data_version
    if abandoned is not None and abandoned != restored.data_version:
        ctx.fs.delete_data_version(ctx.layout, abandoned)
    return restored


def restored_entry(
    stuck: LogEntry, base: LogEntry | None, writer: Writer, operation: str, message: str
) -> LogEntry:
    """`base` again as the entry after `stuck` (or DOESNOTEXIST when the index had no stable state)."""
    if base is None:
        return nothing_entry(stuck, writer, operation, message)
    return replace(base.successor(base.state, operation, writer), id=stuck.id + 1, message=message)


def nothing_entry(after: LogEntry, writer: Writer, operation: str, message: str | None = None) -> LogEntry:
    return LogEntry(id=after.id + 1, state=State.DOESNOTEXIST, operation=operation, writer=writer, message=message)


def stable_before(ctx: IndexContext, entry: LogEntry) -> LogEntry | None:
    for entry_id in range(entry.id - 1, -1, -1):
        candidate = ctx.log.read(entry_id)
        if candidate.state.is_stable:
            return candidate
    return None


def version_directories(ctx: IndexContext) -> set[int]:
    """The versions of the index's data directories on storage."""
    return {v for v in map(data_version_of, ctx.fs.list_directories(ctx.layout.index_path)) if v is not None}


def next_data_version(ctx: IndexContext) -> int:
    """A version no entry of the log and no directory on storage has used, so data is never reused.

    Every build took a version above all earlier ones, so the log is read backwards only to the latest entry
    that started a build (CREATING, or REFRESHING with another version than the entry before it): its cost is
    the entries since then, not the index's whole history.
    """
    used = set(version_directories(ctx))
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


def format_ms(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
