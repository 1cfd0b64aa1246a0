"""refresh_index (full, incremental, quick) on Parquet directories and Delta tables.

After every change of the source and every refresh, queries are compared with
hsbloom on and off (and, for Delta, with time travel to earlier versions);
the index tables are checked against what each mode promises. Also: two
refreshes at once, queries during a refresh, and a refresh killed half-way.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql import functions as F

import hsbloom
from hsbloom import BFIndexConfig, Hyperspace
from hsbloom.errors import ConcurrentOperationError, IndexStateError
from hsbloom.explain import forget_index_listing
from jar_log import held_files, log_of
from hsbloom.readers.sbbf import Sbbf
from pruning_support import files_read, outcomes
from writer_process import end_orphaned_jvm, read_line, start_writer

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


def predicates_for(keys: list[int]) -> list[str]:
    some = ", ".join(str(k) for k in keys[:5])
    return [f"key = {k}" for k in keys] + [f"name = 'k{keys[0]}'", f"key IN ({some})",
                                           f"key = {keys[1]} OR v = 3", "key IS NULL", "key = -1"]


def same_answers(spark, df, keys: list[int], predicates: list[str] | None = None) -> None:
    predicates = predicates or predicates_for(keys)
    assert outcomes(spark, df, predicates, enabled=True) == outcomes(spark, df, predicates, enabled=False)


def log_states(spark, system_path: Path, name: str) -> list[str]:
    return [e.state.value for e in log_of(spark, system_path, name).entries()]


def global_filter(spark, data_paths: tuple[str, ...], column: str) -> Sbbf:
    """The global filter of an index version: the OR of its data directories' filters (all of one size)."""
    blobs = []
    for path in data_paths:
        chunks = spark.read.parquet(f"{path}/global").where(F.col("column") == column).orderBy("chunk_index").collect()
        blobs.append(np.frombuffer(b"".join(bytes(c.chunk) for c in chunks), np.uint8))
    assert len({len(b) for b in blobs}) == 1, "the data directories' global filters differ in size"
    return Sbbf.from_bytes(np.bitwise_or.reduce(blobs).tobytes())


def version_rows(spark, system_path: Path, name: str):
    """The file-table rows of the latest ACTIVE version: its directories' rows minus the dropped ids."""
    entry = log_of(spark, system_path, name).latest_stable()
    paths = [f"file:{system_path}/{name}/v__={v}/files" for v in entry.parts]
    return spark.read.parquet(*paths).where(~F.col("file_id").isin(list(entry.dropped_file_ids)))


def held_ids(spark, system_path: Path, name: str) -> set[int]:
    """The ids of the source files the latest ACTIVE version holds, as refresh reads them (from its tables)."""
    entry = log_of(spark, system_path, name).latest_stable()
    data_paths = [f"file:{system_path}/{name}/v__={v}" for v in entry.parts]
    files, damaged = held_files(spark, data_paths, entry.dropped_file_ids)
    assert damaged == 0 and len(files) == entry.summary["num_files"]  # complete
    return {f.file_id for f in files}


def file_table(spark, system_path: Path, name: str) -> dict[str, set[int]]:
    """Per column, the file ids the latest ACTIVE version holds."""
    found: dict[str, set[int]] = {}
    for r in version_rows(spark, system_path, name).select("column", "file_id").collect():
        found.setdefault(r.column, set()).add(r.file_id)
    return found


# --- Parquet directories -----------------------------------------------------------------


def test_without_a_global_filter_the_distinct_count_stays_the_columns_through_a_refresh(spark, system_path, tmp_path):
    """ndv counts each key once (ndv_scope "column") without a global filter, and an incremental refresh adds the
    appended files' count: the same 3,000 keys in two files count 3,000, not 6,000 as the files' sum does."""
    directory = str(tmp_path / "twice")
    keys = spark.range(0, 3000).selectExpr("id AS key")
    keys.coalesce(1).write.parquet(directory)
    keys.coalesce(1).write.mode("append").parquet(directory)
    hs = Hyperspace(spark)
    hs.create_index(spark.read.parquet(directory), BFIndexConfig("twice", ["key"]))

    def counted() -> dict:
        newest = sorted((system_path / "twice" / "_hsbloom_log").glob("*.json"))[-1]
        return json.loads(newest.read_text())["summary"]["columns"]["key"]

    created = counted()
    assert created["ndv_scope"] == "column" and created["global_filter_bytes"] == 0
    assert abs(created["ndv"] - 3000) <= 30 and abs(created["file_ndv_sum"] - 6000) <= 60, created
    spark.range(3000, 4000).selectExpr("id AS key").coalesce(1).write.mode("append").parquet(directory)
    assert hs.refresh_index("twice", "incremental").refreshed
    refreshed = counted()
    assert refreshed["ndv_scope"] == "column" and abs(refreshed["ndv"] - 4000) <= 40, refreshed


def test_each_mode_on_a_parquet_directory(spark, system_path, tmp_path):
    directory = tmp_path / "events"
    rows(spark, 0, 6).write.parquet(str(directory))
    read = lambda: spark.read.parquet(str(directory))  # noqa: E731
    hs = Hyperspace(spark)
    hs.create_index(read(), BFIndexConfig("events", ["key", "name"], global_filter=True))
    first = hs.index("events")

    result = hs.refresh_index("events", "quick")
    assert not result.refreshed and "nothing to refresh" in result.message
    assert not hs.refresh_index("events", "incremental").refreshed
    assert not hs.refresh_index("events", "full").refreshed
    assert log_states(spark, system_path, "events") == ["CREATING", "ACTIVE"]  # nothing written

    # Append two files, remove one, rewrite one in place (changed = deleted + appended).
    parts = sorted(directory.glob("part-*.parquet"))
    rows(spark, 1000, 2).write.mode("append").parquet(str(directory))
    os.remove(parts[0])
    rewritten = parts[1]
    spark.range(5000, 5003).select("id", F.col("id").alias("key"), F.concat(F.lit("k"), F.col("id")).alias("name"),
                                   (F.col("id") % 7).alias("v")).coalesce(1).write.parquet(str(tmp_path / "one"))
    shutil.copy(next((tmp_path / "one").glob("part-*.parquet")), rewritten)
    (rewritten.parent / f".{rewritten.name}.crc").unlink()  # Hadoop's checksum of the old contents
    keys = [1000, 1075, 5001, 160, 299, 10, 60]  # appended, appended, rewritten, kept, kept, deleted, rewritten
    same_answers(spark, read(), keys)  # stale index: still correct

    quick = hs.refresh_index("events", "quick")
    assert (quick.refreshed, quick.appended_files, quick.deleted_files) == (True, 3, 2)
    info = hs.index("events")
    assert info.data_version == first.data_version  # nothing built
    assert (info.staleness.appended_files_not_indexed, info.staleness.deleted_files_still_indexed) == (3, 2)
    assert not info.staleness.is_current
    assert not hs.refresh_index("events", "quick").refreshed  # already recorded
    same_answers(spark, read(), keys)
    hsbloom.enable(spark)
    assert files_read(read().where("key = 1000")) == 3  # hybrid scan: the three files the data lacks
    assert files_read(read().where("key = 160")) == 4  # ... plus the one indexed file that holds it

    incremental = hs.refresh_index("events", "incremental")
    assert (incremental.appended_files, incremental.deleted_files) == (3, 2)
    info = hs.index("events")
    assert info.data_version == first.data_version + 1
    assert info.num_files == 7 and info.num_rows == 4 * ROWS_PER_FILE + 2 * ROWS_PER_FILE + 3
    assert info.staleness.appended_files_not_indexed == 0 and info.staleness.global_filter_deleted_files == 2
    ids = held_ids(spark, system_path, "events")
    assert len(ids) == 7 and max(ids) >= 6  # appended files got new ids
    assert len(info.data_paths) == 2  # the appended files' directory, and the first one referred to
    assert file_table(spark, system_path, "events") == {"key": ids, "name": ids}
    old_global = global_filter(spark, first.data_paths, "key")
    new_global = global_filter(spark, info.data_paths, "key")
    assert new_global.num_bytes == old_global.num_bytes  # same size: OR-ed
    assert new_global.check(pa.array([1000, 1099, 5000, 5002, 0, 299], pa.int64())).all()
    same_answers(spark, read(), keys)
    hsbloom.enable(spark)
    assert files_read(read().where("key = 1000")) == 1
    assert files_read(read().where("key = 5001")) == 1
    assert not hs.refresh_index("events", "incremental").refreshed

    full = hs.refresh_index("events", "full")  # the global filters hold deleted values: a full build has work
    assert full.refreshed and hs.index("events").staleness.is_current
    assert not hs.refresh_index("events", "full").refreshed
    same_answers(spark, read(), keys)
    assert log_states(spark, system_path, "events") == ["CREATING", "ACTIVE"] + ["REFRESHING", "ACTIVE"] * 3
    assert sorted(p.name for p in (system_path / "events").glob("v__=*")) == ["v__=0", "v__=1", "v__=2"]
    hs.vacuum_index("events")
    assert sorted(p.name for p in (system_path / "events").glob("v__=*")) == ["v__=2"]
    same_answers(spark, read(), keys)


def test_refresh_errors(spark, system_path, tmp_path):
    directory = tmp_path / "typed"
    rows(spark, 0, 2).write.parquet(str(directory))
    hs = Hyperspace(spark)
    hs.create_index(spark.read.parquet(str(directory)), BFIndexConfig("typed", ["key"]))
    with pytest.raises(ValueError, match="refresh mode must be one of full, incremental, quick; got 'fast'"):
        hs.refresh_index("typed", "fast")
    # The column is now written as a string: old rows hold hashes of longs.
    shutil.rmtree(directory)
    rows(spark, 0, 2).select("id", F.col("key").cast("string").alias("key"), "name", "v").write.parquet(str(directory))
    with pytest.raises(IndexStateError, match=r"column 'key' is now string, but the index holds bigint values; "
                                              r"refresh it in full mode"):
        hs.refresh_index("typed", "incremental")
    hs.refresh_index("typed", "full")
    assert hs.index("typed").source.schema["key"] == "string"
    hs.delete_index("typed")
    with pytest.raises(IndexStateError, match="cannot refresh index 'typed': it is DELETED, and refresh needs ACTIVE"):
        hs.refresh_index("typed", "quick")


# --- Delta tables --------------------------------------------------------------------------


def test_each_mode_on_a_delta_table_through_its_operations(spark, system_path, tmp_path):
    table = str(tmp_path / "delta")
    rows(spark, 0, 6).write.format("delta").option("delta.enableDeletionVectors", "true").save(table)
    hs = Hyperspace(spark)
    hs.create_index(spark.read.format("delta").load(table), BFIndexConfig("lake", ["key", "name"]))
    latest = lambda: spark.read.format("delta").load(table)  # noqa: E731
    as_of = lambda v: spark.read.format("delta").option("versionAsOf", v).load(table)  # noqa: E731
    sql = lambda statement: spark.sql(statement.format(t=f"delta.`{table}`"))  # noqa: E731
    # Few predicates (each is one Delta scan to plan, with a job of Delta's own for its statistics): a key of
    # each generation (first write, append, update, overwrite), IN, OR of both indexed columns, OR with a column
    # the index does not hold.
    predicates = ["key = 120", "key IN (0, 1035, 1040, 3001, 3100)", "key = 2001 OR name = 'k0'",
                  "key = 2030 OR v = 3"]

    def version() -> int:  # the newest commit file of the table's log (a query of its history costs a job)
        return max(int(f.stem) for f in (Path(table) / "_delta_log").glob("*.json") if f.stem.isdigit())

    # The rows each predicate selects without hsbloom, once per table version: a version's rows never change, so
    # the answer off is the same for the latest read, a read as of that version, before and after a refresh.
    answers_off: dict[int, list] = {}

    def check(current: int, *versions: int) -> None:
        """Each predicate gives the same rows with hsbloom on as off, on the latest table (at version `current`)
        and on the table as of each of `versions`."""
        for v, df in [(current, latest())] + [(v, as_of(v)) for v in versions]:
            if v not in answers_off:
                answers_off[v] = outcomes(spark, as_of(v), predicates, enabled=False)
            assert outcomes(spark, df, predicates, enabled=True) == answers_off[v], (v, versions)

    operations = [
        ("append", lambda: rows(spark, 1000, 2).write.format("delta").mode("append").save(table)),
        ("delete", lambda: sql("DELETE FROM {t} WHERE key % 3 = 0")),  # deletion vectors
        ("update", lambda: sql("UPDATE {t} SET key = key + 2000 WHERE key < 60")),
        ("merge", lambda: sql(
            "MERGE INTO {t} AS t USING (SELECT id + 1030 AS id, id + 1030 AS key, 'merged' AS name, 1L AS v "
            "FROM range(0, 40)) AS s "
            "ON t.key = s.key WHEN MATCHED THEN UPDATE SET t.name = s.name WHEN NOT MATCHED THEN INSERT *")),
        ("optimize", lambda: sql("OPTIMIZE {t}")),
        ("overwrite", lambda: rows(spark, 3000, 3).write.format("delta").mode("overwrite").save(table)),
    ]
    modes = ["quick", "incremental", "incremental"]
    # Data directories the version reads after each operation: the incremental refreshes refer to earlier
    # data until OPTIMIZE drops more files than the table keeps, which compacts.
    parts = {"append": 2, "update": 3, "merge": 4, "optimize": 1, "overwrite": 2}
    for step, (operation, run) in enumerate(operations):
        before = version()
        run()
        after = version()
        check(after)  # a stale index: still correct
        mode = modes[step % 3]
        result = hs.refresh_index("lake", mode)
        if operation == "delete":  # deletion vectors only: the files, and so their filters, are unchanged
            assert not result.refreshed and "nothing to refresh" in result.message, result
            check(after, before)
            continue
        assert result.refreshed, (operation, result)
        info = hs.index("lake")
        if mode == "quick":
            assert info.staleness.checked_delta_version == after and info.staleness.data_delta_version < after
            assert info.staleness.appended_files_not_indexed > 0
            check(after)
            result = hs.refresh_index("lake", "incremental")
            info = hs.index("lake")
        assert info.source.delta_version == after and info.staleness.appended_files_not_indexed == 0, operation
        assert len(info.data_paths) == parts[operation], (operation, info.data_paths)
        check(after, before)
        hsbloom.enable(spark)
        live = [r.key for r in latest().select("key").collect()]
        probe = max(live)
        assert files_read(latest().where(f"key = {probe}")) == 1, operation  # the index covers the new files
        hsbloom.disable(spark)

    # Time travel by timestamp, to the first version and to the one before the overwrite: the answers of those
    # versions read by number with hsbloom off (both were checked above).
    history = sql("DESCRIBE HISTORY {t}").orderBy("version").collect()
    for commit in (history[0], history[-2]):
        stamp = commit.timestamp.strftime("%Y-%m-%d %H:%M:%S.%f")
        df = spark.read.format("delta").option("timestampAsOf", stamp).load(table)
        assert outcomes(spark, df, predicates, enabled=True) == answers_off[commit.version], commit.version
    # Before the overwrite, files the index no longer holds are read; held files are pruned.
    hsbloom.enable(spark)
    old = as_of(history[-2].version)
    assert old.where("key = 1000").count() in (0, 1)
    assert not hs.refresh_index("lake", "incremental").refreshed


def test_delta_refresh_with_an_expired_log_compares_listings(spark, system_path, tmp_path):
    table = str(tmp_path / "expired")
    rows(spark, 0, 3).write.format("delta").option("delta.checkpointInterval", "1").save(table)
    hs = Hyperspace(spark)
    hs.create_index(spark.read.format("delta").load(table), BFIndexConfig("expired", ["key"]))
    rows(spark, 500, 1).write.format("delta").mode("append").save(table)
    rows(spark, 600, 1).write.format("delta").mode("append").save(table)
    (Path(table) / "_delta_log" / f"{1:020d}.json").unlink()  # as if cleaned up (checkpoints keep the table)
    result = hs.refresh_index("expired", "incremental")
    assert (result.appended_files, result.deleted_files) == (2, 0)


# --- Concurrency and crashes ---------------------------------------------------------------


@pytest.fixture
def growing(spark, tmp_path) -> Path:
    directory = tmp_path / "growing"
    rows(spark, 0, 4).write.parquet(str(directory))
    return directory


def test_two_refreshes_at_once_one_wins_and_queries_stay_correct(spark, system_path, growing):
    hs = Hyperspace(spark)
    read = lambda: spark.read.parquet(str(growing))  # noqa: E731
    hs.create_index(read(), BFIndexConfig("busy", ["key"]))
    rows(spark, 1000, 2).write.mode("append").parquet(str(growing))
    expected = outcomes(spark, read(), predicates_for([0, 150, 1000, 1060]), enabled=False)
    barrier = threading.Barrier(3)
    results: list = [None, None]

    def refresh(slot: int) -> None:
        barrier.wait()
        try:
            results[slot] = hs.refresh_index("busy", "full")
        except Exception as exc:  # noqa: BLE001 - the test judges it
            results[slot] = exc

    threads = [threading.Thread(target=refresh, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    barrier.wait()
    while any(t.is_alive() for t in threads):  # queries while the refreshes run
        assert outcomes(spark, read(), predicates_for([0, 150, 1000, 1060]), enabled=True) == expected
    for t in threads:
        t.join()
    failures = [r for r in results if isinstance(r, Exception)]
    assert len(failures) == 1 and isinstance(failures[0], ConcurrentOperationError), results
    assert "index 'busy'" in str(failures[0])
    assert log_states(spark, system_path, "busy") == ["CREATING", "ACTIVE", "REFRESHING", "ACTIVE"]
    assert hs.index("busy").num_files == 6


def test_a_refresh_killed_half_way_leaves_the_previous_version_in_use(spark, system_path, growing):
    hs = Hyperspace(spark)
    read = lambda: spark.read.parquet(str(growing))  # noqa: E731
    hs.create_index(read(), BFIndexConfig("killed", ["key"]))
    rows(spark, 1000, 1).write.mode("append").parquet(str(growing))
    writer = start_writer("halt-refresh", str(system_path), "killed", "incremental")
    try:
        _, jvm_pid, _ = read_line(writer, "WRITER").split()
        read_line(writer, "DYING built")  # its data written, its completing entry not
        assert writer.wait(timeout=120) == 9  # its JVM halted and reaped: that writer is provably dead
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    try:
        assert log_states(spark, system_path, "killed") == ["CREATING", "ACTIVE", "REFRESHING"]
        assert (system_path / "killed" / "v__=1" / "files").is_dir()  # the half-written version
        forget_index_listing(spark)
        info = hs.index("killed")  # the REFRESHING entry, but queries use the ACTIVE one before it
        assert log_of(spark, system_path, "killed").latest_stable().data_version == 0
        same_answers(spark, read(), [0, 100, 1000, 1049])
        hsbloom.enable(spark)
        assert files_read(read().where("key = 100")) == 2  # version 0 prunes; the appended file is read
        hsbloom.disable(spark)

        result = hs.refresh_index("killed", "incremental")  # the killed writer is provably dead
        assert result.refreshed and result.appended_files == 1 and info.state.value == "REFRESHING"
        assert log_states(spark, system_path, "killed") == ["CREATING", "ACTIVE", "REFRESHING", "ACTIVE",
                                                           "REFRESHING", "ACTIVE"]
        assert hs.index("killed").data_version == 2  # never the killed refresh's version
        assert not (system_path / "killed" / "v__=1").exists()
        same_answers(spark, read(), [0, 100, 1000, 1049])
    finally:
        end_orphaned_jvm(int(jvm_pid))
