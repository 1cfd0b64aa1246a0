"""Adopting Parquet-native Bloom filters: the build takes a file's own SBBFs instead of hashing its values.

Files are written with native filters by Spark (`parquet.bloom.filter.enabled#col`) and by pyarrow
(`bloom_filter_options`). An adopted filter must find every value of its file (checked with the test oracle's
SBBF over the file's values read by pyarrow), and is byte for byte the filter a hashed build makes (folding and
OR-ing row-group filters is exact: docs/design/adoption.md), so pruning is the same; every query gives the same
rows adopted, hashed and with hsbloom off (nulls, NaN, -0.0, unicode and empty strings). Files whose filters
cannot stand for their values are hashed, with the reason in the index's summary: filters on only some row
groups, another physical type than hsbloom hashes, a filter too weak for the target fpp, no null counts.
"""

from __future__ import annotations

import math
import random
from decimal import Decimal
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hsbloom
from hsbloom.explain import files_read
from hsbloom.readers.sbbf import Sbbf
from pruning_support import outcomes
from stored_filters import rows_with_filters

ADOPT = "spark.hsbloom.build.adoptNativeFilters"
STRINGS = ["", "ü", "日本語", "emoji 🎉", "it's", "NULL", "plain"]
DOUBLES = [0.0, -0.0, float("nan"), 1.5, float("inf")]
SCHEMA = "id long, key long, s string, d double"
COLUMNS = ["key", "s", "d"]


def rows(seed: int, n: int) -> list[dict]:
    """`n` rows: `key` mostly distinct, strings and doubles with special values, about 5 % nulls."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        s = None if rng.random() < 0.05 else (rng.choice(STRINGS) if rng.random() < 0.2 else f"s{rng.randint(0, 9000)}é")
        d = None if rng.random() < 0.05 else (rng.choice(DOUBLES) if rng.random() < 0.1 else rng.uniform(-1e6, 1e6))
        out.append({"id": i, "key": None if rng.random() < 0.05 else rng.randint(0, 10**9), "s": s, "d": d})
    return out


def predicates(seed: int, data: list[dict], count: int) -> list[str]:
    """Equality, IN and null predicates on the indexed columns, literals half from the data."""
    rng = random.Random(seed)

    def key() -> int:
        return (rng.choice(data)["key"] or 0) if rng.random() < 0.5 else rng.randint(0, 10**9)

    def text() -> str:
        value = rng.choice(data)["s"] if rng.random() < 0.5 else rng.choice(STRINGS + ["absent"])
        return "'" + (value or "").replace("'", "\\'") + "'"

    def double() -> str:
        value = rng.choice(data)["d"]
        return repr(value) if value is not None and math.isfinite(value) else "2.5"

    leaves = [
        lambda: f"key = {key()}", lambda: f"key IN ({key()}, {key()})", lambda: "key IS NULL",
        lambda: f"s = {text()}", lambda: f"s IN ({text()}, {text()})", lambda: "s IS NULL",
        lambda: "d = 0.0", lambda: "d = -0.0", lambda: "d = double('NaN')", lambda: f"d = {double()}",
        lambda: "d IS NULL", lambda: f"d IN ({double()}, -0.0)",
    ]
    return [rng.choice(leaves)() for _ in range(count)]


def write_spark(spark, directory: Path, data: list[dict], files: int, ndv: int | None, **options: str) -> str:
    """`data` as `files` Parquet files written by Spark, small row groups, with native filters on COLUMNS sized
    for `ndv` values (None: no filters)."""
    writer = spark.createDataFrame(data, SCHEMA).repartition(files, "id").sortWithinPartitions("id").write
    writer = writer.option("parquet.block.size", 16384).option("parquet.enable.dictionary", "false")
    if ndv is not None:
        for c in COLUMNS:
            writer = writer.option(f"parquet.bloom.filter.enabled#{c}", "true")
            writer = writer.option(f"parquet.bloom.filter.expected.ndv#{c}", str(ndv))
    for key, value in options.items():
        writer = writer.option(key, value)
    writer.parquet(str(directory))
    return str(directory)


def build(spark, df, name: str, columns: list[str], adopt: bool = True, fpp: float = 0.01):
    """Index `columns` of `df` (file granularity, no global filter); returns its IndexInfo."""
    hs = hsbloom.Hyperspace(spark)
    spark.conf.set(ADOPT, str(adopt).lower())
    try:
        hs.create_index(df, hsbloom.BFIndexConfig(name, columns, fpp=fpp, global_filter=False))
    finally:
        spark.conf.unset(ADOPT)
    return hs.index(name)


def parquet_files(directory: str) -> list[Path]:
    return sorted(Path(directory).rglob("*.parquet"))


def local(path: str) -> str:
    return path[len("file:"):] if path.startswith("file:") else path


def file_filters(info) -> dict[tuple[str, str], bytes]:
    """The index's file filters by (local source path, column)."""
    out = {}
    for data_path in info.data_paths:
        for row in rows_with_filters(Path(local(data_path))):  # each filter read back from its blocks
            out[(local(row["file_path"]), row["column"])] = row["filter"]
    return out


def assert_every_value_found(info, directory: str, columns: list[str]) -> None:
    """Every non-null value of every source file probes true in that file's filter (the test oracle's SBBF)."""
    filters = file_filters(info)
    for path in parquet_files(directory):
        table = pq.read_table(path, columns=columns)
        for column in columns:
            values = table.column(column).drop_null()
            if len(values):
                found = Sbbf.from_bytes(filters[(str(path), column)]).check(values)
                assert found.all(), f"{path} {column}: {int((~found).sum())} values not found"


def same_rows(spark, directories: list[str], checks: list[str], fmt: str = "parquet") -> None:
    """Each directory (indexed) gives, with hsbloom on, the rows hsbloom off gives over the first."""
    off = outcomes(spark, spark.read.format(fmt).load(directories[0]), checks, enabled=False)
    try:
        for directory in directories:
            on = outcomes(spark, spark.read.format(fmt).load(directory), checks, enabled=True)
            for check, a, b in zip(checks, on, off):
                assert a == b, (directory, check)
    finally:
        hsbloom.disable(spark)


@pytest.fixture(scope="module")
def spark_native(spark, tmp_path_factory):
    """Spark-written files with native filters on key, s, d, several row groups each; an adopted index over
    them and a hashed index over a byte-identical copy. Yields (adopted dir, hashed dir, data, infos)."""
    root = tmp_path_factory.mktemp("adopt_spark")
    data = rows(3, 6000)
    adopted_dir = write_spark(spark, root / "adopted", data, files=4, ndv=2000)
    hashed_dir = str(root / "hashed")
    shutil.copytree(adopted_dir, hashed_dir)
    assert all(pq.ParquetFile(p).num_row_groups >= 3 for p in parquet_files(adopted_dir))
    adopted = build(spark, spark.read.parquet(adopted_dir), "adopt_spark", COLUMNS)
    hashed = build(spark, spark.read.parquet(hashed_dir), "adopt_spark_hashed", COLUMNS, adopt=False)
    yield adopted_dir, hashed_dir, data, adopted, hashed


def test_spark_native_filters_are_adopted_and_reported(spark, spark_native):
    adopted_dir, _, _, adopted, hashed = spark_native
    files = parquet_files(adopted_dir)
    assert adopted.adopted_files == len(files) and adopted.hashed_files == {}
    listed = hsbloom.Hyperspace(spark).adopted_files("adopt_spark")
    assert sorted(local(p) for p in listed) == [str(p) for p in files]
    assert hashed.adopted_files == 0 and hashed.hashed_files == {f"{ADOPT} is false": len(files)}
    assert hsbloom.Hyperspace(spark).adopted_files("adopt_spark_hashed") == []
    # The counts come from the footers: the same as hashing the data counted.
    assert [(c.num_rows, c.num_nulls) for c in adopted.columns] == [(c.num_rows, c.num_nulls) for c in hashed.columns]


def test_adopted_filters_find_every_value_and_equal_the_hashed_ones(spark, spark_native):
    adopted_dir, hashed_dir, _, adopted, hashed = spark_native
    assert_every_value_found(adopted, adopted_dir, COLUMNS)
    # Folding and OR-ing the row groups' filters gives the filter of the file's values: the hashed build's bytes.
    mine, theirs = file_filters(adopted), file_filters(hashed)
    assert len(mine) == len(theirs) == 4 * len(COLUMNS)
    for (path, column), blob in mine.items():
        assert blob == theirs[(path.replace(adopted_dir, hashed_dir), column)], (path, column)


def test_adopted_hashed_and_off_give_the_same_rows_and_pruning(spark, spark_native):
    adopted_dir, hashed_dir, data, _, _ = spark_native
    same_rows(spark, [adopted_dir, hashed_dir], predicates(5, data, 40))
    rng = random.Random(9)
    lookups = [f"key = {rng.choice(data)['key'] or 1}" for _ in range(6)] + [f"key = {-k}" for k in range(1, 7)]
    hsbloom.enable(spark)
    try:
        read = [sum(files_read(spark.read.parquet(d).where(p)) for p in lookups) for d in (adopted_dir, hashed_dir)]
    finally:
        hsbloom.disable(spark)
    assert read[0] <= read[1] and read[0] < 4 * len(lookups)


def test_pyarrow_native_filters_are_adopted(spark, tmp_path):
    directory = tmp_path / "arrow"
    directory.mkdir()
    data = rows(13, 3000)
    schema = pa.schema([("id", pa.int64()), ("key", pa.int64()), ("s", pa.string()), ("d", pa.float64())])
    options = {c: {"ndv": 2000, "fpp": 0.0001} for c in COLUMNS}
    for f in range(3):
        part = pa.Table.from_pylist(data[f * 1000:(f + 1) * 1000], schema=schema)
        pq.write_table(part, directory / f"p{f}.parquet", row_group_size=250, bloom_filter_options=options,
                       use_dictionary=False)
    assert pq.ParquetFile(directory / "p0.parquet").metadata.row_group(0).column(1).bloom_filter_offset is not None
    # pyarrow always folds a row group's filter to that row group's distinct values, so the OR of a file's four
    # holds about 8 bits per key or double (about 2 % fpp: adopted for a target of 5 %, hashed for 1 %), and the
    # strings, which repeat, are folded further (a 13 % union: hashed at 5 % too).
    strict = build(spark, spark.read.parquet(str(directory)), "adopt_arrow_strict", ["key", "d"], fpp=0.01)
    assert strict.adopted_files == 0 and strict.hashed_files == {"native filter weaker than the target fpp": 3}
    strings = build(spark, spark.read.parquet(str(directory)), "adopt_arrow_strings", ["s"], fpp=0.05)
    assert strings.adopted_files == 0
    info = build(spark, spark.read.parquet(str(directory)), "adopt_arrow", ["key", "d"], fpp=0.05)
    assert info.adopted_files == 3, info.hashed_files
    assert_every_value_found(info, str(directory), ["key", "d"])
    for name in ("adopt_arrow_strict", "adopt_arrow_strings"):
        hsbloom.Hyperspace(spark).delete_index(name)
    same_rows(spark, [str(directory)], predicates(17, data, 30))


def test_filters_on_only_some_row_groups_are_not_adopted(spark, tmp_path):
    """Spark writes no filter for a column chunk that is all dictionary-encoded: a file whose first row groups
    repeat a few values and whose last ones do not has filters on some row groups only."""
    data = [{"id": i, "key": i % 3 if i < 3000 else 10**6 + i, "s": "x", "d": 1.0} for i in range(6000)]
    directory = tmp_path / "partial"
    (spark.createDataFrame(data, SCHEMA).coalesce(1).sortWithinPartitions("id").write
     .option("parquet.block.size", 16384).option("parquet.dictionary.page.size", 512)
     .option("parquet.bloom.filter.enabled#key", "true").option("parquet.bloom.filter.expected.ndv#key", "4000")
     .parquet(str(directory)))
    [path] = parquet_files(str(directory))
    metadata = pq.ParquetFile(path).metadata
    has_filter = [metadata.row_group(g).column(1).bloom_filter_offset is not None for g in range(metadata.num_row_groups)]
    assert any(has_filter) and not all(has_filter), has_filter
    info = build(spark, spark.read.parquet(str(directory)), "adopt_partial", ["key"])
    assert info.adopted_files == 0 and info.hashed_files == {"no native filter in every row group": 1}
    same_rows(spark, [str(directory)], ["key = 1", "key = 1003500", "key = 5", "key IS NULL"])


def test_another_physical_type_is_hashed(spark, tmp_path):
    """int32 keys read as long, and decimals stored as bytes: their native filters hold other hashes."""
    directory = tmp_path / "types"
    directory.mkdir()
    n = 2000
    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "key": pa.array([i * 7 for i in range(n)], pa.int32()),
        "amount": pa.array([None if i % 9 == 0 else Decimal(i * 101).scaleb(-2) for i in range(n)], pa.decimal128(12, 2)),
    })
    pq.write_table(table, directory / "t.parquet", row_group_size=500, use_dictionary=False,
                   bloom_filter_options={"key": {"ndv": n, "fpp": 0.001}, "amount": {"ndv": n, "fpp": 0.001}})
    df = spark.read.schema("id long, key long, amount decimal(12,2)").parquet(str(directory))
    info = build(spark, df, "adopt_types", ["key"])
    assert info.adopted_files == 0
    [(why, count)] = info.hashed_files.items()
    assert count == 1
    assert why.startswith("stored as") and "int32" in why.lower() and "bigint" in why, why
    decimals = build(spark, spark.read.parquet(str(directory)), "adopt_decimals", ["amount"])
    assert decimals.adopted_files == 0 and next(iter(decimals.hashed_files)).startswith("stored as")
    checks = ["key = 70", "key = 71", "key IN (0, 13993)", "key IS NULL"]
    for check in checks:
        hsbloom.enable(spark)
        on = sorted(r.id for r in df.where(check).collect())
        hsbloom.disable(spark)
        assert on == sorted(r.id for r in df.where(check).collect()), check


def test_a_weak_native_filter_is_rebuilt_from_the_data(spark, tmp_path):
    data = rows(19, 3000)
    directory = write_spark(spark, tmp_path / "weak", data, files=2, ndv=8)
    info = build(spark, spark.read.parquet(directory), "adopt_weak", COLUMNS)
    assert info.adopted_files == 0 and info.hashed_files == {"native filter weaker than the target fpp": 2}
    same_rows(spark, [directory], predicates(23, data, 20))


def test_files_without_null_counts_are_hashed(spark, tmp_path):
    directory = tmp_path / "nostats"
    directory.mkdir()
    table = pa.table({"id": pa.array(range(1000), pa.int64()), "key": pa.array([i * 3 for i in range(1000)], pa.int64())})
    pq.write_table(table, directory / "n.parquet", write_statistics=False, use_dictionary=False,
                   bloom_filter_options={"key": {"ndv": 1000, "fpp": 0.001}})
    info = build(spark, spark.read.parquet(str(directory)), "adopt_nostats", ["key"])
    assert info.adopted_files == 0 and info.hashed_files == {"no null count in the footer": 1}


def test_delta_with_column_mapping_adopts_by_physical_name(spark, tmp_path):
    directory = str(tmp_path / "delta")
    data = rows(29, 3000)
    settings = {"parquet.bloom.filter.enabled": "true", "parquet.bloom.filter.expected.ndv": "3000",
                "parquet.enable.dictionary": "false", "parquet.block.size": "16384"}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        (spark.createDataFrame(data, SCHEMA).repartition(2, "id").write.format("delta")
         .option("delta.columnMapping.mode", "name").option("delta.minReaderVersion", "2")
         .option("delta.minWriterVersion", "5").save(directory))
    finally:
        for key in settings:
            spark.conf.unset(key)
    spark.sql(f"ALTER TABLE delta.`{directory}` RENAME COLUMN key TO k")
    stored = pq.ParquetFile(parquet_files(directory)[0]).schema_arrow.names
    assert "key" not in stored and "k" not in stored, stored  # the files hold physical names
    info = build(spark, spark.read.format("delta").load(directory), "adopt_delta", ["k", "s"])
    assert info.adopted_files == 2, info.hashed_files
    checks = [p.replace("key", "k") for p in predicates(31, data, 20) if not p.startswith("d")]
    same_rows(spark, [directory], checks, fmt="delta")


def test_an_incremental_refresh_adopts_appended_files_and_keeps_the_count(spark, tmp_path):
    directory = tmp_path / "growing"
    directory.mkdir()

    def add(f: int) -> None:
        table = pa.table({"id": pa.array(range(f * 500, f * 500 + 500), pa.int64()),
                          "key": pa.array([i * 11 for i in range(f * 500, f * 500 + 500)], pa.int64())})
        pq.write_table(table, directory / f"g{f}.parquet", use_dictionary=False,
                       bloom_filter_options={"key": {"ndv": 500, "fpp": 0.001}})

    add(0)
    add(1)
    hs = hsbloom.Hyperspace(spark)
    assert build(spark, spark.read.parquet(str(directory)), "adopt_growing", ["key"]).adopted_files == 2
    add(2)
    hs.refresh_index("adopt_growing", mode="incremental")
    assert hs.index("adopt_growing").adopted_files == 3
    assert [Path(local(p)).name for p in hs.adopted_files("adopt_growing")] == ["g0.parquet", "g1.parquet", "g2.parquet"]
    (directory / "g0.parquet").unlink()
    hs.refresh_index("adopt_growing", mode="incremental")
    assert hs.index("adopt_growing").adopted_files is None  # which deleted files were adopted is not in the log
    assert [Path(local(p)).name for p in hs.adopted_files("adopt_growing")] == ["g1.parquet", "g2.parquet"]
    same_rows(spark, [str(directory)], ["key = 5500", "key = 11", "key = 12", "key IS NULL"])
