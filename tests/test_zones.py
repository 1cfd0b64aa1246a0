"""Zones (granularity="row_group"): a scan reads only the row groups that may match, and never other rows.

Every differential test runs the same predicates three ways, zones on, zones off (file-level pruning only,
`spark.hsbloom.zones.enabled=false`) and hsbloom off, over files with many row groups: written by pyarrow
(`row_group_size`), by Spark (a small `parquet.block.size`), and a Delta table with deletion vectors. The
values include nulls, NaN, -0.0 and 0.0, empty and unicode strings. Other tests show that zones do read fewer
row groups (the scan's own row count with Parquet's filter pushdown off), and that a damaged zone table or a
file rewritten since the build is read whole.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import hsbloom
from hsbloom import jar
from hsbloom.errors import InvalidConfigError
from hsbloom.explain import explain_string, row_group_counts
from pruning_support import join_on_and_off, outcomes

ZONES = "spark.hsbloom.zones.enabled"
FILES, GROUPS, GROUP_ROWS = 3, 8, 250
STRINGS = ["", "ü", "日本語", "emoji 🎉", "it's", "NULL", "plain"]
DOUBLES = [0.0, -0.0, float("nan"), 1.5, float("inf")]


def rows(seed: int, n: int) -> list[dict]:
    """`n` rows: `key` a permutation (a key sits in one row group), strings and doubles with special values."""
    rng = random.Random(seed)
    keys = list(range(n))
    rng.shuffle(keys)
    out = []
    for i in range(n):
        s = None if rng.random() < 0.05 else (rng.choice(STRINGS) if rng.random() < 0.2 else f"s{rng.randint(0, 4000)}é")
        d = None if rng.random() < 0.05 else (rng.choice(DOUBLES) if rng.random() < 0.1 else rng.uniform(-1e6, 1e6))
        out.append({"id": i, "key": None if rng.random() < 0.02 else keys[i], "s": s, "d": d})
    return out


def predicates(seed: int, data: list[dict], count: int) -> list[str]:
    """Random predicates on the indexed columns (and one that is not), literals half from the data."""
    rng = random.Random(seed)

    def key() -> int:
        return rng.choice(data)["key"] or 0 if rng.random() < 0.6 else rng.randint(-10, len(data) + 10)

    def text() -> str:
        value = rng.choice(data)["s"] if rng.random() < 0.6 else rng.choice(STRINGS + ["absent"])
        return "'" + (value or "").replace("'", "\\'") + "'"

    def double() -> str:
        value = rng.choice(data)["d"]
        return repr(value) if value is not None and math.isfinite(value) else "2.5"

    def leaf() -> str:
        return rng.choice([
            f"key = {key()}", f"key IN ({key()}, {key()}, {key()})", f"key <=> {key()}", "key IS NULL",
            f"s = {text()}", f"s IN ({text()}, {text()})", "s IS NULL", f"s <=> {text()}",
            "d = 0.0", "d = -0.0", "d = double('NaN')", "d IS NULL", "d = double('inf')",
            f"d = {double()}", f"d IN ({double()}, -0.0)", f"NOT (key = {key()})", f"id < {rng.randint(0, 50)}",
        ])

    return [rng.choice([leaf(), leaf(), f"({leaf()}) OR ({leaf()})", f"({leaf()}) AND ({leaf()})"])
            for _ in range(count)]


def three_ways(spark, df, checks: list[str]) -> None:
    """The same rows with zones on, zones off and hsbloom off."""
    try:
        spark.conf.set(ZONES, "true")
        zones = outcomes(spark, df, checks, enabled=True)
        spark.conf.set(ZONES, "false")
        files = outcomes(spark, df, checks, enabled=True)
    finally:
        spark.conf.unset(ZONES)
    off = outcomes(spark, df, checks, enabled=False)
    for check, z, f, o in zip(checks, zones, files, off):
        assert z == o, check
        assert f == o, check


def index(spark, df, name: str, columns: list[str], granularity: str = "row_group", fpp: float = 0.01) -> str:
    hs = hsbloom.Hyperspace(spark)
    hs.create_index(df, hsbloom.BFIndexConfig(name, columns, fpp=fpp, global_filter=False, granularity=granularity))
    return hs.index(name).data_path


def row_groups(directory: str) -> list[int]:
    """Row groups per Parquet file under `directory`."""
    return [pq.ParquetFile(p).num_row_groups for p in sorted(Path(directory).rglob("*.parquet"))]


@pytest.fixture(scope="module")
def arrow_files(spark, tmp_path_factory):
    """Files written by pyarrow, 8 row groups each, indexed with zones. Yields (directory, rows)."""
    directory = tmp_path_factory.mktemp("zones_arrow") / "data"
    directory.mkdir()
    data = rows(7, FILES * GROUPS * GROUP_ROWS)
    schema = pa.schema([("id", pa.int64()), ("key", pa.int64()), ("s", pa.string()), ("d", pa.float64())])
    per_file = GROUPS * GROUP_ROWS
    for f in range(FILES):
        table = pa.Table.from_pylist(data[f * per_file:(f + 1) * per_file], schema=schema)
        pq.write_table(table, directory / f"part-{f}.parquet", row_group_size=GROUP_ROWS)
    assert row_groups(str(directory)) == [GROUPS] * FILES
    index(spark, spark.read.parquet(str(directory)), "zones_arrow", ["key", "s", "d"], fpp=0.001)
    yield str(directory), data
    hsbloom.disable(spark)


def test_zones_give_the_same_rows_on_files_written_by_pyarrow(spark, arrow_files):
    directory, data = arrow_files
    three_ways(spark, spark.read.parquet(directory), predicates(11, data, 40))


def test_zones_read_only_the_row_groups_that_may_match(spark, arrow_files):
    """With Parquet's own row-group filters off, the scan's row count is exactly the rows of the row groups read."""
    directory, data = arrow_files
    key = next(r["key"] for r in data[3 * GROUP_ROWS + 7:] if r["key"] is not None)
    query = lambda: spark.read.parquet(directory).where(f"key = {key}")  # noqa: E731
    explain = jar.jar_class(spark, "pruning_explain")

    def scanned() -> int:
        df = query().select("*")
        df.collect()
        return int(explain.rowsScanned(jar.java_dataframe(df).queryExecution().executedPlan()))

    spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    try:
        hsbloom.enable(spark)
        before, pruned = row_group_counts(query())
        assert before == GROUPS and 0 < pruned <= GROUPS - 1
        assert scanned() == (before - pruned) * GROUP_ROWS
        assert [r.id for r in query().select("id").collect()] == [r["id"] for r in data if r["key"] == key]
        assert f"row groups of files with zones: {GROUPS} -> {before - pruned}" in explain_string(query())
        spark.conf.set(ZONES, "false")
        assert scanned() == GROUPS * GROUP_ROWS  # the one kept file, whole
        assert row_group_counts(query()) == (None, None)
        hsbloom.disable(spark)
        assert scanned() == FILES * GROUPS * GROUP_ROWS
    finally:
        spark.conf.unset(ZONES)
        spark.conf.unset("spark.sql.parquet.filterPushdown")
        hsbloom.disable(spark)


def test_zones_give_the_same_rows_on_files_written_by_spark(spark, tmp_path):
    directory = str(tmp_path / "spark")
    data = rows(23, 3000)
    df = spark.createDataFrame(data, "id long, key long, s string, d double").repartition(3, "id")
    df.write.option("parquet.block.size", 4096).parquet(directory)
    assert min(row_groups(directory)) > 4
    index(spark, spark.read.parquet(directory), "zones_spark", ["key", "s", "d"])
    three_ways(spark, spark.read.parquet(directory), predicates(29, data, 24))
    hsbloom.enable(spark)
    key = next(r["key"] for r in data if r["key"] is not None)
    before, pruned = row_group_counts(spark.read.parquet(directory).where(f"key = {key}"))
    assert before >= 5 and pruned >= before - 2
    hsbloom.disable(spark)


def test_zones_give_the_same_rows_on_delta_with_deletion_vectors(spark, tmp_path):
    directory = str(tmp_path / "delta")
    data = rows(41, 2000)
    spark.conf.set("parquet.block.size", "4096")
    try:
        spark.createDataFrame(data, "id long, key long, s string, d double").repartition(2, "id").write.format(
            "delta").option("delta.enableDeletionVectors", "true").save(directory)
    finally:
        spark.conf.unset("parquet.block.size")
    assert min(row_groups(directory)) > 4
    spark.sql(f"DELETE FROM delta.`{directory}` WHERE id % 5 = 0")
    history = spark.sql(f"DESCRIBE HISTORY delta.`{directory}`").select("operationMetrics").first()[0]
    assert int(history.get("numDeletionVectorsAdded", "0")) > 0, history
    read = lambda: spark.read.format("delta").load(directory)  # noqa: E731
    index(spark, read(), "zones_delta", ["key", "s"])
    checks = predicates(43, data, 8) + [f"key = {r['key']}" for r in data[:40:8] if r["key"] is not None]
    three_ways(spark, read(), checks)
    hsbloom.enable(spark)
    deleted = next(r["key"] for r in data if r["id"] % 5 == 0 and r["key"] is not None)
    assert read().where(f"key = {deleted}").count() == 0  # deleted rows stay deleted in a row group's split
    kept = next(r["key"] for r in data if r["id"] % 5 != 0 and r["key"] is not None)
    before, pruned = row_group_counts(read().where(f"key = {kept}"))
    assert before > 4 and pruned >= before - 2  # Delta scans read row groups too
    hsbloom.disable(spark)


def test_a_rewritten_file_and_a_damaged_zone_are_read_whole(spark, tmp_path):
    directory = tmp_path / "changing"
    directory.mkdir()
    data = rows(53, 2 * GROUPS * GROUP_ROWS)
    schema = pa.schema([("id", pa.int64()), ("key", pa.int64()), ("s", pa.string()), ("d", pa.float64())])
    for f in range(2):
        part = data[f * GROUPS * GROUP_ROWS:(f + 1) * GROUPS * GROUP_ROWS]
        pq.write_table(pa.Table.from_pylist(part, schema=schema), directory / f"p{f}.parquet", row_group_size=GROUP_ROWS)
    data_path = index(spark, spark.read.parquet(str(directory)), "zones_changing", ["key"])
    # Rewritten with its row groups in another order: the index's byte ranges no longer hold those rows.
    first = data[:GROUPS * GROUP_ROWS]
    moved = first[GROUP_ROWS:] + first[:GROUP_ROWS]
    pq.write_table(pa.Table.from_pylist(moved, schema=schema), directory / "p0.parquet", row_group_size=GROUP_ROWS + 1)
    checks = [f"key = {r['key']}" for r in first[::97] if r["key"] is not None]
    three_ways(spark, spark.read.parquet(str(directory)), checks)
    # Every zone's byte range shifted by one (its checksums left as they were): no zone is used, same answers.
    parts = list((Path(data_path.replace("file:", "")) / "zones").glob("*.parquet"))
    assert parts
    for part in parts:
        table = pq.read_table(part)
        shifted = pa.compute.add(table.column("zone_start"), 1)
        table = table.set_column(table.schema.get_field_index("zone_start"), "zone_start", shifted)
        pq.write_table(table, part)
    jar.jar_class(spark, "index_catalog").invalidateAll()
    checks = [f"key = {r['key']}" for r in data[GROUPS * GROUP_ROWS::89] if r["key"] is not None]
    three_ways(spark, spark.read.parquet(str(directory)), checks)
    damage = hsbloom.Hyperspace(spark).index("zones_changing").damage  # "<file>: <problem>"
    assert any("/zones/" in problem.split(": ", 1)[0] for problem in damage), damage


def test_zones_need_a_parquet_or_delta_source(spark, tmp_path):
    """The granularity's values, and how the log keeps them, are the jar's rules (BFIndexConfigSuite, LogJsonSuite)."""
    csv = str(tmp_path / "csv")
    spark.range(10).select(F.col("id").cast("string").alias("a")).write.option("header", True).csv(csv)
    with pytest.raises(InvalidConfigError, match="Parquet or Delta"):
        index(spark, spark.read.option("header", True).csv(csv), "zones_csv", ["a"])


def test_join_pruning_from_build_side_keys_uses_zones(spark, arrow_files, tmp_path):
    directory, data = arrow_files
    wanted = [r["key"] for r in data[5::1500] if r["key"] is not None]
    with join_on_and_off(spark, directory, wanted, str(tmp_path / "dim")) as (join, off, on):
        assert on == off and len(off) == len(wanted)
        assert "row groups of files with zones" in explain_string(join())
        before, pruned = row_group_counts(join())
        assert before is not None and pruned >= before - 2 * len(wanted)
