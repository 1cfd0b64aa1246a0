"""hsbloom.readers: an index built by the jar, used without Spark by pyarrow, DuckDB and Polars (#35).

One small partitioned table (files written by Spark and by pyarrow: longs, ints, unicode and empty strings,
doubles with NaN and -0.0, dates, decimals, nulls) and one Delta table are indexed once for the module. Random
predicates are answered by the reader; every file holding a matching row must be kept, each reader returns
the same rows over the kept files as over all files, and the Spark rule reads as many files on the same index.
Staleness, deletion vectors, time travel and damage are tested on the same tables. A third, zoned index (three
pyarrow-written files of four row groups) checks that pyarrow reads only the row groups that may match.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
import random
import shutil
import warnings
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from pruning_support import files_listed

import hsbloom
from hsbloom.errors import InvalidArgumentError
from hsbloom.readers import IndexDamageWarning, UnusableIndexWarning, and_, eq, is_null, isin, open_index, or_
from hsbloom.readers import sources
from hsbloom.readers.adapters import file_list, pyarrow_dataset
from hsbloom.readers.predicates import And, Eq, In, IsNull, Or

SCHEMA = pa.schema([
    ("id", pa.int64()), ("k", pa.int32()), ("s", pa.string()), ("d", pa.float64()),
    ("day", pa.date32()), ("amount", pa.decimal128(10, 2)),
])
INDEXED = ["id", "k", "s", "d", "day", "amount"]
DDL = "id bigint, k int, s string, d double, day date, amount decimal(10,2)"
STRINGS = ["", "a", "ß", "日本", "emoji 🎉", "x'y", "A"]
DOUBLES = [0.0, -0.0, 1.5, float("nan"), -2.25, 1e300]


def _rows(rng: random.Random, n: int, first: int) -> list:
    def maybe(v):
        return None if rng.random() < 0.1 else v
    return [{
        "id": first + i,
        "k": maybe(rng.randrange(-50, 50)),
        "s": maybe(rng.choice(STRINGS) + str(rng.randrange(20))),
        "d": maybe(rng.choice(DOUBLES)),
        "day": maybe(dt.date(2020, 1, 1) + dt.timedelta(days=rng.randrange(40))),
        "amount": maybe(decimal.Decimal(rng.randrange(-500, 500)).scaleb(-2)),
    } for i in range(n)]


@pytest.fixture(scope="module")
def tables(spark, module_system_path, tmp_path_factory):
    """(parquet root, its index path, delta root, its index path): built once for the module."""
    rng = random.Random(35)
    base = tmp_path_factory.mktemp("readers")
    parquet = str(base / "pq")
    rows = _rows(rng, 120, 0)
    for r in rows:
        r["p"] = r["id"] % 3
    spark.createDataFrame(pa.Table.from_pylist(rows, SCHEMA.append(pa.field("p", pa.int64()))).to_pandas(),
                          DDL + ", p bigint").repartition(2).write.partitionBy("p").parquet(parquet)
    for n in range(4):  # pyarrow-written files in the same partitions
        part = _rows(rng, 25, 1000 + 25 * n)
        pq.write_table(pa.Table.from_pylist(part, SCHEMA), f"{parquet}/p={n % 3}/pyarrow-{n}.parquet")
    delta = str(base / "delta")
    spark.createDataFrame(pa.Table.from_pylist(_rows(rng, 90, 5000), SCHEMA).to_pandas(), DDL).repartition(3) \
        .write.format("delta").option("delta.enableDeletionVectors", "true").save(delta)
    hs = hsbloom.Hyperspace(spark)
    hs.create_index(spark.read.parquet(parquet), hsbloom.BFIndexConfig("readers_pq", INDEXED))
    hs.create_index(spark.read.format("delta").load(delta), hsbloom.BFIndexConfig("readers_delta", ["id", "s", "d"]))
    return parquet, str(module_system_path / "readers_pq"), delta, str(module_system_path / "readers_delta")


def _random_predicate(rng: random.Random, values: dict, depth: int = 0):
    column = rng.choice(sorted(values))
    pool = values[column] + [None]
    kind = rng.random()
    if depth < 2 and kind < 0.25:
        children = [_random_predicate(rng, values, depth + 1) for _ in range(rng.randrange(2, 4))]
        return (and_ if rng.random() < 0.5 else or_)(*children)
    if kind < 0.35:
        return is_null(column)
    if kind < 0.6:
        return isin(column, rng.sample(pool, min(len(pool), rng.randrange(1, 5))))
    return eq(column, rng.choice(pool))


def _sql_value(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, float):
        return f"CAST('{'NaN' if math.isnan(v) else repr(v)}' AS DOUBLE)"
    if isinstance(v, dt.date):
        return f"DATE '{v.isoformat()}'"
    if isinstance(v, decimal.Decimal):
        return f"CAST('{v}' AS DECIMAL(10,2))"
    return str(v)


def _sql(p) -> str:
    if isinstance(p, (And, Or)):
        return "(" + (" AND " if isinstance(p, And) else " OR ").join(_sql(c) for c in p.children) + ")"
    if isinstance(p, IsNull):
        return f"{p.column} IS NULL"
    if isinstance(p, Eq):
        return f"{p.column} = {_sql_value(p.value)}"
    return f"{p.column} IN ({', '.join(_sql_value(v) for v in p.values)})"


def _polars(p):
    if isinstance(p, (And, Or)):
        exprs = [_polars(c) for c in p.children]
        out = exprs[0]
        for e in exprs[1:]:
            out = (out & e) if isinstance(p, And) else (out | e)
        return out
    if isinstance(p, IsNull):
        return pl.col(p.column).is_null()
    values = [p.value] if isinstance(p, Eq) else list(p.values)
    # SQL: a NULL in the list matches nothing (and `= NULL` nothing at all).
    matches = [pl.col(p.column) == pl.lit(v) for v in values if v is not None]
    out = pl.lit(False)
    for m in matches:
        out = out | m.fill_null(False)
    return out


def _arrow(p):
    import pyarrow.compute as pc
    if isinstance(p, (And, Or)):
        exprs = [_arrow(c) for c in p.children]
        out = exprs[0]
        for e in exprs[1:]:
            out = (out & e) if isinstance(p, And) else (out | e)
        return out
    field = pc.field(p.column)
    if isinstance(p, IsNull):
        return field.is_null()
    values = [p.value] if isinstance(p, Eq) else list(p.values)
    out = pc.scalar(False)
    for v in values:
        if v is not None:
            out = out | (field == pc.scalar(pa.scalar(v, SCHEMA.field(p.column).type))).fill_null(False) \
                if hasattr(pc.Expression, "fill_null") else out | pc.if_else(field == v, True, False)
    return out


def _duckdb_ids(files: list, where: str) -> list:
    if not files:
        return []
    listing = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
    return sorted(r[0] for r in duckdb.sql(
        f"SELECT id FROM read_parquet({listing}, hive_partitioning=true, union_by_name=true) WHERE {where}").fetchall())


def _ids_with_files(files: list, where: str) -> dict:
    listing = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
    rows = duckdb.sql(f"SELECT DISTINCT filename FROM read_parquet({listing}, hive_partitioning=true, "
                      f"filename=true, union_by_name=true) WHERE {where}").fetchall()
    return {r[0] for r in rows}


def _values(parquet: str) -> dict:
    table = pq.ParquetDataset(parquet).read()
    values = {}
    for c in INDEXED:
        seen = [v for v in table.column(c).to_pylist() if v is not None]
        values[c] = seen[:20] + {"id": [10**12], "k": [2**40, 7.0, 7.5, True], "s": ["absent", "日本"],
                                 "d": [0.0, -0.0, float("nan"), 7], "day": [dt.date(1999, 1, 1)],
                                 "amount": [decimal.Decimal("0.001"), decimal.Decimal("1.50"), 3]}[c]
    return values


def test_random_predicates_keep_every_matching_file_and_give_the_same_rows(tables):
    parquet, index_path, _, _ = tables
    index = open_index(index_path)
    assert index.unusable is None and index.damage == []
    rng = random.Random(3535)
    values = _values(parquet)
    skipped_any = False
    for _ in range(40):
        predicate = _random_predicate(rng, values)
        pruned = index.prune(predicate)
        everything = pruned.files + pruned.skipped
        where = _sql(predicate)
        assert _ids_with_files(everything, where) <= set(pruned.files), where
        assert _duckdb_ids(pruned.files, where) == _duckdb_ids(everything, where), where
        expr = _polars(predicate)
        on = pl.scan_parquet(pruned.files, hive_partitioning=True).filter(expr).select("id").collect() \
            if pruned.files else pl.DataFrame({"id": []})
        off = pl.scan_parquet(everything, hive_partitioning=True).filter(expr).select("id").collect()
        assert sorted(on["id"].to_list()) == sorted(off["id"].to_list()), where
        arrow_on = pyarrow_dataset(pruned).to_table(filter=_arrow(predicate), columns=["id"])["id"].to_pylist()
        arrow_off = pa.dataset.dataset(everything, format="parquet", partitioning="hive",
                                       partition_base_dir=parquet).to_table(filter=_arrow(predicate), columns=["id"])
        assert sorted(arrow_on) == sorted(arrow_off["id"].to_pylist()), where
        skipped_any |= bool(pruned.skipped)
    assert skipped_any


def _spark_kept(spark, df, predicates: list, enabled: bool = True) -> tuple:
    """The files the Spark rule keeps for each predicate (hsbloom on; off: Spark's listing alone), from one query:
    a union of one filtered scan per predicate, each scan's own listing (`files_listed`); and each scan's hsbloom
    metrics."""
    union = None
    for p in predicates:
        part = df.where(_sql(p)).select("id")
        union = part if union is None else union.unionAll(part)
    (hsbloom.enable if enabled else hsbloom.disable)(spark)
    try:
        kept, plan = files_listed(union)
    finally:
        hsbloom.disable(spark)
    assert len(kept) == len(predicates)
    return kept, plan


# Long, int, unicode and empty strings, doubles with NaN and -0.0, dates, decimals; IN, IS NULL, AND, OR.
SAME_AS_SPARK = [eq("id", 17), isin("s", ["", "a1", "日本3", "emoji 🎉5", "absent"]), eq("s", ""), is_null("day"),
                 isin("d", [-0.0, 1.5]), eq("d", float("nan")), eq("k", -7), is_null("amount"),
                 and_(eq("day", dt.date(2020, 1, 5)), eq("k", 3)), or_(eq("id", 1001), eq("s", "ß7")),
                 or_(eq("id", 1001), eq("day", dt.date(2020, 1, 5))), and_(eq("d", -0.0), eq("k", 3))]


def test_the_files_kept_are_the_files_the_spark_rule_reads(spark, tables):
    """Hive-partitioned Parquet (files written by Spark and by pyarrow): the same set of paths, predicate by
    predicate (the flat directory and Delta cases are in the zone and Delta tests)."""
    parquet, index_path, _, _ = tables
    index = open_index(index_path)
    # By design the reader keeps more for a condition on a partition column: Spark prunes partitions before
    # hsbloom looks; the reader leaves partition filters to the reader it hands the files to (docs/design/readers.md).
    more = [eq("p", 1), and_(eq("p", 1), eq("id", 17))]
    kept, _ = _spark_kept(spark, spark.read.parquet(parquet), SAME_AS_SPARK + more)
    pruned = [index.prune(p) for p in SAME_AS_SPARK + more]
    for predicate, ours, theirs in zip(SAME_AS_SPARK, pruned, kept):
        assert set(ours.files) == theirs, str(predicate)
    for predicate, ours, theirs in zip(more, pruned[len(SAME_AS_SPARK):], kept[len(SAME_AS_SPARK):]):
        assert set(ours.files) > theirs and all("/p=1/" in f for f in theirs), str(predicate)
    assert any(p.skipped for p in pruned) and any(not p.skipped for p in pruned)


def test_inexact_literals_and_unindexed_columns_keep_every_file_and_impossible_ones_none(tables):
    """The rules of tests/vectors/exact_literals.json (test_exact_literals.py) on a real index: a literal some
    reader compares inexactly keeps every file; one no column value can equal keeps none."""
    parquet, index_path, _, _ = tables
    index = open_index(index_path)
    for predicate in [eq("k", True), eq("d", float("nan")), eq("id", 2.0**53), eq("s", b"a1"),
                      eq("day", dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)), eq("p", 1),
                      or_(eq("id", 17), eq("p", 1))]:
        pruned = index.prune(predicate)
        assert pruned.skipped == [], str(predicate)
    for predicate in [eq("k", 7.5), eq("k", 2**40), eq("amount", decimal.Decimal("0.001")), eq("id", None),
                      eq("day", dt.datetime(2020, 1, 1, 5))]:
        assert index.prune(predicate).files == [], str(predicate)
    assert any("not indexed" in r for r in index.prune(eq("p", 1)).reasons)


def test_new_changed_and_deleted_files_are_kept_or_gone(tables, tmp_path):
    parquet, index_path, _, _ = tables
    index = open_index(index_path)
    before = index.prune(eq("id", 17))
    moved = tmp_path / "pq"
    shutil.copytree(parquet, moved)  # a copy: every file is new to the index (its paths differ)
    copy = index.prune(eq("id", 17), root=str(moved))
    assert copy.skipped == [] and len(copy.files) == before.total
    # Appended, rewritten (same path, other content) and deleted files in the indexed table itself.
    victim, removed = before.skipped[0], before.skipped[1]
    saved = pq.read_table(victim)
    try:
        pq.write_table(pa.Table.from_pylist(_rows(random.Random(1), 3, 17), SCHEMA), victim)
        Path(removed).rename(str(tmp_path / "removed.parquet"))
        appended = f"{parquet}/p=2/appended.parquet"
        pq.write_table(pa.Table.from_pylist(_rows(random.Random(2), 3, 17), SCHEMA), appended)
        after = index.prune(eq("id", 17))
        assert victim in after.files and appended in after.files and removed not in after.files + after.skipped
        assert any("new or changed" in r for r in after.reasons)
        everything = after.files + after.skipped
        assert _duckdb_ids(after.files, "id = 17") == _duckdb_ids(everything, "id = 17") == [17, 17, 17]
    finally:
        Path(appended).unlink()
        Path(str(tmp_path / "removed.parquet")).rename(removed)
        pq.write_table(saved, victim)


def test_the_listing_sees_a_new_mtime_skips_hidden_names_and_reuses_only_within_listing_ttl(tables):
    """The one-call listing: a file rewritten with the same size but another mtime is read; names Spark hides
    (`.x`, `_temporary/`, `._COPYING_`) are not listed, a `_k=v` directory is; listing_ttl reuses a listing."""
    parquet, index_path, _, _ = tables
    index, cached = open_index(index_path), open_index(index_path, listing_ttl=3600)
    victim = index.prune(eq("id", 17)).skipped[0]
    assert victim in cached.prune(eq("id", 17)).skipped  # listed now: kept for the next hour
    stat = os.stat(victim)
    hidden = [f"{parquet}/p=1/.hidden.parquet", f"{parquet}/_temporary/0/part.parquet", f"{parquet}/p=1/x._COPYING_"]
    partition = f"{parquet}/_q=1/extra.parquet"
    try:
        os.utime(victim, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))  # same size, another mtime
        for path in hidden + [partition]:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.Table.from_pylist(_rows(random.Random(3), 2, 17), SCHEMA), path)
        after = index.prune(eq("id", 17))
        assert victim in after.files and partition in after.files
        assert not set(hidden) & set(after.files + after.skipped)
        # The local listing (scandir, hidden names dropped before any stat) lists what the general one does.
        parent, name = os.path.split(parquet)
        general = sources.list_parquet(name, pafs.SubTreeFileSystem(parent, pafs.LocalFileSystem()))
        local = sources.list_parquet(parquet)
        assert [(f.path[len(parent) + 1:], f.size, f.mtime) for f in local.files] == \
            [(f.path, f.size, f.mtime) for f in general.files]
        stale = cached.prune(eq("id", 17))  # within listing_ttl: the earlier listing, as documented
        assert victim in stale.skipped and partition not in stale.files and any("reused" in r for r in stale.reasons)
    finally:
        os.utime(victim, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        for path in hidden + [partition]:
            Path(path).unlink()
        shutil.rmtree(f"{parquet}/_temporary")
        Path(partition).parent.rmdir()
    with pytest.raises(InvalidArgumentError, match="listing_ttl"):
        open_index(index_path, listing_ttl=-1)


def test_a_damaged_index_keeps_the_files_it_covers_and_warns(tables, tmp_path):
    parquet, index_path, _, _ = tables
    damaged = tmp_path / "readers_pq"
    shutil.copytree(index_path, damaged)
    for blocks in (damaged / "v__=0" / "blocks").iterdir():
        if blocks.suffix == ".blocks":
            data = bytearray(blocks.read_bytes())
            data[:64] = bytes(64)  # cleared bits: without checksums, files would be skipped wrongly
            blocks.write_bytes(bytes(data))
    with pytest.warns(IndexDamageWarning):
        index = open_index(str(damaged))
        pruned = index.prune(isin("id", list(range(0, 3000, 7))))
    truth = _ids_with_files(pruned.files + pruned.skipped, "id % 7 = 0 AND id < 3000")
    assert truth <= set(pruned.files) and index.damage
    newest = sorted((damaged / "_hsbloom_log").glob("*.json"))[-1]
    newest.write_text('{"log_format": 1, "id": -1}')  # skipped (it may be mid-write): the one before is CREATING
    with pytest.warns(UnusableIndexWarning, match="no stable entry"):
        broken = open_index(str(damaged))
    with pytest.warns(UnusableIndexWarning):  # the table from the CREATING entry: every file of it is read
        kept = broken.prune(eq("id", 17))
    assert kept.skipped == [] and kept.total == len(pruned.files + pruned.skipped)
    assert "index not used" in kept.reasons[0]


def test_delta_appends_deletion_vectors_and_time_travel(spark, tables):
    _, _, delta, index_path = tables
    index = open_index(index_path)
    v0 = index.prune(eq("id", 5017))
    assert len(v0.files) == 1 and v0.total == 3
    spark.sql(f"DELETE FROM delta.`{delta}` WHERE id = 5018")
    with pytest.raises(InvalidArgumentError, match="deletion vectors"):
        file_list(index.prune(eq("id", 5017)))  # plain Parquet readers would return the deleted row
    spark.createDataFrame(pa.Table.from_pylist(_rows(random.Random(5), 5, 5017), SCHEMA).to_pandas(), DDL) \
        .coalesce(1).write.format("delta").mode("append").save(delta)
    now = index.prune(eq("id", 5017))
    truth = {r[0] for r in spark.read.format("delta").load(delta).where("id = 5017")
             .selectExpr("input_file_name()").collect()}
    assert len(truth) == 2 and {Path(t.replace("file://", "")).name for t in truth} <= {Path(f).name for f in now.files}
    assert now.total == 4 and len(now.files) == 2
    then = index.prune(eq("id", 5017), delta_version=0)
    assert then.total == 3 and file_list(then) == v0.files
    # The same files as the Spark rule, on the stale table with a deletion vector. Spark's Delta listing first
    # skips files by Delta's statistics, which the reader does not read (and Delta cannot list a table with
    # deletion vectors with that skipping off): the rule keeps the reader's files that Delta's listing keeps.
    checks = [or_(eq("id", 5001), isin("s", ["", "日本3", "absent"])), and_(eq("d", -0.0), eq("id", 5020)),
              and_(eq("d", float("nan")), eq("id", 5017)), or_(is_null("d"), eq("s", "ß7"))]
    table = spark.read.format("delta").load(delta)
    kept, _ = _spark_kept(spark, table, checks)
    listed, _ = _spark_kept(spark, table, checks, enabled=False)
    for predicate, theirs, by_delta in zip(checks, kept, listed):
        ours = set(index.prune(predicate).files)
        assert ours & by_delta == theirs and ours >= theirs, str(predicate)
    assert any(theirs < by_delta for theirs, by_delta in zip(kept, listed))


ZONED_SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string()), ("d", pa.float64())])


@pytest.fixture(scope="module")
def zoned(spark, module_system_path, tmp_path_factory):
    """(root, index path): three pyarrow-written files of four row groups (15 rows each), one zoned index build."""
    rng = random.Random(3535)
    root = tmp_path_factory.mktemp("readers_zoned")
    for n in range(3):
        rows = [{k: r[k] for k in ("id", "s", "d")} for r in _rows(rng, 60, 60 * n)]
        pq.write_table(pa.Table.from_pylist(rows, ZONED_SCHEMA), f"{root}/part-{n}.parquet", row_group_size=15)
    hsbloom.Hyperspace(spark).create_index(
        spark.read.parquet(str(root)),
        hsbloom.BFIndexConfig("readers_zoned", ["id", "s", "d"], global_filter=False, granularity="row_group"))
    return str(root), str(module_system_path / "readers_zoned")


def _zoned_ids(dataset, predicate) -> list:
    return sorted(dataset.to_table(filter=_arrow(predicate), columns=["id"])["id"].to_pylist())


def test_zones_read_only_the_row_groups_that_may_match_and_give_the_same_rows(zoned):
    root, index_path = zoned
    index = open_index(index_path)
    assert index.unusable is None and index.damage == []
    one = index.prune(eq("id", 77))  # row group 1 of part-1 (ids 60..119, 15 a row group)
    assert [Path(f).name for f in one.files] == ["part-1.parquet"]
    assert list(one.row_groups.values()) == [[1]] and "row groups of kept files with zones: 4 -> 1" in one.explain()
    assert _zoned_ids(pyarrow_dataset(one), eq("id", 77)) == [77]
    assert file_list(one) == one.files  # DuckDB and Polars read kept files whole
    table = pq.ParquetDataset(root).read()
    values = {c: [v for v in table.column(c).to_pylist() if v is not None][:20] for c in ("id", "s", "d")}
    values["id"] += [10**12, 7.0]
    values["s"] += ["", "absent", "日本"]
    values["d"] += [0.0, -0.0, float("nan"), 7]
    rng = random.Random(35035)
    restricted = 0
    everything = pa.dataset.dataset(root, format="parquet")
    for _ in range(40):
        predicate = _random_predicate(rng, values)
        pruned = index.prune(predicate)
        assert _zoned_ids(pyarrow_dataset(pruned), predicate) == _zoned_ids(everything, predicate), str(predicate)
        restricted += len(pruned.row_groups)
    assert restricted > 0


def test_the_files_and_row_groups_kept_are_the_ones_the_spark_rule_reads(spark, zoned):
    """A flat directory with zones: the same files, and as many row groups, as the Spark rule. A long IN probes
    each file's zones with only the values the file's filter may hold, as the jar does (`narrowedTo`)."""
    root, index_path = zoned
    index = open_index(index_path)
    # IN lists of thousands of absent values: unnarrowed, their zone false positives kept more row groups and files.
    checks = [eq("id", 77), eq("d", -0.0), is_null("s"), isin("id", [77] + list(range(10**6, 10**6 + 3000))),
              isin("s", ["ß4"] + [f"x{i}" for i in range(1000)]), isin("s", ["", "日本3", "emoji 🎉5", "absent"]),
              eq("d", float("nan")), or_(eq("id", 5), and_(eq("s", "ß4"), eq("d", 1.5)))]
    kept, metrics = _spark_kept(spark, spark.read.parquet(root), checks)
    for predicate, theirs, m in zip(checks, kept, metrics):
        pruned = index.prune(predicate)
        assert set(pruned.files) == theirs, str(predicate)[:200]
        # Row groups read: the scan's own before/pruned counts (before: of the files its file filters kept),
        # or, where it pruned no row group, every row group (four) of each file read.
        spark_read = (m["hsbloomRowGroupsBefore"] - m["hsbloomRowGroupsPruned"] if "hsbloomRowGroupsPruned" in m
                      else 4 * len(theirs))
        assert sum(len(pruned.row_groups.get(f, range(4))) for f in pruned.files) == spark_read, str(predicate)[:200]
    assert any("hsbloomRowGroupsPruned" in m for m in metrics)


def test_damaged_zones_keep_their_file_whole(zoned, tmp_path):
    root, index_path = zoned
    damaged = tmp_path / "readers_zoned"
    shutil.copytree(index_path, damaged)
    for part in (damaged / "v__=0" / "zones").glob("*.parquet"):
        rows = pq.read_table(part)
        checksums = rows.column("zone_checksum").to_pylist()
        checksums[0] ^= 1  # one zone row of one file fails its checksum
        pq.write_table(rows.set_column(rows.schema.get_field_index("zone_checksum"), "zone_checksum",
                                       pa.array(checksums, pa.int64())), part)
        victim = rows.column("file_path")[0].as_py()
        break
    with pytest.warns(IndexDamageWarning, match="zone table"):
        index = open_index(str(damaged))
    victim_name = victim.rsplit("/", 1)[-1]
    holder = 60 * int(victim_name.split("-")[1].split(".")[0]) + 17
    pruned = index.prune(eq("id", holder))
    assert [Path(f).name for f in pruned.files] == [victim_name] and pruned.row_groups == {}
    assert _zoned_ids(pyarrow_dataset(pruned), eq("id", holder)) == [holder]
