"""What an index costs on storage: log entries whose size does not grow with the number of files (the files
are listed by the version's tables), an incremental refresh that writes rows for the changed files only, and
an index whose size is close to the filter bits it holds (docs/indexes.md, docs/design/log.md)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from pyspark.sql import functions as F

from hsbloom import BFIndexConfig, Hyperspace
from jar_log import held_files, log_of


def latest_entry_bytes(system_path: Path, name: str) -> int:
    return max((system_path / name / "_hsbloom_log").glob("*.json")).stat().st_size


def test_log_entry_bytes_do_not_grow_with_the_number_of_files(spark, system_path, tmp_path):
    hs = Hyperspace(spark)
    sizes = {}
    for files in (10, 200):
        source = tmp_path / f"src{files:04d}"  # paths of one length, so only the number of files differs
        spark.range(0, 2000, numPartitions=files).select(F.col("id").alias("key")).write.parquet(str(source))
        name = f"files{files:04d}"
        hs.create_index(spark.read.parquet(str(source)), BFIndexConfig(name, ["key"]))
        assert hs.index(name).num_files == files
        sizes[files] = latest_entry_bytes(system_path, name)
    assert abs(sizes[200] / sizes[10] - 1) <= 0.10, sizes


def test_an_incremental_refresh_appending_one_file_writes_one_row(spark, system_path, tmp_path):
    """The appended file's rows go into a new data directory the version reads beside the old one; the rows
    (and the listing) of the files already indexed are not written again."""
    source = tmp_path / "events"
    spark.range(0, 300, numPartitions=3).select(F.col("id").alias("key")).write.parquet(str(source))
    hs = Hyperspace(spark)
    hs.create_index(spark.read.parquet(str(source)), BFIndexConfig("appending", ["key"]))
    before = latest_entry_bytes(system_path, "appending")
    spark.range(300, 400, numPartitions=1).select(F.col("id").alias("key")).write.mode("append").parquet(str(source))
    result = hs.refresh_index("appending", "incremental")
    assert (result.appended_files, result.deleted_files) == (1, 0)
    info = hs.index("appending")
    assert len(info.data_paths) == 2 and info.num_files == 4
    new_part = Path(info.data_paths[-1].removeprefix("file:"))
    assert pq.read_table(new_part / "files").num_rows == 1  # one file, one indexed column
    entry = log_of(spark, system_path, "appending").latest_stable()
    assert entry.parts == (0, 1)  # the version reads both data directories
    files, damaged = held_files(spark, list(info.data_paths), entry.dropped_file_ids)
    assert damaged == 0 and len(files) == 4 and len({f.file_id for f in files}) == 4
    assert abs(latest_entry_bytes(system_path, "appending") - before) < 200  # a second data part, not a list


def test_index_size_is_the_bytes_on_storage_and_close_to_the_filter_bits(spark, system_path, tmp_path):
    """index_size (hs.indexes()) and index_bytes (hs.index) are the bytes of the version's data directories on
    storage, and each filter is stored once: on a small realistic table (20 files, 2 columns), at most 1.15x the
    filter bits held, the global filters included."""
    source = tmp_path / "orders"
    spark.range(0, 400_000, numPartitions=20).select(
        F.col("id").alias("order_id"), F.sha2(F.col("id").cast("string"), 256).alias("customer")
    ).write.parquet(str(source))
    hs = Hyperspace(spark)
    hs.create_index(spark.read.parquet(str(source)), BFIndexConfig("orders", ["order_id", "customer"]))
    info = hs.index("orders")
    data = Path(info.data_paths[-1].removeprefix("file:"))
    on_storage = sum(p.stat().st_size for p in data.rglob("*") if p.is_file() and p.suffix != ".crc")
    assert info.index_bytes == on_storage
    assert hs.indexes().where("name = 'orders'").first().index_size == on_storage
    file_bits = sum(pq.read_table(data / "files", columns=["bitset_bytes"]).column("bitset_bytes").to_pylist())
    global_bits = sum(c.global_filter_bytes for c in info.columns)
    data_bytes = sum(p.stat().st_size for p in source.glob("*.parquet"))
    ratio = on_storage / (file_bits + global_bits)
    print(f"\nindex {on_storage:,} bytes, filters {file_bits + global_bits:,} bytes ({ratio:.3f}x), data {data_bytes:,}")
    assert ratio <= 1.15
