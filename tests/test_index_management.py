"""create_index and the management API end to end: states, errors, concurrency, crashes.

Every test gets its own empty system path (the `system_path` fixture), so the
indexes it sees are its own. The builds are real (hsbloom.indexing).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from hsbloom import BFIndexConfig, Hyperspace
from hsbloom.errors import (
    ConcurrentOperationError,
    IndexBuildError,
    IndexExistsError,
    IndexNotFoundError,
    IndexStateError,
    InvalidConfigError,
    UnsupportedSourceError,
)
from hsbloom.results import State
import jar_log
from jar_log import Entry, held_files
from writer_process import end_orphaned_jvm, read_line, start_writer

NUM_FILES = 4
NUM_ROWS = 200


@pytest.fixture(scope="module")
def events(spark, tmp_path_factory) -> str:
    """A small Parquet table: NUM_FILES files, a long key, a string, a boolean."""
    path = tmp_path_factory.mktemp("management") / "events"
    (
        spark.range(0, NUM_ROWS, numPartitions=NUM_FILES)
        .select("id", F.concat(F.lit("user-"), F.col("id")).alias("name"), (F.col("id") % 2 == 0).alias("flag"))
        .write.parquet(str(path))
    )
    return str(path)


@pytest.fixture
def hs(spark, system_path) -> Hyperspace:
    return Hyperspace(spark)


def log_of(spark, system_path: Path, name: str) -> jar_log.Log:
    return jar_log.log_of(spark, system_path, name)


def states(spark, system_path: Path, name: str) -> list[str]:
    return [e.state.value for e in log_of(spark, system_path, name).entries()]


def version_dirs(system_path: Path, name: str) -> list[str]:
    index_dir = system_path / name
    return sorted(p.name for p in index_dir.iterdir() if p.name.startswith("v__=")) if index_dir.exists() else []


def test_create_writes_the_log_and_data_and_lists_the_index(spark, hs, system_path, events):
    spark.sparkContext.setJobGroup("callers-group", "the caller's jobs")
    hs.create_index(spark.read.parquet(events), BFIndexConfig("events_keys", ["id", "name"], fpp=0.02))
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") == "callers-group"  # left as it was
    spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    spark.sparkContext.setLocalProperty("spark.job.description", None)

    assert states(spark, system_path, "events_keys") == ["CREATING", "ACTIVE"]
    # No global filter by default: the file table and its filters' blocks.
    assert sorted(p.name for p in (system_path / "events_keys" / "v__=0").iterdir()) == ["blocks", "files"]
    active = log_of(spark, system_path, "events_keys").latest()
    assert active.source["format"] == "parquet"
    written = json.loads((system_path / "events_keys" / "_hsbloom_log" / f"{active.id:020d}.json").read_text())
    assert "files" not in written["source"]  # the tables list the files, the log does not
    data_path = active.raw["data_path"]
    assert data_path == f"file:{system_path}/events_keys/v__=0"
    assert len(held_files(spark, [data_path])[0]) == NUM_FILES
    assert active.summary["num_files"] == NUM_FILES and active.summary["num_rows"] == NUM_ROWS

    (row,) = hs.indexes().collect()
    assert row.asDict() == {
        "name": "events_keys",
        "indexed_columns": ["id", "name"],
        "state": "ACTIVE",
        "source": f"parquet file:{events}",
        "num_files": NUM_FILES,
        "index_size": active.summary["index_bytes"],
        "fpp": 0.02,
        "damage": None,
    }
    assert row.index_size > 0

    info = hs.index("events_keys")
    assert (info.state, info.num_files, info.num_rows, info.data_version) == (State.ACTIVE, NUM_FILES, NUM_ROWS, 0)
    assert [c.column for c in info.columns] == ["id", "name"]
    for stats in info.columns:
        assert (stats.num_rows, stats.num_nulls) == (NUM_ROWS, 0)
        assert 0.9 * NUM_ROWS <= stats.ndv <= 1.1 * NUM_ROWS
        assert stats.file_filter_bytes >= 32 * NUM_FILES and stats.global_filter_bytes == 0  # none by default
    assert info.columns[0].type == "bigint" and info.columns[1].type == "string"


def test_refused_calls_write_nothing(spark, hs, system_path, events):
    df = spark.read.parquet(events)
    with pytest.raises(UnsupportedSourceError, match=r"unknown column 'user_id'; the DataFrame's columns are: id, name, flag"):
        hs.create_index(df, BFIndexConfig("bad", ["user_id"]))
    with pytest.raises(UnsupportedSourceError, match="column 'flag' has type boolean"):
        hs.create_index(df, BFIndexConfig("bad", ["id", "flag"]))
    with pytest.raises(UnsupportedSourceError, match=r"a join \[Join\]"):
        hs.create_index(df.join(df, "id"), BFIndexConfig("bad", ["id"]))
    with pytest.raises(UnsupportedSourceError, match=r"a filter"):
        hs.create_index(df.where("id = 3"), BFIndexConfig("bad", ["id"]))
    with pytest.raises(InvalidConfigError, match=r"contains '\.\.'"):
        hs.create_index(df, BFIndexConfig("..", ["id"]))
    with pytest.raises(TypeError, match="needs a BFIndexConfig"):
        hs.create_index(df, {"index_name": "bad", "indexed_columns": ["id"]})
    assert not system_path.exists()
    assert hs.indexes().count() == 0


def test_a_taken_name_is_refused_saying_what_to_do(spark, hs, system_path, events):
    df = spark.read.parquet(events)
    hs.create_index(df, BFIndexConfig("taken", ["id"]))
    exists = r"index 'taken' already exists "
    with pytest.raises(IndexExistsError, match=exists + r"\(ACTIVE\); delete and vacuum it first, or choose another"):
        hs.create_index(df, BFIndexConfig("taken", ["name"]))
    hs.delete_index("taken")
    with pytest.raises(IndexExistsError, match=exists + r"\(DELETED\); restore it, or vacuum it to free the name"):
        hs.create_index(df, BFIndexConfig("taken", ["name"]))
    assert states(spark, system_path, "taken") == ["CREATING", "ACTIVE", "DELETING", "DELETED"]


def test_delete_restore_vacuum_and_reuse_of_the_name(spark, hs, system_path, events):
    df = spark.read.parquet(events)
    hs.create_index(df, BFIndexConfig("life", ["id"]))
    with pytest.raises(IndexStateError, match="cannot restore index 'life': it is ACTIVE, and restore needs DELETED"):
        hs.restore_index("life")

    hs.delete_index("life")
    assert hs.index("life").state == State.DELETED
    assert [r.state for r in hs.indexes().collect()] == ["DELETED"]
    assert version_dirs(system_path, "life") == ["v__=0"]  # soft: the data stays
    with pytest.raises(IndexStateError, match="cannot delete index 'life': it is DELETED"):
        hs.delete_index("life")

    hs.restore_index("life")
    assert hs.index("life").state == State.ACTIVE

    hs.delete_index("life")
    hs.vacuum_index("life")
    assert version_dirs(system_path, "life") == []
    assert hs.indexes().count() == 0
    with pytest.raises(IndexNotFoundError, match="index 'life' does not exist"):
        hs.index("life")
    with pytest.raises(IndexNotFoundError):
        hs.restore_index("life")
    with pytest.raises(IndexNotFoundError):
        hs.vacuum_index("life")

    hs.create_index(df, BFIndexConfig("life", ["name"]))  # the name is free again, with a new data version
    info = hs.index("life")
    assert (info.state, info.data_version, info.config.indexed_columns) == (State.ACTIVE, 1, ("name",))
    assert version_dirs(system_path, "life") == ["v__=1"]
    assert states(spark, system_path, "life") == [
        "CREATING", "ACTIVE", "DELETING", "DELETED", "RESTORING", "ACTIVE", "DELETING", "DELETED",
        "VACUUMING", "DOESNOTEXIST", "CREATING", "ACTIVE",
    ]


def test_vacuum_of_an_active_index_removes_only_unreferenced_versions(spark, hs, system_path, events):
    hs.create_index(spark.read.parquet(events), BFIndexConfig("old_versions", ["id"]))
    stray = system_path / "old_versions" / "v__=5" / "files"
    stray.mkdir(parents=True)
    (stray / "part-0.parquet").write_bytes(b"left by a crashed build")
    hs.vacuum_index("old_versions")
    assert version_dirs(system_path, "old_versions") == ["v__=0"]
    assert hs.index("old_versions").state == State.ACTIVE
    assert states(spark, system_path, "old_versions")[-2:] == ["VACUUMING", "ACTIVE"]


def test_unknown_index_operations(hs, system_path):
    for operation in (hs.delete_index, hs.restore_index, hs.vacuum_index, hs.cancel, hs.index, hs.refresh_index):
        with pytest.raises(IndexNotFoundError, match="index 'ghost' does not exist"):
            operation("ghost")
    with pytest.raises(TypeError, match="explain needs a pyspark DataFrame"):
        hs.explain(None)


def stick(spark, system_path: Path, name: str, state: State, writer: dict) -> Entry:
    """Append a transient entry as if `writer` (a JVM elsewhere, or one that died) had started an operation and
    stopped there: written directly, as that writer would have written it."""
    log = log_of(spark, system_path, name)
    latest = log.latest()
    if latest is None:
        return log.append_raw(jar_log.first_entry(spark, state, "create", writer, data_version=0))
    return log.append_raw(jar_log.successor(latest, state, state.value.lower(), writer))


ELSEWHERE = jar_log.writer("another-host", 1, "remote-operation")  # alive as far as this host can tell


def test_cancel_returns_each_stuck_operation_to_where_it_started(spark, hs, system_path, events):
    df = spark.read.parquet(events)

    stick(spark, system_path, "stuck", State.CREATING, ELSEWHERE)
    with pytest.raises(ConcurrentOperationError, match=r"index 'stuck' is busy: CREATING since .* by process 1 on host another-host.*cancel\('stuck'\)"):
        hs.create_index(df, BFIndexConfig("stuck", ["id"]))
    (system_path / "stuck" / "v__=0").mkdir()  # what its build had written so far
    hs.cancel("stuck")
    assert states(spark, system_path, "stuck") == ["CREATING", "DOESNOTEXIST"]
    assert version_dirs(system_path, "stuck") == []
    with pytest.raises(IndexStateError, match="no operation is in progress to cancel"):
        hs.cancel("stuck")

    hs.create_index(df, BFIndexConfig("stuck", ["id"]))
    assert hs.index("stuck").data_version == 1  # never the cancelled build's version

    stick(spark, system_path, "stuck", State.DELETING, ELSEWHERE)
    hs.cancel("stuck")
    assert hs.index("stuck").state == State.ACTIVE

    hs.delete_index("stuck")
    stick(spark, system_path, "stuck", State.RESTORING, ELSEWHERE)
    hs.cancel("stuck")
    assert hs.index("stuck").state == State.DELETED

    stick(spark, system_path, "stuck", State.VACUUMING, ELSEWHERE)
    hs.cancel("stuck")  # part of a deleted index's data may be gone: forward to DOESNOTEXIST
    with pytest.raises(IndexNotFoundError):
        hs.index("stuck")
    assert version_dirs(system_path, "stuck") == []
    assert log_of(spark, system_path, "stuck").latest().message == "cancelled by cancel()"


def test_a_dead_writers_operation_is_recovered_by_the_next_create(spark, hs, system_path, events):
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host, pid = jar_log.local_host(spark), int(finished.stdout)
    stick(spark, system_path, "orphan", State.CREATING, jar_log.writer(host, pid, "crashed-operation"))
    hs.create_index(spark.read.parquet(events), BFIndexConfig("orphan", ["id"]))
    entries = log_of(spark, system_path, "orphan").entries()
    assert [e.state.value for e in entries] == ["CREATING", "DOESNOTEXIST", "CREATING", "ACTIVE"]
    assert entries[1].message.startswith(f"recovered: process {pid} on host {host} died during create")


def test_a_failed_build_rolls_back_and_removes_its_data(spark, hs, system_path, tmp_path):
    source = tmp_path / "broken"
    spark.range(0, 100, numPartitions=3).write.parquet(str(source))
    df = spark.read.parquet(str(source))  # schema read while every file is intact
    last = sorted(source.glob("part-*.parquet"))[-1]
    last.write_bytes(b"PAR1 this is not a parquet file PAR1")
    with pytest.raises(IndexBuildError, match="create of index 'broken' failed, so it was not created") as error:
        hs.create_index(df, BFIndexConfig("broken", ["id"]))
    assert error.value.__cause__ is not None
    assert states(spark, system_path, "broken") == ["CREATING", "DOESNOTEXIST"]
    assert version_dirs(system_path, "broken") == []
    assert hs.indexes().count() == 0
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None


def test_an_empty_source_makes_a_valid_empty_index(spark, hs, system_path, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    hs.create_index(spark.read.schema("id long, name string").parquet(str(empty)), BFIndexConfig("empty", ["id", "name"]))
    info = hs.index("empty")
    assert (info.state, info.num_files, info.num_rows) == (State.ACTIVE, 0, 0)
    files_table = spark.read.parquet(f"{system_path}/empty/v__=0/files")
    assert files_table.count() == 0
    assert "bitset_bytes" in files_table.columns and "filter" not in files_table.columns


def assert_one_winner(spark, system_path: Path, name: str, failures: list[BaseException | dict]) -> None:
    entries = log_of(spark, system_path, name).entries()  # every entry readable
    assert [e.state.value for e in entries] == ["CREATING", "ACTIVE"]
    assert len(failures) == 1


def test_two_threads_creating_the_same_index(spark, hs, system_path, events):
    df = spark.read.parquet(events)
    barrier = threading.Barrier(2)
    outcomes: list[BaseException | None] = [None, None]

    def create(slot: int) -> None:
        barrier.wait()
        try:
            hs.create_index(df, BFIndexConfig("contended", ["id"]))
        except Exception as exc:
            outcomes[slot] = exc

    threads = [threading.Thread(target=create, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failures = [o for o in outcomes if o is not None]
    assert_one_winner(spark, system_path, "contended", failures)
    assert isinstance(failures[0], (ConcurrentOperationError, IndexExistsError))
    assert "index 'contended'" in str(failures[0])
    assert hs.index("contended").state == State.ACTIVE


def test_two_processes_creating_the_same_index(spark, hs, system_path, events, tmp_path):
    """This process and a writer process with its own SparkSession (and JVM) start together."""
    go = tmp_path / "go"
    writer = start_writer("race", str(system_path), events, "contended", str(go))
    df = spark.read.parquet(events)
    outcomes: list[dict] = []
    try:
        read_line(writer, "READY")
        go.touch()
        try:
            hs.create_index(df, BFIndexConfig("contended", ["id"]))
            outcomes.append({"outcome": "created"})
        except Exception as exc:
            outcomes.append({"outcome": "error", "type": type(exc).__name__, "message": str(exc)})
        outcomes.append(json.loads(read_line(writer, "{")))
    finally:
        writer.kill()
        writer.wait()
    failures = [o for o in outcomes if o["outcome"] == "error"]
    print("\nthis process, writer process:", outcomes)
    assert_one_winner(spark, system_path, "contended", failures)
    assert failures[0]["type"] in ("ConcurrentOperationError", "IndexExistsError")
    assert "index 'contended'" in failures[0]["message"]
    assert hs.index("contended").state == State.ACTIVE


def test_a_build_killed_half_way_leaves_no_active_index_and_is_recovered(spark, hs, system_path, events):
    """The writer of the log is the writer process's JVM: killing it (SIGKILL) mid-build is the crash."""
    writer = start_writer("stall", str(system_path), events, "killed")
    try:
        _, jvm_pid, python_pid = read_line(writer, "BUILD_JOB_SUBMITTED").split()
        assert int(python_pid) == writer.pid
        os.kill(int(jvm_pid), signal.SIGKILL)
        assert writer.wait(timeout=60) == 9  # it reaped its JVM, whose pid is then gone
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    try:  # the build job was waiting for a task slot: the kill lands in the middle of it
        log = log_of(spark, system_path, "killed")
        assert [e.state.value for e in log.entries()] == ["CREATING"]
        assert log.latest_stable() is None  # nothing for queries to use
        assert hs.indexes().first().state == "CREATING"

        hs.create_index(spark.read.parquet(events), BFIndexConfig("killed", ["id"]))  # the writer is provably dead
        assert states(spark, system_path, "killed") == ["CREATING", "DOESNOTEXIST", "CREATING", "ACTIVE"]
        assert version_dirs(system_path, "killed") == ["v__=1"]
        assert hs.index("killed").num_rows == NUM_ROWS
    finally:
        end_orphaned_jvm(int(jvm_pid))
