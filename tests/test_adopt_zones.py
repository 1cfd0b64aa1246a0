"""Adopting Parquet-native Bloom filters as zone filters (`granularity="row_group"`).

Each row group's native SBBF becomes its zone's filter, made exactly as the zone build makes it from the data
(docs/design/adoption.md#zones), so an adopted zone filter finds every value of its row group (the test
oracle's SBBF over the row group's values read by pyarrow) and is byte for byte the hashed zone filter. Every
query gives the same rows with zones adopted, zones hashed, file granularity and hsbloom off (nulls, NaN,
-0.0, unicode). Files written by Spark and by pyarrow, several row groups each; files whose row-group filters
are too small are hashed; tables with and without native filters mix.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hsbloom import settings

import hsbloom
from hsbloom.explain import row_group_counts
from hsbloom.readers.sbbf import Sbbf
from pruning_support import join_on_and_off, outcomes
from stored_filters import rows_with_filters
from test_adopt import COLUMNS, local, parquet_files, predicates, rows, write_spark

ADOPT = settings.BUILD_ADOPT_NATIVE_FILTERS
ROW_GROUP_SIZED = settings.BUILD_ADOPT_ROW_GROUP_SIZED_FILTERS
ZONES = "spark.hsbloom.zones.enabled"


def build(spark, df, name: str, columns: list[str], adopt: bool = True, row_group_sized: bool = False,
          fpp: float = 0.01):
    """Index `columns` of `df` with zones (no global filter); returns its IndexInfo."""
    hs = hsbloom.Hyperspace(spark)
    spark.conf.set(ADOPT, str(adopt).lower())
    spark.conf.set(ROW_GROUP_SIZED, str(row_group_sized).lower())
    try:
        hs.create_index(df, hsbloom.BFIndexConfig(name, columns, fpp=fpp, global_filter=False,
                                                  granularity="row_group"))
    finally:
        spark.conf.unset(ADOPT)
        spark.conf.unset(ROW_GROUP_SIZED)
    return hs.index(name)


def zone_filters(info) -> dict[tuple[str, int, str], dict]:
    """The index's zone rows (each with its filter) by (local source path, row group, column)."""
    out = {}
    for data_path in info.data_paths:
        for row in rows_with_filters(Path(local(data_path)), "zones"):
            out[(local(row["file_path"]), row["row_group"], row["column"])] = row
    return out


def assert_every_value_found_in_its_zone(info, directory: str, columns: list[str]) -> None:
    """Every non-null value of every row group probes true in that row group's zone filter."""
    zones = zone_filters(info)
    for path in parquet_files(directory):
        parquet = pq.ParquetFile(path)
        for g in range(parquet.num_row_groups):
            table = parquet.read_row_group(g, columns=columns)
            for column in columns:
                zone = zones[(str(path), g, column)]
                assert (zone["num_rows"], zone["num_nulls"]) == (table.num_rows, table.column(column).null_count)
                values = table.column(column).drop_null()
                if len(values):
                    found = Sbbf.from_bytes(zone["filter"]).check(values)
                    assert found.all(), f"{path} row group {g} {column}: {int((~found).sum())} values not found"


def same_rows_four_ways(spark, directories: list[str], checks: list[str]) -> None:
    """Each directory (indexed with zones) gives, with zones on and off, the rows hsbloom off gives."""
    off = outcomes(spark, spark.read.parquet(directories[0]), checks, enabled=False)
    try:
        for directory in directories:
            for zones in ("true", "false"):
                spark.conf.set(ZONES, zones)
                on = outcomes(spark, spark.read.parquet(directory), checks, enabled=True)
                for check, a, b in zip(checks, on, off):
                    assert a == b, (directory, zones, check)
    finally:
        spark.conf.unset(ZONES)
        hsbloom.disable(spark)


@pytest.fixture(scope="module")
def spark_zones(spark, tmp_path_factory):
    """Spark-written files with native filters on key, s, d sized for a file (so their OR meets the target
    too), several row groups each; a zone index adopting them and one hashing a byte-identical copy."""
    root = tmp_path_factory.mktemp("adopt_zones")
    data = rows(41, 6000)
    adopted_dir = write_spark(spark, root / "adopted", data, files=4, ndv=2000)
    hashed_dir = str(root / "hashed")
    shutil.copytree(adopted_dir, hashed_dir)
    assert all(pq.ParquetFile(p).num_row_groups >= 3 for p in parquet_files(adopted_dir))
    adopted = build(spark, spark.read.parquet(adopted_dir), "adopt_zones", COLUMNS)
    hashed = build(spark, spark.read.parquet(hashed_dir), "adopt_zones_hashed", COLUMNS, adopt=False)
    yield adopted_dir, hashed_dir, data, adopted, hashed


def test_zone_filters_are_adopted_find_every_value_and_equal_the_hashed_ones(spark, spark_zones):
    adopted_dir, hashed_dir, _, adopted, hashed = spark_zones
    files = parquet_files(adopted_dir)
    assert adopted.adopted_files == len(files) and adopted.hashed_files == {}
    assert sorted(local(p) for p in hsbloom.Hyperspace(spark).adopted_files("adopt_zones")) == [str(p) for p in files]
    assert_every_value_found_in_its_zone(adopted, adopted_dir, COLUMNS)
    mine, theirs = zone_filters(adopted), zone_filters(hashed)
    assert len(mine) == len(theirs) == sum(pq.ParquetFile(p).num_row_groups for p in files) * len(COLUMNS)
    for (path, group, column), row in mine.items():
        other = theirs[(path.replace(adopted_dir, hashed_dir), group, column)]
        assert row["filter"] == other["filter"], (path, group, column)
        for field in ("num_rows", "num_nulls", "zone_start", "zone_length", "row_groups"):
            assert row[field] == other[field], (path, group, column, field)


def test_zones_adopted_hashed_and_off_give_the_same_rows_and_row_groups(spark, spark_zones):
    adopted_dir, hashed_dir, data, _, _ = spark_zones
    same_rows_four_ways(spark, [adopted_dir, hashed_dir], predicates(43, data, 40))
    rng = random.Random(47)
    lookups = [f"key = {rng.choice(data)['key'] or 1}" for _ in range(6)] + [f"s = 's{rng.randint(0, 9000)}é'"]
    hsbloom.enable(spark)
    try:
        for lookup in lookups:
            counts = [row_group_counts(spark.read.parquet(d).where(lookup)) for d in (adopted_dir, hashed_dir)]
            assert counts[0] == counts[1], (lookup, counts)
    finally:
        hsbloom.disable(spark)


def test_row_group_sized_filters_are_hashed_unless_allowed(spark, tmp_path):
    """Filters sized for a row group make good zone filters, but their OR over a file is too full to be the
    file's filter: hashed by default, adopted (the OR as a weak file filter, zones deciding) when allowed."""
    data = rows(53, 6000)
    directory = write_spark(spark, tmp_path / "rg", data, files=2, ndv=1000)
    groups = [pq.ParquetFile(p).num_row_groups for p in parquet_files(directory)]
    assert min(groups) >= 4, groups
    strict = build(spark, spark.read.parquet(directory), "adopt_zones_strict", ["key"])
    assert strict.adopted_files == 0 and strict.hashed_files == {"row-group filters' OR weaker than the target fpp": 2}
    hsbloom.Hyperspace(spark).delete_index("adopt_zones_strict")
    info = build(spark, spark.read.parquet(directory), "adopt_zones_rg", ["key"], row_group_sized=True)
    assert info.adopted_files == 2, info.hashed_files
    assert_every_value_found_in_its_zone(info, directory, ["key"])
    checks = [p for p in predicates(59, data, 40) if p.startswith("key")] + ["key = -1", "key IN (-1, -2)"]
    same_rows_four_ways(spark, [directory], checks)
    # Absent keys: the weak file filters let some files through, and the zones prune their row groups.
    hsbloom.enable(spark)
    try:
        counts = [row_group_counts(spark.read.parquet(directory).where(f"key = {-k}")) for k in range(1, 31)]
    finally:
        hsbloom.disable(spark)
    kept = sum(before or 0 for before, _ in counts)
    read = sum((before or 0) - (pruned or 0) for before, pruned in counts)
    assert kept > 0 and read <= 2, counts
    assert_join_prunes_row_groups(spark, directory, [r["key"] for r in data[7::1500] if r["key"] is not None],
                                  tmp_path / "dim")


def assert_join_prunes_row_groups(spark, directory: str, wanted: list[int], dim: Path) -> None:
    """A join whose build side holds `wanted` keys (and an absent one) gives the rows it gives with hsbloom off,
    and its probe side reads only row groups that may hold a build key."""
    with join_on_and_off(spark, directory, wanted, str(dim)) as (join, off, on):
        assert on == off and len(off) >= len(wanted)
        before, pruned = row_group_counts(join())
        assert before is not None and pruned is not None and before - pruned <= 2 * len(wanted), (before, pruned)


def test_under_sized_native_zone_filters_are_hashed(spark, tmp_path):
    data = rows(61, 4000)
    directory = write_spark(spark, tmp_path / "small", data, files=2, ndv=8)
    info = build(spark, spark.read.parquet(directory), "adopt_zones_small", COLUMNS, row_group_sized=True)
    assert info.adopted_files == 0 and info.hashed_files == {"native filter weaker than the zone fpp": 2}
    same_rows_four_ways(spark, [directory], predicates(67, data, 20))


def test_pyarrow_zone_filters_and_a_mixed_table(spark, tmp_path):
    """pyarrow folds each row group's filter to its distinct values: adopted as zones with row-group-sized
    filters allowed; beside them files without native filters (hashed), and one with too weak filters."""
    directory = tmp_path / "mixed"
    directory.mkdir()
    data = rows(71, 4000)
    schema = pa.schema([("id", pa.int64()), ("key", pa.int64()), ("s", pa.string()), ("d", pa.float64())])
    strong = {c: {"ndv": 2000, "fpp": 0.0001} for c in ("key", "d")}
    for f in range(4):
        part = pa.Table.from_pylist(data[f * 1000:(f + 1) * 1000], schema=schema)
        options = strong if f < 2 else ({"key": {"ndv": 4, "fpp": 0.5}, "d": {"ndv": 4, "fpp": 0.5}} if f == 2 else None)
        kwargs = {"bloom_filter_options": options} if options else {}
        pq.write_table(part, directory / f"p{f}.parquet", row_group_size=250, use_dictionary=False, **kwargs)
    assert pq.ParquetFile(directory / "p0.parquet").metadata.row_group(0).column(1).bloom_filter_offset is not None
    info = build(spark, spark.read.parquet(str(directory)), "adopt_zones_arrow", ["key", "d"], row_group_sized=True)
    assert info.adopted_files == 2, info.hashed_files
    assert sum(info.hashed_files.values()) == 2, info.hashed_files
    assert sorted(Path(local(p)).name for p in hsbloom.Hyperspace(spark).adopted_files("adopt_zones_arrow")) == \
        ["p0.parquet", "p1.parquet"]
    assert_every_value_found_in_its_zone(info, str(directory), ["key", "d"])
    checks = [p for p in predicates(73, data, 40) if not p.startswith("s")] + ["d = double('NaN')", "d = -0.0"]
    same_rows_four_ways(spark, [str(directory)], checks)
