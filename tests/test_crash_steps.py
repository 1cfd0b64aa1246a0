"""A writer process that dies at a step of delete, restore or vacuum leaves an index that answers correctly
and that the next ordinary operation recovers (docs/design/log.md, "Crashes, cancel and dead writers").

The writer (tests/index_writer.py die-at) exits abruptly (os._exit, as a kill: no rollback, no cleanup)
right after the step; this process then checks the log, the answers, and the recovery. Uses the healthy
index of test_corruption.py, on copies.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from pyspark.sql import functions as F

from hsbloom import jar
import hsbloom
from hsbloom import Hyperspace
from hsbloom.errors import IndexNotFoundError
from hsbloom.explain import files_read
from test_corruption import NAME, NUM_FILES, copy, expected, healthy, lookup_rows, source, system_path_at  # noqa: F401

WRITER_SCRIPT = Path(__file__).resolve().parent / "index_writer.py"


def run_writer_until_it_dies(system: Path, operation: str, step: str) -> None:
    done = subprocess.run(
        [sys.executable, str(WRITER_SCRIPT), "die-at", str(system), NAME, operation, step],
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
