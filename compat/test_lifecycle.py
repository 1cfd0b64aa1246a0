"""An index's whole life through the Python API on a Parquet directory: create, the three refresh modes as files
are appended and deleted, delete, restore and vacuum; each step's answer, what queries then read, and that they
select the same rows as without hsbloom.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest

from compare import rows_off_and_on
from hsbloom import BFIndexConfig, Hyperspace
from hsbloom.errors import IndexExistsError, IndexNotFoundError, IndexStateError
from hsbloom.explain import file_counts

FILES = 8
ROWS_PER_FILE = 500


def write_keys(spark, path: str, first: int, files: int, mode: str = "errorifexists") -> None:
    """`files` files of ROWS_PER_FILE consecutive keys from `first`: a key sits in exactly one file."""
    count = files * ROWS_PER_FILE
    spark.range(first, first + count, 1, files).selectExpr("id", "id AS key", "concat('k-', id, '-ü') AS name") \
        .write.mode(mode).parquet(path)


def lookup_reads(spark, path: str, predicate: str) -> tuple[int, int | None]:
    """With hsbloom on: (files read, files listed before hsbloom pruned) of the lookup, whose rows must be the same
    as with hsbloom off."""
    query = lambda: spark.read.parquet(path).where(predicate)  # noqa: E731
    off, on = rows_off_and_on(spark, query)
    assert on == off and off, predicate
    read, before, _ = file_counts(query())
    return read, before


def file_of(spark, path: str, predicate: str) -> Path:
    """The one file of the directory that holds the rows `predicate` selects."""
    [row] = spark.read.parquet(path).where(predicate).select("_metadata.file_path").distinct().collect()
    return Path(urlparse(row.file_path).path)


def state_of(hs: Hyperspace, name: str) -> str:
    return hs.index(name).state.value


def data_directories(system_path, name: str) -> set[str]:
    """The index's data directories on disk (<system path>/<name>/v__=N, docs/indexes.md)."""
    return {p.name for p in (system_path / name).iterdir() if p.name.startswith("v__=")}


def test_create_refresh_delete_restore_and_vacuum(spark, system_path, tmp_path):
    path = str(tmp_path / "events")
    write_keys(spark, path, 0, FILES)
    hs = Hyperspace(spark)
    hs.create_index(spark.read.parquet(path), BFIndexConfig("events", ["key", "name"]))
    info = hs.index("events")
    assert (info.state.value, info.num_files, info.num_rows, info.data_version) == ("ACTIVE", FILES, 4000, 0)
    assert [(c.column, c.num_rows, c.num_nulls) for c in info.columns] == [("key", 4000, 0), ("name", 4000, 0)]
    assert [(r.name, r.state) for r in hs.indexes().collect()] == [("events", "ACTIVE")]
    with pytest.raises(IndexExistsError, match="index 'events' already exists"):
        hs.create_index(spark.read.parquet(path), BFIndexConfig("events", ["key"]))
    assert lookup_reads(spark, path, "key = 1234") == (1, FILES)
    assert lookup_reads(spark, path, "name = 'k-1234-ü'") == (1, FILES)

    # Two files appended: a quick refresh records them and queries read them until an incremental one indexes them.
    write_keys(spark, path, 10_000, 2, mode="append")
    nothing_yet = hs.index("events").staleness
    assert nothing_yet.appended_files_not_indexed == 0  # the log knows of no change before a refresh
    quick = hs.refresh_index("events", "quick")
    assert (quick.mode, quick.refreshed, quick.appended_files, quick.deleted_files, quick.data_version) == (
        "quick", True, 2, 0, 0)
    assert hs.index("events").staleness.appended_files_not_indexed == 2
    assert lookup_reads(spark, path, "key = 10100") == (2, FILES + 2)
    incremental = hs.refresh_index("events", "incremental")
    assert (incremental.refreshed, incremental.appended_files, incremental.data_version) == (True, 2, 1)
    assert hs.index("events").staleness.is_current
    assert lookup_reads(spark, path, "key = 10100") == (1, FILES + 2)
    assert hs.refresh_index("events", "incremental").refreshed is False  # nothing changed since

    # A file deleted and one appended: a full refresh rebuilds the index in one new data directory.
    file_of(spark, path, "key = 3").unlink()
    write_keys(spark, path, 20_000, 1, mode="append")
    full = hs.refresh_index("events")
    assert (full.mode, full.refreshed, full.appended_files, full.deleted_files, full.data_version) == (
        "full", True, 1, 1, 2)
    info = hs.index("events")
    assert info.num_files == FILES + 2 and len(info.data_paths) == 1
    assert lookup_reads(spark, path, "key = 20001") == (1, FILES + 2)
    assert spark.read.parquet(path).where("key = 3").count() == 0  # its file is gone

    # Vacuum of an ACTIVE index removes the data directories its version no longer reads.
    assert data_directories(system_path, "events") == {"v__=0", "v__=1", "v__=2"}
    hs.vacuum_index("events")
    assert data_directories(system_path, "events") == {"v__=2"}
    assert hs.verify_index("events").healthy

    # Deleted, an index is kept but not used; restored, it prunes again; deleted and vacuumed, its name is free.
    hs.delete_index("events")
    assert state_of(hs, "events") == "DELETED"
    assert lookup_reads(spark, path, "key = 1234")[0] == FILES + 2
    with pytest.raises(IndexExistsError):
        hs.create_index(spark.read.parquet(path), BFIndexConfig("events", ["key"]))
    hs.restore_index("events")
    assert state_of(hs, "events") == "ACTIVE"
    assert lookup_reads(spark, path, "key = 1234") == (1, FILES + 2)
    with pytest.raises(IndexStateError, match="cannot restore index 'events': it is ACTIVE"):
        hs.restore_index("events")
    hs.delete_index("events")
    hs.vacuum_index("events")
    with pytest.raises(IndexNotFoundError, match="index 'events' does not exist"):
        hs.index("events")
    assert hs.indexes().count() == 0 and data_directories(system_path, "events") == set()
    hs.create_index(spark.read.parquet(path), BFIndexConfig("events", ["key"]))
    assert hs.index("events").num_files == FILES + 2


def test_the_sql_statements_answer_as_the_api(spark):
    """The same operations as SQL statements in the session (docs/sql.md), on a catalog table."""
    spark.sql("CREATE TABLE lifecycle_events USING parquet AS "
              "SELECT id, cast(id AS string) AS s FROM range(0, 4000, 1, 8)")
    try:
        assert spark.sql("CREATE BLOOMFILTER INDEX table_ids ON lifecycle_events (id, s)").collect() == []
        [listed] = spark.sql("SHOW BLOOMFILTER INDEXES ON lifecycle_events").collect()
        assert (listed.name, listed.state, listed.num_files) == ("table_ids", "ACTIVE", 8)
        spark.sql("SET spark.hsbloom.enabled = true")
        [explained] = spark.sql("EXPLAIN BLOOMFILTER SELECT * FROM lifecycle_events WHERE s = '42'").collect()
        assert "index table_ids" in explained.plan and "8 files -> 1" in explained.plan
        assert [tuple(r) for r in spark.sql("SELECT * FROM lifecycle_events WHERE id = 42").collect()] == [(42, "42")]
        spark.sql("INSERT INTO lifecycle_events SELECT id, cast(id AS string) FROM range(5000, 5010, 1, 1)")
        [refreshed] = spark.sql("REFRESH BLOOMFILTER INDEX table_ids INCREMENTAL").collect()
        assert (refreshed.mode, refreshed.refreshed, refreshed.appended_files) == ("incremental", True, 1)
        [described] = spark.sql("DESCRIBE BLOOMFILTER INDEX table_ids").collect()
        assert (described.num_files, described.source_table) == (9, "spark_catalog.default.lifecycle_events")
        spark.sql("DROP BLOOMFILTER INDEX table_ids")
        spark.sql("VACUUM BLOOMFILTER INDEX table_ids")
        assert "table_ids" not in [r.name for r in spark.sql("SHOW BLOOMFILTER INDEXES").collect()]
    finally:
        spark.sql("DROP TABLE IF EXISTS lifecycle_events")
