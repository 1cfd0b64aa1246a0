"""Damaged indexes never prune wrongly, are reported, and can always be removed and rebuilt (docs/design/integrity.md).

One healthy index is built once per run (tests/healthy_index.py); each case damages a copy of it (in
its own system path) one file at a time: truncation, bit flips, zeroing,
deletion, replacement by another valid file, shifted offsets, for the file
table, blocks/, the global filters, their checksums and the log entries. The
Hadoop `.crc` side files are removed from every copy, as on object stores,
which have none, so the index's own checksums are the only defence. Each case
runs a query with hsbloom on and off (the same rows), and checks that the
damaged file is named by `hs.index(name).damage` and by `verify_index`.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from hsbloom import jar
import hsbloom
from hsbloom import Hyperspace
from hsbloom.explain import files_read
from healthy_index import NAME, NUM_FILES, ROWS_PER_FILE, lookup_rows, system_path_at
from jvm_classes import jvm_class
from stored_filters import stripes


def joined(spark, source: str):
    probe = spark.range(-2000, 4000, numPartitions=2).select(F.col("id").alias("key"))
    return probe.join(spark.read.parquet(source), F.col("key") == F.col("id"))


def join_count(spark, source: str) -> int:
    """The join's rows, as a shuffle join (the global filter is injected only there: docs/joins.md)."""
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        if hsbloom.is_enabled(spark):
            plan = jar.java_dataframe(joined(spark, source)).queryExecution().optimizedPlan()
            assert "hsbloom_join_filter" in plan.toString()
        return joined(spark, source).count()
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)


def data_dir(system: Path) -> Path:
    (version,) = (system / NAME).glob("v__=*")
    return version


def one(directory: Path, pattern: str) -> Path:
    return sorted(directory.glob(pattern))[0]


# --- kinds of damage ------------------------------------------------------------------------


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def flip_bits(path: Path, count: int = 200, seed: int = 15) -> None:
    data = bytearray(path.read_bytes())
    rng = random.Random(seed)
    for _ in range(count):
        bit = rng.randrange(len(data) * 8)
        data[bit // 8] ^= 1 << (bit % 8)
    path.write_bytes(bytes(data))


def zero(path: Path) -> None:
    path.write_bytes(bytes(path.stat().st_size))


def delete(path: Path) -> None:
    path.unlink()


def rewrite_table(path: Path, change: Callable[[pa.Table], pa.Table]) -> None:
    """Rewrite a Parquet file of the index with pyarrow, as an operator's tool would, changing some columns."""
    table = change(pq.read_table(path))
    path.unlink()
    pq.write_table(table, path, compression="none")


def shifted(table: pa.Table) -> pa.Table:
    """blocks_offset and blocks_position moved by 32 bytes (one block), as in issue 15's report."""
    for column, by in (("blocks_offset", 32), ("blocks_position", 1)):
        i = table.schema.get_field_index(column)
        values = pa.array([v + by for v in table.column(column).to_pylist()], table.schema.field(column).type)
        table = table.set_column(i, table.schema.field(column), values)
    return table


def checksums_changed(column: str) -> Callable[[pa.Table], pa.Table]:
    def change(table: pa.Table) -> pa.Table:
        i = table.schema.get_field_index(column)
        values = pa.array([v ^ 1 for v in table.column(column).to_pylist()], pa.int64())
        return table.set_column(i, table.schema.field(column), values)

    return change


# --- the cases ------------------------------------------------------------------------------

DATA_CASES: dict[str, Callable[[Path, Path], Path]] = {
    # blocks/: what planning probes
    "blocks truncated": lambda d, o: _apply(truncate, one(d / "blocks", "*.blocks")),
    "blocks bit flips": lambda d, o: _apply(flip_bits, one(d / "blocks", "*.blocks")),
    "blocks zeroed": lambda d, o: _apply(zero, one(d / "blocks", "*.blocks")),
    "blocks deleted": lambda d, o: _apply(delete, one(d / "blocks", "*.blocks")),
    "blocks replaced by another index's": lambda d, o: _replace(one(d / "blocks", "*.blocks"), one(o / "blocks", "*.blocks")),
    "blocks shifted by 32 bytes": lambda d, o: _apply(lambda p: p.write_bytes(bytes(32) + p.read_bytes()), one(d / "blocks", "*.blocks")),
    # files/: the file table
    "file table truncated": lambda d, o: _apply(truncate, one(d / "files", "*.parquet")),
    "file table bit flips": lambda d, o: _apply(lambda p: flip_bits(p, 40), one(d / "files", "*.parquet")),
    "file table zeroed": lambda d, o: _apply(zero, one(d / "files", "*.parquet")),
    "file table deleted": lambda d, o: _apply(delete, one(d / "files", "*.parquet")),
    "file table replaced by another index's": lambda d, o: _replace(one(d / "files", "*.parquet"), one(o / "files", "*.parquet")),
    "file table offsets shifted": lambda d, o: _apply(lambda p: rewrite_table(p, shifted), one(d / "files", "*.parquet")),
    # checksum records
    "row checksums changed": lambda d, o: _apply(
        lambda p: rewrite_table(p, checksums_changed("row_checksum")), one(d / "files", "*.parquet")
    ),
    "filter checksums changed": lambda d, o: _apply(
        lambda p: rewrite_table(p, checksums_changed("filter_checksum")), one(d / "files", "*.parquet")
    ),
    "block checksums zeroed": lambda d, o: _apply(_zero_block_checksums, one(d / "blocks", "*.blocks")),
}


def _apply(damage: Callable[[Path], None], path: Path) -> Path:
    damage(path)
    return path


def _replace(path: Path, replacement: Path) -> Path:
    shutil.copyfile(replacement, path)
    return path


def _zero_block_checksums(path: Path) -> None:
    """Every 8-byte checksum after a stripe of block rows zeroed, the blocks themselves intact."""
    table = pq.read_table(path.parent.parent / "files").to_pylist()
    data = bytearray(path.read_bytes())
    assert any(row["blocks_file"] == path.name for row in table)
    for row in table:
        if row["blocks_file"] == path.name:
            for at, length in stripes(row):
                data[at + length : at + length + 8] = bytes(8)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("case", sorted(DATA_CASES))
def test_damaged_data_never_prunes_wrongly_and_is_reported(spark, source, other, expected, copy, case):
    damaged = DATA_CASES[case](data_dir(copy), data_dir(other))
    jvm_class(spark, "index_damage").clear()
    with system_path_at(spark, copy):
        hsbloom.enable(spark)
        assert lookup_rows(spark, source) == expected, case
        hs = Hyperspace(spark)
        result = hs.verify_index(NAME)
        # A deleted part of the file table cannot be named: its directory is, with the files it lacks rows for.
        named = damaged.parent.name if case == "file table deleted" else damaged.name
        assert not result.healthy and any(p.file.endswith(named) for p in result.problems), (case, result)
        assert any(named in d for d in hs.index(NAME).damage), case
        # The way back: force delete and vacuum (then create_index again: test_recovery_rebuilds...).
        hs.delete_index(NAME, force=True)
        hs.vacuum_index(NAME)
        assert not list((copy / NAME).glob("v__=*"))


def test_a_healthy_copy_prunes_and_verifies_clean(spark, source, expected, copy):
    """The baseline the damage cases depart from: the copy prunes to one file and has no problems."""
    jvm_class(spark, "index_damage").clear()
    with system_path_at(spark, copy):
        hsbloom.enable(spark)
        assert lookup_rows(spark, source) == expected
        assert files_read(spark.read.parquet(source).where(F.col("id") == 7)) == 1
        result = Hyperspace(spark).verify_index(NAME)
        assert result.healthy and result.problems == () and result.state == "ACTIVE", result
        assert "healthy" in str(result)
        assert Hyperspace(spark).index(NAME).damage == ()
        assert Hyperspace(spark).indexes().first().damage is None


# --- global filters (joins) -----------------------------------------------------------------

GLOBAL_CASES: dict[str, Callable[[Path, Path], Path]] = {
    "global truncated": lambda d, o: _apply(truncate, one(d / "global", "*.parquet")),
    "global bit flips": lambda d, o: _apply(lambda p: flip_bits(p, 100), one(d / "global", "*.parquet")),
    "global zeroed": lambda d, o: _apply(zero, one(d / "global", "*.parquet")),
    "global deleted": lambda d, o: _apply(delete, one(d / "global", "*.parquet")),
    "global replaced by another index's": lambda d, o: _replace(one(d / "global", "*.parquet"), one(o / "global", "*.parquet")),
    "global chunk checksums changed": lambda d, o: _apply(
        lambda p: rewrite_table(p, checksums_changed("chunk_checksum")), one(d / "global", "*.parquet")
    ),
    "global chunks zeroed, checksums kept": lambda d, o: _apply(
        lambda p: rewrite_table(p, _zero_chunks), one(d / "global", "*.parquet")
    ),
}


def _zero_chunks(table: pa.Table) -> pa.Table:
    i = table.schema.get_field_index("chunk")
    values = pa.array([bytes(len(v)) for v in table.column("chunk").to_pylist()], pa.binary())
    return table.set_column(i, table.schema.field("chunk"), values)


@pytest.fixture(scope="module")
def expected_join(spark, source) -> int:
    hsbloom.disable(spark)
    return join_count(spark, source)


def test_the_join_filter_is_used_on_a_healthy_copy(spark, source, expected_join, copy):
    with system_path_at(spark, copy):
        hsbloom.enable(spark)
        assert join_count(spark, source) == expected_join == NUM_FILES * ROWS_PER_FILE  # asserts the filter is in


@pytest.mark.parametrize("case", sorted(GLOBAL_CASES))
def test_damaged_global_filters_never_drop_joining_rows(spark, source, other, expected_join, copy, case):
    damaged = GLOBAL_CASES[case](data_dir(copy), data_dir(other))
    jvm_class(spark, "index_damage").clear()
    with system_path_at(spark, copy):
        hsbloom.enable(spark)
        assert join_count(spark, source) == expected_join, case
        result = Hyperspace(spark).verify_index(NAME)
        assert not result.healthy and any(damaged.parent.name in p.file for p in result.problems), (case, result)


# --- repair by a full refresh ---------------------------------------------------------------


@pytest.mark.parametrize("found_by", ["a query", "verify_index"])
def test_a_full_refresh_rebuilds_a_damaged_index_whose_source_is_unchanged(spark, source, expected, copy, found_by):
    """Damage found by this process (queries' checksums, verify_index) makes a full refresh rebuild from the
    source, which has not changed; a healthy index is left alone."""
    jvm_class(spark, "index_damage").clear()
    with system_path_at(spark, copy):
        hs = Hyperspace(spark)
        assert not hs.refresh_index(NAME, "full").refreshed  # healthy and unchanged: nothing to do
        damaged = DATA_CASES["blocks zeroed" if found_by == "a query" else "file table offsets shifted"](
            data_dir(copy), None
        )
        hsbloom.enable(spark)
        if found_by == "a query":
            assert lookup_rows(spark, source) == expected  # its checksums find the damage
        else:
            assert not hs.verify_index(NAME).healthy
        assert any(damaged.name in d for d in hs.index(NAME).damage)

        result = hs.refresh_index(NAME, "full")
        assert result.refreshed and result.data_version == 1, result
        assert "previous data was damaged" in result.message and "v__=0" in result.message, result.message
        assert hs.verify_index(NAME).healthy and hs.index(NAME).damage == ()
        assert lookup_rows(spark, source) == expected
        assert files_read(spark.read.parquet(source).where(F.col("id") == 7)) == 1
        assert not hs.refresh_index(NAME, "full").refreshed
        hs.vacuum_index(NAME)  # removes the damaged version
        assert [p.name for p in (copy / NAME).glob("v__=*")] == ["v__=1"]
