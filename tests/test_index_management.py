"""The Python facade of index management: what `Hyperspace`'s calls return (rows, IndexInfo), the error each
refusal raises, and what only other processes can show: two JVMs racing for one index, and a writer JVM killed in
the middle of a create and of a refresh.

The operations themselves (the log each writes, delete, restore, vacuum, cancel, dead writers, rollback of a failed
build, empty sources, threads racing) are tested where they live:
jvm/src/test/scala/hsbloom/operations/ManagementSuite.scala. Every test gets its own empty system path (the
`system_path` fixture), so the indexes it sees are its own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Callable, Iterator

import pytest
from pyspark.sql import functions as F

import hsbloom
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
from jar_log import Entry
from pruning_support import files_read, outcomes
from writer_process import end_orphaned_jvm, read_line, send, start_writer

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


def test_create_lists_and_describes_the_index(spark, hs, system_path, events):
    hs.create_index(spark.read.parquet(events), BFIndexConfig("events_keys", ["id", "name"], fpp=0.02))
    active = log_of(spark, system_path, "events_keys").latest()
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


def test_each_refusal_raises_the_error_of_its_class(spark, hs, system_path, events, tmp_path):
    df = spark.read.parquet(events)
    hs.create_index(df, BFIndexConfig("taken", ["id"]))
    with pytest.raises(IndexExistsError, match=r"index 'taken' already exists \(ACTIVE\); delete and vacuum it first"):
        hs.create_index(df, BFIndexConfig("taken", ["name"]))
    with pytest.raises(IndexStateError, match="cannot restore index 'taken': it is ACTIVE, and restore needs DELETED"):
        hs.restore_index("taken")

    stick(spark, system_path, "stuck", State.CREATING, ELSEWHERE)
    with pytest.raises(ConcurrentOperationError, match=r"index 'stuck' is busy: CREATING since .* by process 1 on "
                                                       r"host another-host.*cancel\('stuck'\)"):
        hs.create_index(df, BFIndexConfig("stuck", ["id"]))
    hs.cancel("stuck")
    assert states(spark, system_path, "stuck") == ["CREATING", "DOESNOTEXIST"]
    with pytest.raises(IndexStateError, match="no operation is in progress to cancel"):
        hs.cancel("stuck")

    source = tmp_path / "broken"
    spark.range(0, 100, numPartitions=3).write.parquet(str(source))
    broken = spark.read.parquet(str(source))  # schema read while every file is intact
    sorted(source.glob("part-*.parquet"))[-1].write_bytes(b"PAR1 this is not a parquet file PAR1")
    with pytest.raises(IndexBuildError, match="create of index 'broken' failed, so it was not created") as error:
        hs.create_index(broken, BFIndexConfig("broken", ["id"]))
    assert error.value.__cause__ is not None
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None


def assert_one_winner(spark, system_path: Path, name: str, failures: list[BaseException | dict]) -> None:
    entries = log_of(spark, system_path, name).entries()  # every entry readable
    assert [e.state.value for e in entries] == ["CREATING", "ACTIVE"]
    assert len(failures) == 1


@pytest.fixture(scope="module")
def writers() -> Iterator[Callable[[], subprocess.Popen]]:
    """A writer process with its own SparkSession (and JVM), shared by the tests of this module: one JVM start for
    both (each hands it a command); a new one when a test killed the last."""
    started: list[subprocess.Popen] = []

    def writer() -> subprocess.Popen:
        if not started or started[-1].poll() is not None:
            started.append(start_writer("serve"))
            read_line(started[-1], "READY")
        return started[-1]

    yield writer
    for proc in started:
        proc.kill()
        proc.wait()


def test_two_processes_creating_the_same_index(spark, hs, system_path, events, tmp_path, writers):
    """This process and a writer process with its own SparkSession (and JVM) start together."""
    go = tmp_path / "go"
    writer = writers()
    send(writer, "race", str(system_path), events, "contended", str(go))
    df = spark.read.parquet(events)
    outcomes: list[dict] = []
    read_line(writer, "ARMED")
    go.touch()
    try:
        hs.create_index(df, BFIndexConfig("contended", ["id"]))
        outcomes.append({"outcome": "done"})
    except Exception as exc:
        outcomes.append({"outcome": "error", "type": type(exc).__name__, "message": str(exc)})
    outcomes.append(json.loads(read_line(writer, "{")))
    failures = [o for o in outcomes if o["outcome"] == "error"]
    print("\nthis process, writer process:", outcomes)
    assert_one_winner(spark, system_path, "contended", failures)
    assert failures[0]["type"] in ("ConcurrentOperationError", "IndexExistsError")
    assert "index 'contended'" in failures[0]["message"]
    assert hs.index("contended").state == State.ACTIVE


def test_a_writer_killed_half_way_leaves_its_create_and_its_refresh_recoverable(
    spark, hs, system_path, events, tmp_path, writers
):
    """The writer of the log is the writer process's JVM. It refreshes an index until its new data is written (the
    jar's test seam stops the refresh at 'built': the REFRESHING entry stays, the data directory is never committed),
    then starts a create whose build job waits for the only task slot. Killing the JVM (SIGKILL) is the crash of
    both: neither ends, and the next operation of each must find its writer dead."""
    grown = tmp_path / "grown"
    spark.range(0, 100, numPartitions=2).write.parquet(str(grown))
    hs.create_index(spark.read.parquet(str(grown)), BFIndexConfig("grown", ["id"]))
    spark.range(1000, 1010, numPartitions=1).write.mode("append").parquet(str(grown))
    predicates = ["id = 7", "id = 1005", "id = 500"]
    expected = outcomes(spark, spark.read.parquet(str(grown)), predicates, enabled=False)

    def files_read_for(predicate: str) -> int:
        hsbloom.enable(spark)
        try:
            return files_read(spark.read.parquet(str(grown)).where(predicate))
        finally:
            hsbloom.disable(spark)

    writer = writers()
    send(writer, "stop-refresh", str(system_path), "grown", "built")
    stopped = json.loads(read_line(writer, "{"))
    assert stopped["type"] == "OperationFailedError", stopped
    assert "the writer stopped at step 'built'" in stopped["message"]
    assert states(spark, system_path, "grown") == ["CREATING", "ACTIVE", "REFRESHING"]
    assert version_dirs(system_path, "grown") == ["v__=0", "v__=1"]
    assert (system_path / "grown" / "v__=1" / "files" / "_SUCCESS").exists()  # its data written, never committed
    with pytest.raises(ConcurrentOperationError, match=r"index 'grown' is busy: REFRESHING since .* by process"):
        hs.refresh_index("grown", "incremental")  # its writer's JVM is alive

    send(writer, "stall", str(system_path), events, "killed")
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
        assert {row.name: row.state for row in hs.indexes().collect()}["killed"] == "CREATING"

        hs.create_index(spark.read.parquet(events), BFIndexConfig("killed", ["id"]))  # the writer is provably dead
        assert states(spark, system_path, "killed") == ["CREATING", "DOESNOTEXIST", "CREATING", "ACTIVE"]
        assert version_dirs(system_path, "killed") == ["v__=1"]
        assert hs.index("killed").num_rows == NUM_ROWS

        # The refresh never ended: queries use version 0, which prunes, and read the appended file it does not hold.
        log = log_of(spark, system_path, "grown")
        assert log.latest().state == State.REFRESHING and log.latest_stable().data_version == 0
        assert outcomes(spark, spark.read.parquet(str(grown)), predicates, enabled=True) == expected
        assert files_read_for("id = 7") == 2
        refreshed = hs.refresh_index("grown", "incremental")  # finds the writer dead and removes its data first
        assert (refreshed.refreshed, refreshed.appended_files, refreshed.data_version) == (True, 1, 2)
        assert states(spark, system_path, "grown") == [
            "CREATING", "ACTIVE", "REFRESHING", "ACTIVE", "REFRESHING", "ACTIVE"]
        assert version_dirs(system_path, "grown") == ["v__=0", "v__=2"]
        assert outcomes(spark, spark.read.parquet(str(grown)), predicates, enabled=True) == expected
        assert files_read_for("id = 1005") == 1
    finally:
        end_orphaned_jvm(int(jvm_pid))
