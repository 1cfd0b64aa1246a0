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
from hsbloom.errors import IndexStateError, InvalidArgumentError
from hsbloom.results import RefreshResult
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


def test_refresh_results_and_staleness_on_a_parquet_directory(spark, system_path, tmp_path):
    directory = str(tmp_path / "events")
    rows(spark, 0, 2).write.parquet(directory)
    hs = Hyperspace(spark)
    hs.create_index(spark.read.parquet(directory), BFIndexConfig("events", ["key"]))
    nothing = hs.refresh_index("events", "quick")
    assert isinstance(nothing, RefreshResult)
    assert (nothing.name, nothing.mode, nothing.refreshed, nothing.appended_files, nothing.deleted_files,
            nothing.data_version) == ("events", "quick", False, 0, 0, 0)
    assert "nothing to refresh" in nothing.message

    rows(spark, 1000, 1).write.mode("append").parquet(directory)
    quick = hs.refresh_index("events", "quick")
    assert (quick.refreshed, quick.appended_files, quick.deleted_files, quick.data_version) == (True, 1, 0, 0)
    staleness = hs.index("events").staleness
    assert (staleness.appended_files_not_indexed, staleness.deleted_files_still_indexed) == (1, 0)
    assert not staleness.is_current and staleness.checked_ms > 0 and staleness.data_delta_version is None

    incremental = hs.refresh_index("events", "incremental")
    assert (incremental.mode, incremental.appended_files, incremental.data_version) == ("incremental", 1, 1)
    info = hs.index("events")
    assert info.staleness.is_current and len(info.data_paths) == 2 and info.num_files == 3
    predicates = ["key = 1020", "key = 20", "key IN (1, 1049)", "key = -1"]
    assert outcomes(spark, spark.read.parquet(directory), predicates, enabled=True) == outcomes(
        spark, spark.read.parquet(directory), predicates, enabled=False)
    hsbloom.enable(spark)
    assert files_read(spark.read.parquet(directory).where("key = 1020")) == 1
    hsbloom.disable(spark)

    with pytest.raises(InvalidArgumentError, match="refresh mode must be one of full, incremental, quick; got 'fast'"):
        hs.refresh_index("events", "fast")
    assert hs.refresh_index("events").mode == "full"  # the default mode
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
