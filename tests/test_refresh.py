"""refresh_index through the Python facade: its RefreshResult, the staleness `index()` then reports (Parquet and
Delta), and the errors it raises.

What each mode finds changed, writes and refuses, on Parquet directories and Delta tables through their operations,
versions of several data directories, compaction, races and crashes, is tested where it lives:
jvm/src/test/scala/hsbloom/refresh (RefreshSuite, DeltaRefreshSuite, RefreshVersionsSuite) and
jvm/src/test/scala/hsbloom/operations (CrashStepsSuite, RacesSuite).
"""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

import hsbloom
from hsbloom import BFIndexConfig, Hyperspace
from hsbloom.errors import HsbloomError, IndexStateError, InvalidArgumentError, OperationFailedError
from hsbloom.results import RefreshResult
import jar_log
from pruning_support import files_read, outcomes

ROWS_PER_FILE = 50


@pytest.fixture(autouse=True)
def pruning_disabled_afterwards(spark):
    yield
    hsbloom.disable(spark)


def rows(spark, first_key: int, num_files: int):
    """num_files files of ROWS_PER_FILE distinct keys each, starting at first_key (key k is in one file)."""
    n = num_files * ROWS_PER_FILE
    return spark.range(first_key, first_key + n, numPartitions=num_files).select(
        "id", F.col("id").alias("key"), F.concat(F.lit("k"), F.col("id")).alias("name"), (F.col("id") % 7).alias("v")
    )


def stale_counts(staleness) -> tuple[int, int, int]:
    """The three counts of a Staleness, read by name (the facade builds it from the jar's row by position)."""
    return (staleness.appended_files_not_indexed, staleness.deleted_files_still_indexed,
            staleness.global_filter_deleted_files)


def test_refresh_results_and_staleness_on_a_parquet_directory(spark, system_path, tmp_path):
    """Every field of RefreshResult and Staleness, by name and with values that differ, so that fields the facade
    builds by position cannot swap unnoticed; needs_full_refresh as DESCRIBE reports it; and a failure of the JVM
    with no hsbloom error class raised as OperationFailedError."""
    directory = tmp_path / "events"
    rows(spark, 0, 3).write.parquet(str(directory))
    first, second, third = sorted(directory.glob("part-*.parquet"))  # keys 0-49, 50-99, 100-149
    hs = Hyperspace(spark)
    hs.create_index(spark.read.parquet(str(directory)), BFIndexConfig("events", ["key"], global_filter=True))
    nothing = hs.refresh_index("events", "quick")
    assert isinstance(nothing, RefreshResult)
    assert (nothing.name, nothing.mode, nothing.refreshed, nothing.appended_files, nothing.deleted_files,
            nothing.data_version) == ("events", "quick", False, 0, 0, 0)
    assert "nothing to refresh" in nothing.message

    rows(spark, 1000, 1).write.mode("append").parquet(str(directory))
    first.unlink()
    quick = hs.refresh_index("events", "quick")
    assert (quick.refreshed, quick.appended_files, quick.deleted_files, quick.data_version) == (True, 1, 1, 0)
    staleness = hs.index("events").staleness
    assert stale_counts(staleness) == (1, 1, 0)
    assert not staleness.is_current and staleness.checked_ms > 0 and staleness.data_delta_version is None

    # A JVM failure that carries no hsbloom error class (here the jar's test seam stopping the writer right after
    # its REFRESHING entry: a throwable the jar's own wrapping does not catch) is an OperationFailedError.
    with jar_log.writer_stopped_at(spark, "transient"), pytest.raises(
            OperationFailedError, match=r"^refresh of index 'events' failed: .*the writer stopped at step 'transient'"
    ) as stopped:
        hs.refresh_index("events", "incremental")
    assert isinstance(stopped.value, HsbloomError) and stopped.value.__cause__ is not None
    assert "the writer stopped at step 'transient'" in str(stopped.value.__cause__)

    incremental = hs.refresh_index("events", "incremental")  # finds the stopped writer gone, and redoes its work
    assert (incremental.mode, incremental.appended_files, incremental.deleted_files, incremental.data_version) == (
        "incremental", 1, 1, 2)  # version 1 was the stopped refresh's, never reused
    info = hs.index("events")
    assert len(info.data_paths) == 2 and info.num_files == 3 and not info.needs_full_refresh
    # The deleted file's keys stay in the global filter, which only a full refresh rebuilds.
    assert stale_counts(info.staleness) == (0, 0, 1)
    assert not info.staleness.is_current
    predicates = ["key = 1020", "key = 20", "key = 70", "key IN (1, 1049)", "key = -1"]
    assert outcomes(spark, spark.read.parquet(str(directory)), predicates, enabled=True) == outcomes(
        spark, spark.read.parquet(str(directory)), predicates, enabled=False)
    hsbloom.enable(spark)
    assert files_read(spark.read.parquet(str(directory)).where("key = 1020")) == 1
    hsbloom.disable(spark)

    rows(spark, 2000, 3).write.mode("append").parquet(str(directory))
    second.unlink()
    third.unlink()
    quick = hs.refresh_index("events", "quick")
    assert (quick.refreshed, quick.appended_files, quick.deleted_files, quick.data_version) == (True, 3, 2, 2)
    assert stale_counts(hs.index("events").staleness) == (3, 2, 1)

    # The latest entry as an older hsbloom wrote it (no data layout): only a full refresh can use its data again.
    log = jar_log.log_of(spark, system_path, "events")
    latest = log.latest()
    older = jar_log.successor(latest, latest.state, latest.operation, latest.raw["writer"])
    del older["data_layout"]
    log.append_raw(older)
    assert hs.index("events").needs_full_refresh

    with pytest.raises(InvalidArgumentError, match="refresh mode must be one of full, incremental, quick; got 'fast'"):
        hs.refresh_index("events", "fast")
    full = hs.refresh_index("events")
    assert (full.mode, full.refreshed, full.data_version) == ("full", True, 3)  # the default mode
    info = hs.index("events")
    assert not info.needs_full_refresh and info.staleness.is_current and info.num_files == 4
    hs.delete_index("events")
    with pytest.raises(IndexStateError, match="cannot refresh index 'events': it is DELETED, and refresh needs ACTIVE"):
        hs.refresh_index("events", "quick")


def test_the_staleness_of_a_delta_index_names_its_table_versions(spark, system_path, tmp_path):
    table = str(tmp_path / "lake")
    rows(spark, 0, 2).write.format("delta").save(table)
    hs = Hyperspace(spark)
    hs.create_index(spark.read.format("delta").load(table), BFIndexConfig("lake", ["key"]))
    rows(spark, 1000, 1).write.format("delta").mode("append").save(table)
    assert hs.refresh_index("lake", "quick").appended_files == 1
    info = hs.index("lake")
    assert (info.source.delta_version, info.staleness.data_delta_version, info.staleness.checked_delta_version) == (
        0, 0, 1)
    assert hs.refresh_index("lake", "incremental").refreshed
    info = hs.index("lake")
    assert (info.source.delta_version, info.staleness.checked_delta_version) == (1, 1) and info.staleness.is_current
