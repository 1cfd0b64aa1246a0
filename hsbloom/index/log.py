"""The operation log: an index's history as numbered JSON entries, each written once.

Entry N lives at `<index>/_hsbloom_log/<N zero-padded to 20 digits>.json` and is
created only if absent (jvm/src/main/scala/hsbloom/LogStore.scala), so when
two writers race for the same N exactly one wins and the other learns it lost.
An operation appends a transient entry (CREATING, DELETING, ...) and then a
stable one (ACTIVE, DELETED, DOESNOTEXIST); readers use the latest stable
entry, so a writer that crashes in between leaves the previous stable state
readable. Entries are data only (no class names, nothing executable); see
docs/design/log.md for the format.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Iterator

from py4j.protocol import Py4JJavaError

from hsbloom import jar
from hsbloom.config import DEFAULT_FPP, BFIndexConfig
from hsbloom.errors import CorruptLogError, IndexStateError
from hsbloom.index import stored
from hsbloom.index.sources import FileFingerprint, Source
from hsbloom.version import __version__

LOG_FORMAT_VERSION = 1
_ID_DIGITS = 20
_ENTRY_NAME = re.compile(r"([0-9]{1,20})\.json")
_TOO_LARGE = "hsbloom.index.LogEntryTooLargeException"  # what LogStore.read throws for an entry over the bound


class State(str, Enum):
    CREATING = "CREATING"
    ACTIVE = "ACTIVE"
    DELETING = "DELETING"
    DELETED = "DELETED"
    RESTORING = "RESTORING"
    VACUUMING = "VACUUMING"
    REFRESHING = "REFRESHING"
    DOESNOTEXIST = "DOESNOTEXIST"

    @property
    def is_stable(self) -> bool:
        return self in STABLE_STATES


STABLE_STATES = frozenset({State.ACTIVE, State.DELETED, State.DOESNOTEXIST})

# For each transient state: the stable states (None: no log yet) an operation may start
# from, and the stable states that complete it. Any transient entry may instead be
# followed by its starting state again (rollback or cancel).
TRANSITIONS: dict[State, tuple[frozenset[State | None], frozenset[State]]] = {
    State.CREATING: (frozenset({None, State.DOESNOTEXIST}), frozenset({State.ACTIVE})),
    State.DELETING: (frozenset({State.ACTIVE}), frozenset({State.DELETED})),
    State.RESTORING: (frozenset({State.DELETED}), frozenset({State.ACTIVE})),
    State.VACUUMING: (
        frozenset({State.ACTIVE, State.DELETED, State.DOESNOTEXIST}),
        frozenset({State.ACTIVE, State.DOESNOTEXIST}),
    ),
    State.REFRESHING: (frozenset({State.ACTIVE}), frozenset({State.ACTIVE})),
}


# Operations this process is running, by operation id: a log entry written by this
# process whose operation is not in here has a writer that is provably gone.
_running_operations: set[str] = set()
_running_lock = threading.Lock()


@contextmanager
def running(operation_id: str) -> Iterator[None]:
    """Mark `operation_id` as running in this process for the duration of the block."""
    with _running_lock:
        _running_operations.add(operation_id)
    try:
        yield
    finally:
        with _running_lock:
            _running_operations.discard(operation_id)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return True


@dataclass(frozen=True)
class Writer:
    """Who wrote an entry: enough to tell, on the same host, whether that writer is still alive."""

    host: str
    pid: int
    operation_id: str

    @classmethod
    def current(cls) -> "Writer":
        return cls(host=socket.gethostname(), pid=os.getpid(), operation_id=uuid.uuid4().hex)

    def is_provably_dead(self) -> bool:
        """True only when certain: same host and the process is gone, or this process no longer runs it.

        A writer on another host, or whose process id now belongs to another
        process, is not provably dead: the index then stays busy until cancel().
        """
        if self.host != socket.gethostname():
            return False
        if self.pid == os.getpid():
            with _running_lock:
                return self.operation_id not in _running_operations
        return not _process_exists(self.pid)

    def describe(self) -> str:
        return f"process {self.pid} on host {self.host}"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class PendingChanges:
    """Source changes a quick refresh found and recorded, which the index data does not reflect yet.

    Queries need nothing from this (a file the data does not hold is read, a
    deleted file is not listed); it tells `index(name)` how stale the data is
    and which table version the source was last compared at.
    """

    checked_ms: int  # when the source was compared
    delta_version: int | None  # the Delta version compared (None for other formats)
    appended: tuple[FileFingerprint, ...]  # files the data does not hold: read by every query
    deleted_file_ids: tuple[int, ...]  # files the version holds that are gone or changed

    def to_dict(self) -> dict[str, Any]:
        return {
            "checked_ms": self.checked_ms,
            "delta_version": self.delta_version,
            "appended": [f.to_dict() for f in self.appended],
            "deleted_file_ids": list(self.deleted_file_ids),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PendingChanges":
        """The pending changes of a stored entry, every field checked (hsbloom.index.stored)."""
        data = stored.mapping(data, "pending")
        return cls(
            checked_ms=stored.integer(data.get("checked_ms"), "pending.checked_ms"),
            delta_version=stored.optional_integer(data.get("delta_version"), "pending.delta_version"),
            appended=tuple(
                FileFingerprint.from_dict(f) for f in stored.sequence(data.get("appended"), "pending.appended")
            ),
            deleted_file_ids=tuple(
                stored.integer(i, "pending.deleted_file_ids[]", stored.MAX_FILE_ID)
                for i in stored.sequence(data.get("deleted_file_ids"), "pending.deleted_file_ids")
            ),
        )


@dataclass(frozen=True)
class LogEntry:
    """One step of an index's history; stable entries carry everything a reader needs."""

    id: int
    state: State
    operation: str  # create, delete, restore, vacuum, refresh, cancel
    writer: Writer
    timestamp_ms: int = field(default_factory=now_ms)
    hsbloom_version: str = __version__
    config: BFIndexConfig | None = None
    source: Source | None = None
    data_version: int | None = None  # N of the newest data directory v__=N of the version
    data_path: str | None = None  # qualified path of that directory, for information
    # The data directories (by version, oldest first, ending with data_version) that together make up the
    # index version, when an incremental refresh referred to earlier ones; None: data_version alone.
    data_parts: tuple[int, ...] | None = None
    dropped_file_ids: tuple[int, ...] = ()  # file ids of the parts' tables no longer in the version (deleted)
    data_layout: int | None = None  # how the data is stored (hsbloom.index.layout.DATA_LAYOUT); None: an older layout
    summary: dict[str, Any] | None = None  # what the build returned
    message: str | None = None  # why a rollback or cancel happened
    pending: PendingChanges | None = None  # source changes a quick refresh recorded, not yet in the data

    @property
    def parts(self) -> tuple[int, ...]:
        """The data versions this entry's index version reads, oldest first (one for most versions)."""
        if self.data_parts:
            return self.data_parts
        return () if self.data_version is None else (self.data_version,)

    @property
    def fpps(self) -> tuple[float, float]:
        """(file filters' fpp, global filter's and zones' fpp) of this version: as built (the summary), else as
        configured (entries written before the fpp was sized from the file count), else the default."""
        summary = self.summary or {}
        configured = self.config.fpp if self.config is not None and self.config.fpp is not None else DEFAULT_FPP
        return float(summary.get("file_fpp", configured)), float(summary.get("shared_fpp", configured))

    def successor(self, state: State, operation: str, writer: Writer, **changes: Any) -> "LogEntry":
        """The next entry: this one's content with a new id, state, operation, writer and time."""
        return replace(
            self,
            id=self.id + 1,
            state=state,
            operation=operation,
            writer=writer,
            timestamp_ms=now_ms(),
            hsbloom_version=__version__,
            message=None,
            **changes,
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "log_format": LOG_FORMAT_VERSION,
                "id": self.id,
                "state": self.state.value,
                "operation": self.operation,
                "timestamp_ms": self.timestamp_ms,
                "hsbloom_version": self.hsbloom_version,
                "writer": {"host": self.writer.host, "pid": self.writer.pid, "operation_id": self.writer.operation_id},
                "config": self.config.to_dict() if self.config else None,
                "source": self.source.to_dict() if self.source else None,
                "data_version": self.data_version,
                "data_path": self.data_path,
                "data_parts": list(self.data_parts) if self.data_parts else None,
                "dropped_file_ids": list(self.dropped_file_ids),
                "data_layout": self.data_layout,
                "summary": self.summary,
                "message": self.message,
                "pending": self.pending.to_dict() if self.pending else None,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> "LogEntry":
        """The entry `text` holds, every field checked (hsbloom.index.stored): raises ValueError naming the first
        field that is not what hsbloom writes, so nothing of a crafted entry becomes a path, a size or a class."""
        try:
            data = json.loads(text)
        except RecursionError:  # e.g. 100,000 nested '[': not an entry hsbloom wrote
            raise ValueError("not a log entry (JSON nested too deeply)") from None
        if not isinstance(data, dict):
            raise ValueError("a log entry is a JSON object")
        if data.get("log_format") != LOG_FORMAT_VERSION:
            raise ValueError(f"log format {data.get('log_format')!r}; this hsbloom reads format {LOG_FORMAT_VERSION}")
        writer = stored.mapping(data.get("writer"), "writer")
        version = stored.data_version(data["data_version"]) if data.get("data_version") is not None else None
        config = stored.optional_mapping(data.get("config"), "config")
        source = stored.optional_mapping(data.get("source"), "source")
        return cls(
            id=stored.integer(data.get("id"), "id"),
            state=State(data.get("state")),
            operation=stored.text(data.get("operation"), "operation"),
            writer=Writer(
                host=stored.text(writer.get("host"), "writer.host"),
                pid=stored.integer(writer.get("pid"), "writer.pid", stored.MAX_FILE_ID),
                operation_id=stored.text(writer.get("operation_id"), "writer.operation_id"),
            ),
            timestamp_ms=stored.integer(data.get("timestamp_ms"), "timestamp_ms"),
            hsbloom_version=stored.text(data.get("hsbloom_version"), "hsbloom_version"),
            config=BFIndexConfig.from_dict(config) if config else None,
            source=Source.from_dict(source) if source else None,
            data_version=version,
            data_path=stored.optional_text(data.get("data_path"), "data_path"),  # shown only, never used as a path
            data_parts=stored.data_parts(data.get("data_parts"), version),
            dropped_file_ids=tuple(
                stored.integer(i, "dropped_file_ids[]", stored.MAX_FILE_ID)
                for i in stored.sequence(data.get("dropped_file_ids") or [], "dropped_file_ids")
            ),
            data_layout=stored.optional_integer(data.get("data_layout"), "data_layout", 1000),
            summary=stored.summary(data.get("summary")),
            message=stored.optional_text(data.get("message"), "message"),
            pending=PendingChanges.from_dict(data["pending"]) if data.get("pending") else None,
        )


def check_transition(previous: LogEntry | None, state: State) -> None:
    """Raise ValueError unless an entry in `state` may follow `previous` (None: an empty log)."""
    previous_state = previous.state if previous else None
    if previous is None or previous.state.is_stable:
        if state.is_stable or previous_state not in TRANSITIONS[state][0]:
            raise ValueError(f"{state.value} cannot follow {previous_state.value if previous_state else 'an empty log'}")
    elif not state.is_stable:
        raise ValueError(f"{state.value} cannot follow the transient {previous.state.value}; a stable state must")


class OperationLog:
    """The log directory of one index, read and appended through the Hadoop FileSystem."""

    def __init__(self, spark: Any, log_path: str) -> None:
        self.log_path = log_path
        self._store = jar.jar_class(spark, "log_store")
        self._hadoop_conf = jar.hadoop_conf(spark)
        jar.fast_jvm_replies(spark)  # every operation opens the log first, on the thread that runs it

    def entry_path(self, entry_id: int) -> str:
        return f"{self.log_path}/{entry_id:0{_ID_DIGITS}d}.json"

    def ids(self) -> list[int]:
        """The ids of the entries in the log directory: files named `<N, 20 digits>.json` (other files are not
        entries), with N a Long, as the jar reads them (`LogStore.entryId`)."""
        names = self._store.list(self.log_path, self._hadoop_conf)
        ids = (int(m.group(1)) for m in map(_ENTRY_NAME.fullmatch, names) if m)
        return sorted(i for i in ids if i <= stored.MAX_LONG)

    @property
    def index_name(self) -> str:
        return self.log_path.rstrip("/").rsplit("/", 2)[-2]

    def _fix(self) -> str:
        name = self.index_name
        return (
            f"If no operation on index {name!r} is running, remove it with delete_index({name!r}, force=True), "
            f"then vacuum_index({name!r}), and create it again"
        )

    def read(self, entry_id: int) -> LogEntry:
        """Entry `entry_id`, every field checked; anything that is not an entry hsbloom wrote (too large,
        unparseable, a field of the wrong type or out of range) is CorruptLogError."""
        path = self.entry_path(entry_id)
        try:
            text = self._store.read(path, self._hadoop_conf)
        except Py4JJavaError as exc:  # of the JVM's errors, only LogStore's size bound is damage
            if exc.java_exception.getClass().getName() != _TOO_LARGE:
                raise
            raise CorruptLogError(f"{exc.java_exception.getMessage()}. {self._fix()}") from exc
        if text is None:
            raise CorruptLogError(f"log entry {path} does not exist. {self._fix()}")
        try:
            entry = LogEntry.from_json(text)
        except (ValueError, KeyError, TypeError, AttributeError, ArithmeticError) as exc:
            raise CorruptLogError(
                f"log entry {path} is unreadable ({str(exc)[:200]}); it may still be being written. {self._fix()}"
            ) from exc
        if entry.id != entry_id:
            raise CorruptLogError(f"log entry {path} claims to be entry {entry.id}. {self._fix()}")
        return entry

    def latest(self) -> LogEntry | None:
        """The newest entry, stable or not (None for an empty log)."""
        ids = self.ids()
        return self.read(ids[-1]) if ids else None

    def latest_stable(self) -> LogEntry | None:
        """The newest stable entry: what readers use. A last entry still being written is skipped."""
        ids = self.ids()
        for position, entry_id in enumerate(reversed(ids)):
            try:
                entry = self.read(entry_id)
            except CorruptLogError:
                if position == 0:
                    continue
                raise
            if entry.state.is_stable:
                return entry
        return None

    def entries(self) -> list[LogEntry]:
        return [self.read(i) for i in self.ids()]

    def append_unchecked(self, entry: LogEntry) -> bool:
        """Write `entry` at its id whatever comes before it (a forced delete after an unreadable entry);
        False if another writer already wrote that id."""
        return self._create(entry)

    def append(self, previous: LogEntry | None, entry: LogEntry) -> bool:
        """Write `entry` right after `previous`; False if another writer already wrote that id."""
        expected_id = previous.id + 1 if previous else 0
        if entry.id != expected_id:
            raise ValueError(f"entry {entry.id} cannot follow entry {previous.id if previous else None}")
        check_transition(previous, entry.state)
        return self._create(entry)

    def _create(self, entry: LogEntry) -> bool:
        """Write `entry` unless its id exists; an entry readers would refuse as too large is never written."""
        text = entry.to_json()
        size = len(text.encode("utf-8"))
        if size > stored.MAX_LOG_ENTRY_BYTES:
            raise IndexStateError(
                f"log entry {entry.id} of index {self.index_name!r} would be {size} bytes, more than the "
                f"{stored.MAX_LOG_ENTRY_BYTES} an entry may have; it was not written. A quick refresh records every "
                "new file in the log: run refresh_index(name, mode='incremental') instead"
            )
        return bool(self._store.createIfAbsent(self.entry_path(entry.id), text, self._hadoop_conf))
