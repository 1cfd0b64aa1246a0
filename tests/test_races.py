"""Two or four writers racing on one operation of one index: exactly one wins, every loser gets an hsbloom
error naming the concurrent operation and what to do, nothing of the losers is written, and the index stays
correct and usable (docs/design/log.md).

The writers are threads of this process on its SparkSession (each Python thread runs its statements on a JVM
thread of its own, PySpark's pinned-thread mode): they reach the log through the same storage protocol as
separate processes (create-if-absent of the next entry). Each runs the operation to the point of writing its
transient entry and waits there for the others (the jar's test seam hsbloom.log.LogSteps.raceBeforeTransient),
so all of them try to write the same entry id: the race is on that write, every time, not on who happens to
start first. (A race of two processes is in test_index_management.py.) Uses the healthy index of
tests/healthy_index.py, on copies.
"""

from __future__ import annotations

import threading
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Callable

import pytest
from pyspark.sql import functions as F

import hsbloom
from hsbloom import BFIndexConfig, Hyperspace
from hsbloom.errors import ConcurrentOperationError, IndexNotFoundError
from hsbloom.explain import files_read
from healthy_index import NAME, NUM_FILES, lookup_rows, system_path_at
from jar_log import log_steps
from test_crash_steps import appended_file, log_of, versions


def race(spark, calls: list[Callable[[], Any]]) -> list[Any]:
    """Run each call on its own thread; each waits in the jar, right before writing its operation's transient log
    entry, until all are there. Returns each call's result or exception."""
    outcomes: list[Any] = [None] * len(calls)

    def run(slot: int) -> None:
        try:
            outcomes[slot] = calls[slot]()
        except BaseException as exc:  # noqa: BLE001 - the test judges it
            outcomes[slot] = exc

    steps = log_steps(spark)
    steps.raceBeforeTransient(len(calls))
    try:
        threads = [threading.Thread(target=run, args=(slot,)) for slot in range(len(calls))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        steps.clear()
    return outcomes


def leftover_directory(system: Path) -> None:
    (system / NAME / "v__=5").mkdir()


# name: (prepare, the operation, the log's last two states, data directories after, files read for id 7)
RACES: dict[str, tuple[Callable[[Hyperspace, Path], Any], Callable[[Hyperspace, Any], Any], list[str], set[str], int]] = {
    "create": (
        lambda hs, s: None, lambda hs, df: hs.create_index(df, BFIndexConfig(NAME, ["id", "s"])),
        ["CREATING", "ACTIVE"], {"v__=0"}, 1,
    ),
    "full refresh": (
        lambda hs, s: None, lambda hs, df: hs.refresh_index(NAME, "full"),
        ["REFRESHING", "ACTIVE"], {"v__=0", "v__=1"}, 1,
    ),
    "incremental refresh": (
        lambda hs, s: None, lambda hs, df: hs.refresh_index(NAME, "incremental"),
        ["REFRESHING", "ACTIVE"], {"v__=0", "v__=1"}, 1,
    ),
    "quick refresh": (
        lambda hs, s: None, lambda hs, df: hs.refresh_index(NAME, "quick"),
        ["REFRESHING", "ACTIVE"], {"v__=0"}, 2,  # the appended file is read until a build
    ),
    "delete": (
        lambda hs, s: None, lambda hs, df: hs.delete_index(NAME), ["DELETING", "DELETED"], {"v__=0"}, NUM_FILES,
    ),
    "restore": (
        lambda hs, s: hs.delete_index(NAME), lambda hs, df: hs.restore_index(NAME),
        ["RESTORING", "ACTIVE"], {"v__=0"}, 1,
    ),
    "vacuum of an active index": (
        lambda hs, s: leftover_directory(s), lambda hs, df: hs.vacuum_index(NAME),
        ["VACUUMING", "ACTIVE"], {"v__=0"}, 1,
    ),
    "vacuum of a deleted index": (
        lambda hs, s: (hs.delete_index(NAME), leftover_directory(s)), lambda hs, df: hs.vacuum_index(NAME),
        ["VACUUMING", "DOESNOTEXIST"], set(), NUM_FILES,
    ),
}


@pytest.mark.parametrize("writers", [2, 4])
@pytest.mark.parametrize("operation", sorted(RACES))
def test_writers_racing_on_an_operation_one_wins_and_the_index_stays_usable(
    spark, source, copy, tmp_path, operation, writers
):
    prepare, call, last_states, data_after, read_for_7 = RACES[operation]
    creating, refreshing = operation == "create", operation.endswith("refresh")
    system = tmp_path / "empty" if creating else copy
    with system_path_at(spark, system), (appended_file(source) if refreshing else nullcontext()):
        hs = Hyperspace(spark)
        prepare(hs, system)
        entries_before = len(log_of(spark, system).ids())
        hsbloom.disable(spark)
        expected = lookup_rows(spark, source)
        df = spark.read.parquet(source)

        outcomes = race(spark, [lambda: call(hs, df)] * writers)

        losers = [o for o in outcomes if isinstance(o, BaseException)]
        assert len(losers) == writers - 1, outcomes  # exactly one wins ...
        for loser in losers:  # ... the others learn why, and what to do
            assert isinstance(loser, ConcurrentOperationError), f"{type(loser).__name__}: {loser}"
            message = str(loser)
            assert f"index {NAME!r}" in message and "at the same time" in message and "nothing was changed" in message
            assert "run this one again" in message, message
        if refreshing:
            (won,) = [o for o in outcomes if not isinstance(o, BaseException)]
            assert won.refreshed, won
        log = log_of(spark, system)
        assert [e.state.value for e in log.entries()][entries_before:] == last_states  # the losers wrote nothing
        assert versions(system) == data_after
        hsbloom.enable(spark)
        assert lookup_rows(spark, source) == expected
        assert files_read(spark.read.parquet(source).where(F.col("id") == 7)) == read_for_7
        if last_states[-1] == "DOESNOTEXIST":
            with pytest.raises(IndexNotFoundError):  # the name is free again
                hs.index(NAME)
            return
        assert hs.verify_index(NAME).healthy
        # Still usable by the ordinary operations (log-only ones: cheap).
        if last_states[-1] == "ACTIVE":
            hs.delete_index(NAME)
        hs.restore_index(NAME)
        assert hs.index(NAME).state.value == "ACTIVE"
        assert lookup_rows(spark, source) == expected
