"""A writer that dies at a step of create, refresh (full, incremental, quick), delete, restore or vacuum
leaves an index that answers correctly, never uses a half-built version, and that the documented operations
recover (docs/design/log.md, "Crashes, cancel and dead writers"; docs/troubleshooting.md).

The writer of the log is the JVM that runs the operation. Where a real process death matters (Spark tasks killed
while they write, a writer whose process is gone) the writer is another process (tests/index_writer.py die-at)
whose JVM dies abruptly at the step (halted there by the jar's test seam hsbloom.log.LogSteps, or killed: no
rollback, no cleanup). Steps that are pure log protocol (a transient entry written, a complete data version whose
completing entry is not) stop an operation of this process there instead (LogSteps "throw": a throwable no
rollback catches), writing nothing more, as a killed writer would; its writer is then provably gone (its operation
no longer runs in this JVM). This process then checks the log, the answers, and the recovery. Uses the healthy
index of tests/healthy_index.py, on copies.
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Callable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

import pytest
from pyspark.sql import functions as F

from hsbloom import jar
import hsbloom
from hsbloom import BFIndexConfig, Hyperspace
from hsbloom.errors import IndexNotFoundError, OperationFailedError
from hsbloom.explain import files_read
from index_writer import operation_call
from healthy_index import NAME, NUM_FILES, lookup_rows, system_path_at
import jar_log

WRITER_SCRIPT = Path(__file__).resolve().parent / "index_writer.py"


def run_writer_until_it_dies(system: Path, operation: str, step: str, *source: str) -> None:
    done = subprocess.run(
        [sys.executable, str(WRITER_SCRIPT), "die-at", str(system), NAME, operation, step, *source],
        capture_output=True, text=True, timeout=600,
    )
    assert f"DYING {step}" in done.stdout and done.returncode == 9, (done.stdout, done.stderr[-2000:])


def leftover_directory(system: Path) -> None:
    """A data directory no version reads (as a cancelled build leaves): something for vacuum to remove first."""
    (system / NAME / "v__=5").mkdir()


CASES: dict[str, tuple[str, str, Callable[[Hyperspace, Path], None], str, bool, str]] = {
    # name: (operation, step, prepare, state left, index used after the crash, state after recovery)
    "delete dies after DELETING": ("delete", "transient", lambda hs, s: None, "DELETING", True, "DELETED"),
    "restore dies after RESTORING": (
        "restore", "transient", lambda hs, s: hs.delete_index(NAME), "RESTORING", False, "ACTIVE"
    ),
    "vacuum of an active index dies after removing a directory": (
        "vacuum", "first-removal", lambda hs, s: leftover_directory(s), "VACUUMING", True, "ACTIVE"
    ),
    "vacuum of a deleted index dies after removing a directory": (
        "vacuum", "first-removal", lambda hs, s: (hs.delete_index(NAME), leftover_directory(s)), "VACUUMING",
        False, "DOESNOTEXIST",
    ),
}
RECOVER = {"delete": "delete_index", "restore": "restore_index", "vacuum": "vacuum_index"}


@pytest.fixture(autouse=True)
def no_step_left_set(spark) -> Iterator[None]:
    """Whatever a test does, the jar's test seam is off afterwards."""
    yield
    jar_log.log_steps(spark).clear()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_writer_dying_at_a_step_leaves_a_recoverable_index(spark, source, expected, copy, case):
    operation, step, prepare, left, used, recovered = CASES[case]
    with system_path_at(spark, copy):
        hs = Hyperspace(spark)
        prepare(hs, copy)
        run_writer_until_it_dies(copy, operation, step)
        jar.jar_class(spark, "index_catalog").invalidateAll()
        assert [r.state for r in hs.indexes().collect()] == [left]
        hsbloom.enable(spark)
        assert lookup_rows(spark, source) == expected
        assert files_read(spark.read.parquet(source).where(F.col("id") == 7)) == (1 if used else NUM_FILES)

        getattr(hs, RECOVER[operation])(NAME)  # finds the writer gone, cancels its step, runs the operation
        if recovered == "DOESNOTEXIST":
            with pytest.raises(IndexNotFoundError):
                hs.index(NAME)
            assert not list((copy / NAME).glob("v__=*"))
        else:
            assert hs.index(NAME).state.value == recovered
            assert hs.verify_index(NAME).healthy  # DELETED data is checked too: restore would use it
        assert lookup_rows(spark, source) == expected


# --- create and refresh ---------------------------------------------------------------------


def run_stopping_at(spark, step: str, call: Callable[[], Any]) -> None:
    """Run `call`, an operation of this process standing in for a writer killed at `step`: the jar throws there a
    throwable that nothing on the way out catches (no rollback, nothing more written); it reaches Python as the
    failure of the operation's SQL statement, naming the step."""
    steps = jar_log.log_steps(spark)
    steps.stopAt(step, "throw")
    try:
        with pytest.raises(OperationFailedError, match=f"the writer stopped at step '{step}'"):
            call()
    finally:
        steps.clear()


@contextmanager
def appended_file(source: str) -> Iterator[None]:
    """A file appended to the module's source for one test (removed afterwards, so the healthy index stays
    current for the other tests); it holds a looked-up id the other files lack."""
    path = Path(source) / "part-99999-appended.parquet"
    ids = [10**9, 5000, 5001]
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "s": [f"k{i}" for i in ids]}), path)
    try:
        yield
    finally:
        path.unlink()


def versions(system: Path) -> set[str]:
    return {p.name for p in (system / NAME).glob("v__=*")}


def complete(system: Path, version: str) -> bool:
    return (system / NAME / version / "files" / "_SUCCESS").exists()


def log_of(spark, system: Path) -> jar_log.Log:
    return jar_log.log_of(spark, system, NAME)


# How each case is recovered, by the documented ways (redo: run the operation again; create: create again).
RECOVERIES: dict[str, Callable[[Hyperspace, Callable[[], None], Callable[[], None]], None]] = {
    "the next operation": lambda hs, redo, create: redo(),  # it finds the writer gone and undoes its step first
    "cancel": lambda hs, redo, create: (hs.cancel(NAME), redo()),
    "vacuum": lambda hs, redo, create: (hs.vacuum_index(NAME), redo()),
    "force delete": lambda hs, redo, create: (hs.delete_index(NAME, force=True), hs.vacuum_index(NAME), create()),
}
BUILD_CASES: dict[str, tuple[str, str, str]] = {
    # name: (operation, step, recovery)
    "create dies after CREATING": ("create", "transient", "the next operation"),
    "create dies mid-build": ("create", "mid-build", "cancel"),
    "create dies with its data built": ("create", "built", "force delete"),
    "full refresh dies after REFRESHING": ("refresh-full", "transient", "the next operation"),
    "full refresh dies mid-build": ("refresh-full", "mid-build", "force delete"),
    "full refresh dies with its data built": ("refresh-full", "built", "vacuum"),
    "incremental refresh dies after REFRESHING": ("refresh-incremental", "transient", "cancel"),
    "incremental refresh dies mid-build": ("refresh-incremental", "mid-build", "the next operation"),
    "incremental refresh dies with its data built": ("refresh-incremental", "built", "force delete"),
    "quick refresh dies after REFRESHING": ("refresh-quick", "transient", "the next operation"),
}


@pytest.mark.parametrize("case", sorted(BUILD_CASES))
def test_a_build_dying_at_a_step_never_uses_its_data_and_is_recovered(spark, source, copy, tmp_path, case):
    operation, step, recovery = BUILD_CASES[case]
    creating, quick = operation == "create", operation == "refresh-quick"
    system = tmp_path / "empty" if creating else copy  # refresh: of the healthy index, over a grown source
    with system_path_at(spark, system), (nullcontext() if creating else appended_file(source)):
        hsbloom.disable(spark)
        expected = lookup_rows(spark, source)
        hs = Hyperspace(spark)
        before = versions(system)
        if step == "mid-build":
            run_writer_until_it_dies(system, operation, step, source)
        else:
            run_stopping_at(spark, step, operation_call(spark, NAME, operation, source))
        jar.jar_class(spark, "index_catalog").invalidateAll()
        stuck = log_of(spark, system).latest()
        assert stuck.state.value == ("CREATING" if creating else "REFRESHING"), case
        abandoned = versions(system) - before
        if step == "mid-build":
            assert abandoned and not any(complete(system, v) for v in abandoned), abandoned
        elif step == "built":
            assert abandoned and all(complete(system, v) for v in abandoned), abandoned
        hsbloom.enable(spark)
        assert lookup_rows(spark, source) == expected
        # Never the unfinished version: no index at all for a create, else the previous version (one file for
        # id 7) and the appended file, which it does not hold.
        assert files_read(spark.read.parquet(source).where(F.col("id") == 7)) == (NUM_FILES if creating else 2)

        create = lambda: hs.create_index(spark.read.parquet(source), BFIndexConfig(NAME, ["id", "s"]))  # noqa: E731
        redo = lambda: (create() if creating else hs.refresh_index(NAME, operation.split("-")[1]))  # noqa: E731
        RECOVERIES[recovery](hs, redo, create)
        info = hs.index(NAME)
        assert info.state.value == "ACTIVE" and info.num_files == (NUM_FILES if creating or quick else NUM_FILES + 1)
        assert not abandoned & versions(system)  # the unfinished data is gone ...
        assert quick or info.data_version > stuck.data_version  # ... and its version never reused
        assert hs.verify_index(NAME).healthy
        assert lookup_rows(spark, source) == expected
        assert files_read(spark.read.parquet(source).where(F.col("id") == 7)) == (2 if quick else 1)
