"""The operation log: entry format, create-if-absent under contention, states and transitions."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from dataclasses import replace

import pytest

from hsbloom import jar
from hsbloom import BFIndexConfig
from hsbloom.errors import CorruptLogError
from hsbloom.index.log import (
    STABLE_STATES,
    LogEntry,
    OperationLog,
    PendingChanges,
    State,
    Writer,
    check_transition,
    running,
)
from hsbloom.index.sources import FileFingerprint, Source, SourceFile


def a_source(files: tuple[SourceFile, ...] = ()) -> Source:
    """A source as a log entry holds it (the files a listing found are not written: the tables list them)."""
    return Source(
        format="delta",
        root_paths=("file:/data/events",),
        options={"mergeSchema": "false"},
        table="spark_catalog.default.events",
        delta_version=7,
        schema={"user_id": "bigint", "name": "string"},
        partition_columns=("day",),
        files=files,
    )


def an_entry(entry_id: int = 0, state: State = State.CREATING) -> LogEntry:
    return LogEntry(
        id=entry_id,
        state=state,
        operation="create",
        writer=Writer.current(),
        config=BFIndexConfig("events_ids", ["user_id"], fpp=0.001),
        source=a_source(),
        data_version=3,
        data_path="file:/idx/events_ids/v__=3",
        summary={"num_files": 2, "num_rows": 5, "index_bytes": 64, "columns": {}},
    )


def test_entry_round_trips_through_plain_json():
    entry = an_entry()
    text = entry.to_json()
    assert LogEntry.from_json(text) == entry
    listed = replace(entry, source=a_source(files=(SourceFile(0, "file:/data/events/a.parquet", 10, 1000),)))
    assert listed.to_json() == text
    data = json.loads(text)
    assert set(data) == {
        "log_format", "id", "state", "operation", "timestamp_ms", "hsbloom_version", "writer",
        "config", "source", "data_version", "data_path", "data_parts", "dropped_file_ids", "data_layout", "summary",
        "message", "pending",
    }
    assert data["pending"] is None
    # The files are not in the entry (its size does not grow with them): the version's tables list them.
    assert "files" not in data["source"] and LogEntry.from_json(text).source.files == ()
    older = json.loads(text)
    older["source"]["files"] = [{"id": 1, "path": "file:/data/events/b.parquet", "size": 20, "mtime": 2000}]
    assert LogEntry.from_json(json.dumps(older)).source.files == (SourceFile(1, "file:/data/events/b.parquet", 20, 2000),)
    assert data["source"]["delta_version"] == 7
    quick = replace(entry, pending=PendingChanges(5, 8, (FileFingerprint("file:/data/events/c.parquet", 30, 3000),), (0,)))
    assert LogEntry.from_json(quick.to_json()) == quick
    assert json.loads(quick.to_json())["pending"] == {
        "checked_ms": 5, "delta_version": 8, "appended": [{"path": "file:/data/events/c.parquet", "size": 30, "mtime": 3000}],
        "deleted_file_ids": [0],
    }
    # Data only: nothing in it names a Python or JVM class.
    assert "hsbloom." not in text and "class" not in text.lower() and "py/" not in text


def test_a_version_of_several_data_directories_in_both_readers(spark):
    """`data_parts` / `dropped_file_ids` as Python and the query side (IndexLog.scala) read them; an entry
    without them (an older hsbloom's) reads its one data directory."""
    entry = replace(an_entry(state=State.ACTIVE), data_parts=(1, 3), dropped_file_ids=(4, 0), data_layout=2)
    assert LogEntry.from_json(entry.to_json()) == entry and entry.parts == (1, 3)
    parsed = jar.jar_class(spark, "index_log").parse(entry.to_json(), "events_ids")
    assert parsed.dataParts().mkString(",") == "1,3"
    assert sorted(int(i) for i in parsed.droppedFileIds().mkString(",").split(",")) == [0, 4]
    assert "data version 3 in 2 parts" in parsed.describe()
    old = json.loads(an_entry(state=State.ACTIVE).to_json())
    for key in ("data_parts", "dropped_file_ids", "data_layout"):
        del old[key]
    assert LogEntry.from_json(json.dumps(old)).parts == (3,) and LogEntry.from_json(json.dumps(old)).data_layout is None
    assert jar.jar_class(spark, "index_log").parse(json.dumps(old), "events_ids").dataParts().mkString(",") == "3"
    wrong = json.loads(entry.to_json()) | {"data_parts": [3, 1]}  # must end with data_version
    with pytest.raises(Exception, match="lists data parts 3, 1 that are not distinct, at most 1024, and ending with its data version 3"):
        jar.jar_class(spark, "index_log").parse(json.dumps(wrong), "events_ids")


def test_entry_of_an_unknown_format_or_state_is_refused():
    data = json.loads(an_entry().to_json())
    with pytest.raises(ValueError, match="log format 2; this hsbloom reads format 1"):
        LogEntry.from_json(json.dumps({**data, "log_format": 2}))
    with pytest.raises(ValueError):
        LogEntry.from_json(json.dumps({**data, "state": "EXPLODED"}))


@pytest.mark.parametrize(
    "previous, state",
    [
        (None, State.CREATING),
        (State.DOESNOTEXIST, State.CREATING),
        (State.CREATING, State.ACTIVE),
        (State.CREATING, State.DOESNOTEXIST),  # rollback
        (State.ACTIVE, State.DELETING),
        (State.DELETING, State.DELETED),
        (State.DELETED, State.RESTORING),
        (State.RESTORING, State.ACTIVE),
        (State.ACTIVE, State.VACUUMING),
        (State.DELETED, State.VACUUMING),
        (State.VACUUMING, State.DOESNOTEXIST),
        (State.ACTIVE, State.REFRESHING),
        (State.REFRESHING, State.ACTIVE),
    ],
)
def test_allowed_transitions(previous, state):
    check_transition(an_entry(0, previous) if previous else None, state)


@pytest.mark.parametrize(
    "previous, state",
    [
        (None, State.ACTIVE),  # a stable state needs an operation before it
        (None, State.DELETING),
        (State.ACTIVE, State.CREATING),
        (State.ACTIVE, State.ACTIVE),
        (State.DELETED, State.DELETING),
        (State.ACTIVE, State.RESTORING),
        (State.DOESNOTEXIST, State.DELETING),
        (State.CREATING, State.DELETING),  # a transient entry is followed by a stable one
        (State.DELETED, State.REFRESHING),
    ],
)
def test_refused_transitions(previous, state):
    with pytest.raises(ValueError, match="cannot follow"):
        check_transition(an_entry(0, previous) if previous else None, state)


def test_every_transient_state_has_stable_ends():
    for state in State:
        assert state.is_stable == (state in STABLE_STATES)


@pytest.fixture
def log(spark, tmp_path):
    return OperationLog(spark, f"file:{tmp_path}/idx/_hsbloom_log")


def test_threads_racing_for_one_entry_id_have_exactly_one_winner(log):
    """Through py4j and the LogStore jar, as create_index does; 12 threads, 20 rounds."""
    threads = 12
    previous = None
    states = [State.CREATING] + [State.ACTIVE, State.DELETING, State.DELETED, State.RESTORING] * 5
    for round_id in range(20):
        entries = [
            LogEntry(id=round_id, state=states[round_id],
                     operation="create", writer=Writer(f"host{t}", t, f"op{t}"))
            for t in range(threads)
        ]
        barrier = threading.Barrier(threads)
        results: dict[int, bool] = {}

        def race(t: int) -> None:
            barrier.wait()
            results[t] = log.append(previous, entries[t])

        workers = [threading.Thread(target=race, args=(t,)) for t in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        winners = [t for t, won in results.items() if won]
        assert len(winners) == 1, f"round {round_id}: {winners}"
        previous = log.read(round_id)
        assert previous.writer.pid == winners[0]
    assert log.ids() == list(range(20))


def test_append_checks_the_id_and_the_transition(log):
    first = an_entry(0, State.CREATING)
    assert log.append(None, first)
    assert not log.append(None, first)  # taken
    with pytest.raises(ValueError, match="entry 5 cannot follow entry 0"):
        log.append(first, an_entry(5, State.ACTIVE))
    with pytest.raises(ValueError, match="DELETING cannot follow the transient CREATING"):
        log.append(first, an_entry(1, State.DELETING))
    assert log.append(first, an_entry(1, State.ACTIVE))
    assert [e.state for e in log.entries()] == [State.CREATING, State.ACTIVE]


def test_readers_use_the_latest_stable_entry(log):
    assert log.latest() is None and log.latest_stable() is None
    log.append(None, an_entry(0, State.CREATING))
    assert log.latest().state == State.CREATING
    assert log.latest_stable() is None  # never became ACTIVE
    log.append(log.read(0), an_entry(1, State.ACTIVE))
    log.append(log.read(1), an_entry(2, State.DELETING))
    assert log.latest().state == State.DELETING
    assert log.latest_stable().id == 1  # a crash here leaves the ACTIVE entry readable


def test_a_partially_written_last_entry_is_skipped_by_readers_but_not_earlier_ones(log, tmp_path):
    log.append(None, an_entry(0, State.CREATING))
    log.append(log.read(0), an_entry(1, State.ACTIVE))
    log_dir = tmp_path / "idx" / "_hsbloom_log"
    (log_dir / f"{2:020d}.json").write_text('{"log_format": 1, "id": 2, "sta')
    assert log.latest_stable().id == 1
    with pytest.raises(CorruptLogError, match="unreadable"):
        log.latest()
    (log_dir / f"{0:020d}.json").write_text("not json")
    (log_dir / f"{2:020d}.json").unlink()
    (log_dir / f"{1:020d}.json").write_text("[]")
    with pytest.raises(CorruptLogError):
        log.latest_stable()


def test_an_entry_of_any_shape_is_a_corrupt_log_error_naming_the_fix(log, tmp_path):
    log_dir = tmp_path / "idx" / "_hsbloom_log"
    log_dir.mkdir(parents=True, exist_ok=True)
    for text in ("[" * 100_000, '{"log_format": 1, "id": Infinity}', '{"log_format": 1, "writer": "x"}', "\x00\xff"):
        (log_dir / f"{0:020d}.json").write_text(text)
        with pytest.raises(CorruptLogError, match=r"delete_index\('idx', force=True\)"):
            log.read(0)


def test_writer_liveness_is_only_claimed_dead_when_provable():
    me = Writer.current()
    with running(me.operation_id):
        assert not me.is_provably_dead()
    assert me.is_provably_dead()  # this process no longer runs that operation
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = Writer(socket.gethostname(), int(finished.stdout), "op")
    assert gone.is_provably_dead()
    assert not Writer(socket.gethostname(), os.getppid(), "op").is_provably_dead()  # alive
    assert not Writer("another-host", int(finished.stdout), "op").is_provably_dead()  # can't tell


def test_the_next_data_version_is_above_every_version_the_log_named(spark, system_path):
    """Read backwards to the latest build: a rolled-back refresh's version is never reused; reads stop there."""
    from hsbloom.operations.protocol import IndexContext, next_data_version

    ctx = IndexContext.open(spark, "history")
    assert next_data_version(ctx) == 0
    steps = [(State.CREATING, 5), (State.ACTIVE, 5), (State.REFRESHING, 9), (State.ACTIVE, 5),  # rolled back
             (State.REFRESHING, 5), (State.ACTIVE, 5), (State.VACUUMING, 5), (State.ACTIVE, 5)]  # quick, vacuum
    previous = None
    for n, (state, version) in enumerate(steps):
        entry = replace(an_entry(n, state), data_version=version)
        assert ctx.log.append(previous, entry)
        previous = entry
    assert next_data_version(ctx) == 10
    # Entries before the latest build are not read: an unreadable one there changes nothing.
    (system_path / "history" / "_hsbloom_log" / f"{0:020d}.json").write_text("not json")
    assert next_data_version(ctx) == 10
    (system_path / "history" / "v__=12").mkdir()  # a directory on storage counts too
    assert next_data_version(ctx) == 13
