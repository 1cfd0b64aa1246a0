"""An index's operation log as the jar reads it, for tests: the jar is the one reader and writer of log entries
(hsbloom.log.OperationLog, hsbloom.format.LogJson), so tests read entries through it."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from hsbloom import jar
from hsbloom.results import State
import jvm_classes


@dataclass(frozen=True)
class Entry:
    """A log entry as the jar parsed it (every field checked), with the fields tests look at; `raw` is the whole
    entry as the jar writes it."""

    id: int
    state: State
    operation: str
    data_version: int | None
    parts: tuple[int, ...]
    dropped_file_ids: tuple[int, ...]
    message: str | None
    raw: dict[str, Any]

    @property
    def summary(self) -> dict[str, Any] | None:
        return self.raw.get("summary")

    @property
    def source(self) -> dict[str, Any] | None:
        return self.raw.get("source")


class Log:
    """The log of the index in `index_dir` (a local directory), through the jar's `OperationLog`."""

    def __init__(self, spark: Any, index_dir: Path | str) -> None:
        index_dir = Path(str(index_dir).removeprefix("file:"))
        self._converters = jar.jvm(spark).scala.jdk.javaapi.CollectionConverters
        self._log_json = jvm_classes.jvm_class(spark, "log_json")
        self.directory = index_dir / "_hsbloom_log"
        log_path = jvm_classes.hadoop_path(spark, f"file:{index_dir}/_hsbloom_log")
        self._log = jvm_classes.jvm_class(spark, "operation_log")(index_dir.name, log_path,
                                                                 jvm_classes.hadoop_conf(spark))

    def ids(self) -> list[int]:
        return [int(i) for i in self._converters.asJava(self._log.ids())]

    def read(self, entry_id: int) -> Entry:
        """Entry `entry_id`; hsbloom's CorruptLog error (a Py4JJavaError) when it is not one hsbloom wrote."""
        return _entry(self._log_json.write(self._log.read(entry_id)))

    def latest(self) -> Entry | None:
        ids = self.ids()
        return self.read(ids[-1]) if ids else None

    def latest_stable(self) -> Entry | None:
        """The newest stable entry, as readers use it (a newest entry that is unreadable is skipped)."""
        found = self._log.latestStable()
        return None if found.isEmpty() else _entry(self._log_json.write(found.get()))

    def entries(self) -> list[Entry]:
        return [self.read(i) for i in self.ids()]

    def append_raw(self, raw: dict[str, Any]) -> Entry:
        """Write `raw` as entry `raw["id"]` unless that id exists, as a writer the test stands in for (one on another
        host, or one that died) would have; the jar must read it back."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / f"{raw['id']:020d}.json", "x") as out:
            out.write(json.dumps(raw))
        return self.read(raw["id"])


def _entry(text: str) -> Entry:
    raw = json.loads(text)
    version = raw["data_version"]
    parts = tuple(raw["data_parts"] or ([] if version is None else [version]))
    return Entry(raw["id"], State(raw["state"]), raw["operation"], version, parts, tuple(raw["dropped_file_ids"]),
                 raw["message"], raw)


def log_of(spark: Any, system_path: Path | str, name: str) -> Log:
    return Log(spark, Path(str(system_path).removeprefix("file:")) / name)


def writer(host: str, pid: int, operation_id: str) -> dict[str, Any]:
    """The `writer` field of an entry: who wrote it (the JVM that ran the operation)."""
    return {"host": host, "pid": pid, "operation_id": operation_id}


def local_host(spark: Any) -> str:
    """This host's name as the jar records it in entries it writes (hsbloom.format.Writer), which decides whether a
    writer recorded as being on this host can be proven dead."""
    return str(jvm_classes.jvm_class(spark, "writer").localHost())


def first_entry(
    spark: Any, state: State, operation: str, by: dict[str, Any], data_version: int | None
) -> dict[str, Any]:
    """Entry 0 of a new index with nothing but what every entry has, as a writer that stopped right after writing
    it left it."""
    log_format = int(jvm_classes.jvm_class(spark, "layout").LogFormatVersion())
    version = str(jvm_classes.jvm_class(spark, "build_info").version())
    return {
        "log_format": log_format, "id": 0, "state": state.value, "operation": operation,
        "timestamp_ms": int(time.time() * 1000), "hsbloom_version": version, "writer": by, "data_version": data_version,
    }


def successor(entry: Entry, state: State, operation: str, by: dict[str, Any]) -> dict[str, Any]:
    """The entry after `entry` with its content (as the jar's LogEntry.successor makes it)."""
    return entry.raw | {"id": entry.id + 1, "state": state.value, "operation": operation, "writer": by,
                        "timestamp_ms": int(time.time() * 1000), "message": None}


@dataclass(frozen=True)
class HeldFile:
    """A source file an index version holds: its id in the version's tables and its fingerprint."""

    file_id: int
    path: str
    size: int
    mtime: int


def held_files(spark: Any, data_paths: list[str], dropped: tuple[int, ...] = ()) -> tuple[list[HeldFile], int]:
    """The files the data directories `data_paths` hold without the ids `dropped`, sorted by path, and how many rows
    or table parts failed their checks (the jar's `SourceListing`)."""
    jvm = jar.jvm(spark)
    convert = jvm.scala.jdk.javaapi.CollectionConverters
    paths = convert.asScala(list(data_paths)).toSeq()
    ids = convert.asScala([jvm.java.lang.Long(i) for i in dropped]).toSet()
    answer = jvm_classes.jvm_class(spark, "source_listing").held(paths, ids, jvm_classes.hadoop_conf(spark))
    files = [HeldFile(int(f.fileId()), f.path(), int(f.size()), int(f.mtime())) for f in convert.asJava(answer._1())]
    return files, int(answer._2())


@contextmanager
def writer_stopped_at(spark: Any, step: str) -> Iterator[None]:
    """The session's writer stops at `step` of its next operation (the jar's `LogSteps`: an error no rollback catches,
    nothing more written, as after a kill) while the block runs; no stop is left armed after it."""
    steps = jvm_classes.jvm_class(spark, "log_steps")
    steps.stopAt(step)
    try:
        yield
    finally:
        steps.clear()
