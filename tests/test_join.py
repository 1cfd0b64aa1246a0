"""Join acceleration never changes an answer: every join type and key type, rule on vs off.

A fact table (8 files) and a dimension (4 files), both indexed on five key
columns (long, int, string, date, decimal) with global filters. The dimension
holds about a third of the fact's keys; both have nulls and duplicate keys.
Joins are planned as shuffle joins (broadcast off), where hsbloom injects.
"""

from __future__ import annotations

import datetime
import os
import re
from contextlib import contextmanager
import random
from decimal import Decimal

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

import hsbloom
from hsbloom import jar
from hsbloom.explain import run_explained_string
from pruning_support import files_listed, files_read

KEYS = ["l", "i", "s", "d", "dec"]
INDEXED = KEYS + ["il"]
FACT_FILES = 8
DIM_FILES = 4
SCHEMA = T.StructType(
    [
        T.StructField("id", T.LongType()),
        T.StructField("tag", T.StringType()),
        T.StructField("l", T.LongType()),
        T.StructField("i", T.IntegerType()),
        T.StructField("s", T.StringType()),
        T.StructField("d", T.DateType()),
        T.StructField("dec", T.DecimalType(12, 2)),
        T.StructField("il", T.LongType()),  # the int key as a bigint (beyond int range for unmatched keys)
    ]
)
# Spark's join flavours this rule acts on, as DataFrame `how` and SQL.
JOIN_TYPES = {
    "inner": "JOIN",
    "left_semi": "LEFT SEMI JOIN",
    "left_outer": "LEFT OUTER JOIN",
    "right_outer": "RIGHT OUTER JOIN",
}


def key_values(n: int):
    """Column values for key number n (every key column derives from n, so joins on any key agree)."""
    return (
        n * 7_919_000_003,
        n * 37 - 50_000,
        f"key-{n}-ü",
        datetime.date(2000, 1, 1) + datetime.timedelta(days=n),
        Decimal(n * 13).scaleb(-2),
    )


def rows_for(rng: random.Random, keys: list[int], first_id: int, tags: list[str]) -> list[tuple]:
    rows = []
    for offset, n in enumerate(keys):
        values = key_values(n)
        # Some nulls in every key column, independently.
        values = tuple(None if rng.random() < 0.05 else v for v in values)
        wide = values[1] if values[1] is None or n < 3000 else values[1] + 2**40
        rows.append((first_id + offset, rng.choice(tags), *values, wide))
    return rows


def write(spark, rows, files: int, path: str) -> None:
    spark.createDataFrame(rows, SCHEMA).repartition(files, "id").write.parquet(path)


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory, module_system_path):
    rng = random.Random(7)
    base = tmp_path_factory.mktemp("join")
    fact_keys = [rng.randrange(3000) for _ in range(2400)]  # duplicates: 3000 possible keys, 2400 draws
    dim_keys = [rng.randrange(1000) for _ in range(500)] + list(range(3000, 3100))  # ~1/3 of fact's, + unmatched
    fact, dim = str(base / "fact"), str(base / "dim")
    write(spark, rows_for(rng, fact_keys, 0, ["a", "b"]), FACT_FILES, fact)
    write(spark, rows_for(rng, dim_keys, 100_000, ["x"] * 50 + ["y"]), DIM_FILES, dim)
    hs = hsbloom.Hyperspace(spark)
    hs.create_index(spark.read.parquet(fact), hsbloom.BFIndexConfig("join_fact", INDEXED, global_filter=True))
    hs.create_index(spark.read.parquet(dim), hsbloom.BFIndexConfig("join_dim", INDEXED, global_filter=True))
    settings = {"spark.sql.autoBroadcastJoinThreshold": "-1", "spark.sql.shuffle.partitions": "1"}
    previous = {k: spark.conf.get(k) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    yield fact, dim
    for k, v in previous.items():
        spark.conf.set(k, v)
    hsbloom.disable(spark)


def plan_text(df) -> str:
    return jar.java_dataframe(df).queryExecution().executedPlan().toString()


def run(spark, df_builder, enabled: bool):
    (hsbloom.enable if enabled else hsbloom.disable)(spark)
    df = df_builder()
    return sorted((tuple(r) for r in df.collect()), key=repr), plan_text(df)


def dataframe_join(spark, fact, dim, how: str):
    """One query: the join on each key column in turn, with `=` and `<=>`, unioned; rows are
    (key column, operator, fact id, dim id). The fact is the side the join may reduce (the
    dimension's keys are nearly all in the fact, so only the dimension's filter pays)."""

    def build():
        f, d = spark.read.parquet(fact).alias("f"), spark.read.parquet(dim).alias("d")
        parts = []
        for k in KEYS:
            for op in ("=", "<=>"):
                left, right = F.col(f"f.{k}"), F.col(f"d.{k}")
                condition = left.eqNullSafe(right) if op == "<=>" else left == right
                joined = d.join(f, condition, how) if how == "left_outer" else f.join(d, condition, how)
                dim_id = F.lit(None).cast("long") if how == "left_semi" else F.col("d.id")
                parts.append(joined.select(F.lit(k).alias("k"), F.lit(op).alias("op"), F.col("f.id").alias("fid"),
                                           dim_id.alias("did")))
        out = parts[0]
        for p in parts[1:]:
            out = out.unionAll(p)
        return out

    return build


def sql_join(spark, fact, dim, how: str):
    def build():
        spark.read.parquet(fact).createOrReplaceTempView("join_fact")
        spark.read.parquet(dim).createOrReplaceTempView("join_dim")
        dim_id = "CAST(NULL AS BIGINT)" if how == "left_semi" else "d.id"
        sides = "join_dim d {} join_fact f" if how == "left_outer" else "join_fact f {} join_dim d"
        return spark.sql(
            " UNION ALL ".join(
                f"SELECT '{k}' AS k, '{op}' AS op, f.id AS fid, {dim_id} AS did "
                f"FROM {sides.format(JOIN_TYPES[how])} ON f.{k} {op} d.{k}"
                for k in KEYS
                for op in ("=", "<=>")
            )
        )

    return build


@pytest.mark.parametrize("api", ["dataframe", "sql"])
@pytest.mark.parametrize("how", list(JOIN_TYPES))
def test_same_rows_with_and_without_hsbloom(spark, tables, how, api):
    fact, dim = tables
    builder = (dataframe_join if api == "dataframe" else sql_join)(spark, fact, dim, how)
    off, off_plan = run(spark, builder, enabled=False)
    on, on_plan = run(spark, builder, enabled=True)
    assert on == off
    assert "hsbloom_join_filter" not in off_plan
    # Each of these join types has a side hsbloom may reduce whose other side is indexed.
    assert on_plan.count("hsbloom_join_filter") >= len(KEYS) * 2
    # Neither side filters its rows (beyond the IS NOT NULL Spark infers): no build-side key jobs.
    assert "JoinPrunedFileIndex" not in on_plan
    # Null keys join under <=> (each key column has nulls on both sides).
    assert any(r[0] == k and r[1] == "<=>" for r in off for k in KEYS)


def test_keys_of_other_types_convert_exactly(spark, tables):
    """int = bigint both ways: the bigint side's values beyond the int range match nothing."""
    fact, dim = tables

    def build():
        spark.read.parquet(fact).createOrReplaceTempView("join_fact")
        spark.read.parquet(dim).createOrReplaceTempView("join_dim")
        return spark.sql(
            "SELECT 'fi=dil', f.id, d.id FROM join_fact f JOIN join_dim d ON f.i = d.il "
            "UNION ALL SELECT 'fil=di', f.id, d.id FROM join_fact f JOIN join_dim d ON f.il = d.i "
            "UNION ALL SELECT 'fi<=>dil', f.id, d.id FROM join_fact f RIGHT JOIN join_dim d ON f.i <=> d.il"
        )

    off, _ = run(spark, build, enabled=False)
    on, plan = run(spark, build, enabled=True)
    assert on == off
    assert len([r for r in off if r[0] == "fi=dil"]) > 100
    assert "try_cast" in plan.lower() or "TRY" in plan  # the bigint key brought to int exactly, per row
    assert plan.count("hsbloom_join_filter") >= 4


@pytest.fixture(scope="module")
def small_dim(spark, tables, tmp_path_factory):
    """The dimension's first 40 rows in one file: a build side cheap to read again beside the fact
    (the whole dimension is too large a share of the fact for the cost model to read it twice)."""
    _, dim = tables
    path = str(tmp_path_factory.mktemp("join_small") / "dim_small")
    spark.read.parquet(dim).where(F.col("id") < 100_040).coalesce(1).write.parquet(path)
    return path


def test_filtered_build_side_prunes_probe_files(spark, tables, small_dim):
    fact, _ = tables
    dim = small_dim

    def build():
        f, d = spark.read.parquet(fact).alias("f"), spark.read.parquet(dim).alias("d")
        small = d.where(F.col("d.id").isin(100_000, 100_001, 100_002))
        return f.join(small, F.col("f.s") == F.col("d.s")).select("f.id", "d.id")

    off, _ = run(spark, build, enabled=False)
    on, _ = run(spark, build, enabled=True)
    assert on == off and len(off) > 0
    hsbloom.enable(spark)
    read_on = files_read(build())
    hsbloom.disable(spark)
    read_off = files_read(build())
    keys = [r.s for r in spark.read.parquet(dim).where(F.col("id").isin(100_000, 100_001, 100_002)).collect()]
    holding = spark.read.parquet(fact).where(F.col("s").isin(keys)).select(F.input_file_name()).distinct().count()
    # The dimension reads its one file either way; the fact only those that may hold one of the keys.
    assert read_off == FACT_FILES + 1
    assert holding < FACT_FILES - 1
    assert holding <= read_on - 1 <= holding + 1
    text = explain_text(spark, build())
    assert "distinct key(s) from the build side" in text
    assert "files -> " in text
    assert "file pruning of s from the build side's keys: installed" in text


def explain_text(spark, df) -> str:
    from hsbloom.explain import explain_string

    hsbloom.enable(spark)
    try:
        return explain_string(df)
    finally:
        hsbloom.disable(spark)


def test_too_many_build_keys_keep_every_file(spark, tables, small_dim):
    fact, dim = tables[0], small_dim
    spark.conf.set("spark.hsbloom.join.pruning.maxBuildKeys", "2")
    try:
        df = lambda: (  # noqa: E731
            spark.read.parquet(fact).alias("f")
            .join(spark.read.parquet(dim).alias("d").where(F.col("d.id") < 100_010), F.col("f.l") == F.col("d.l"))
            .select("f.id", "d.id")
        )
        off, _ = run(spark, df, enabled=False)
        on, _ = run(spark, df, enabled=True)
        assert on == off
        assert "build side has more than 2 keys" in explain_text(spark, df())
        hsbloom.enable(spark)
        assert files_read(df()) == FACT_FILES + 1
    finally:
        spark.conf.unset("spark.hsbloom.join.pruning.maxBuildKeys")
        hsbloom.disable(spark)


def test_no_injection_when_the_global_filter_is_too_large(spark, tables):
    fact, dim = tables
    spark.conf.set("spark.hsbloom.join.globalFilter.maxBytes", "1024")
    try:
        _, plan = run(spark, dataframe_join(spark, fact, dim, "inner"), enabled=True)
        assert "hsbloom_join_filter" not in plan
    finally:
        spark.conf.unset("spark.hsbloom.join.globalFilter.maxBytes")
        hsbloom.disable(spark)


def test_spark_runtime_bloom_filter_is_not_doubled(spark, tables):
    """Where Spark injects its own runtime Bloom filter on a side, hsbloom does not probe the same key there."""
    fact, dim = tables
    threshold = "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold"
    spark.conf.set(threshold, "1")
    try:
        df = lambda: (  # noqa: E731
            spark.read.parquet(fact).alias("f")
            .join(spark.read.parquet(dim).alias("d").where(F.col("d.tag") == "y"), F.col("f.l") == F.col("d.l"))
            .select("f.id", "d.id")
        )
        off, _ = run(spark, df, enabled=False)
        on, plan = run(spark, df, enabled=True)
        assert on == off
        assert "bloom_filter_agg" in plan or "might_contain" in plan  # Spark's own
        assert "hsbloom_join_filter(f.l" not in plan.replace("`", "")
        spark.conf.set("spark.sql.optimizer.runtime.bloomFilter.enabled", "false")
        _, plan = run(spark, df, enabled=True)
        assert "might_contain" not in plan and "hsbloom_join_filter" in plan
    finally:
        spark.conf.unset(threshold)
        spark.conf.unset("spark.sql.optimizer.runtime.bloomFilter.enabled")
        hsbloom.disable(spark)


def test_no_injection_from_a_relation_with_files_the_index_lacks(spark, tables, tmp_path):
    """A file appended after the build may hold keys the global filter lacks: no injection, and its rows join."""
    fact, _ = tables
    rng = random.Random(3)
    small = str(tmp_path / "dim_appended")
    write(spark, rows_for(rng, list(range(0, 40)), 500_000, ["x"]), 2, small)
    hsbloom.Hyperspace(spark).create_index(spark.read.parquet(small), hsbloom.BFIndexConfig("join_appended", ["l"], global_filter=True))

    def build():
        return (
            spark.read.parquet(fact).alias("f")
            .join(spark.read.parquet(small).alias("d"), F.col("f.l") == F.col("d.l"))
            .select("f.id", "d.id")
        )

    assert "join_appended" in run(spark, build, enabled=True)[1]  # while every file is indexed
    write_mode = spark.createDataFrame(rows_for(rng, list(range(1000, 1400)), 600_000, ["x"]), SCHEMA)
    write_mode.coalesce(1).write.mode("append").parquet(small)

    off, _ = run(spark, build, enabled=False)
    on, plan = run(spark, build, enabled=True)
    assert on == off
    assert any(r[1] >= 600_000 for r in off)  # rows of the appended file join
    assert "join_appended" not in plan
    hsbloom.disable(spark)


def test_explain_shows_a_filter_that_would_not_pay_as_skipped(spark, tables):
    """The dimension's keys are nearly all in the fact, so the fact's filter would keep every
    dimension row: skipped, with the counts it was decided on; the dimension's filter on the fact
    (a third of its keys) is injected."""
    fact, dim = tables

    def build():
        f, d = spark.read.parquet(fact).alias("f"), spark.read.parquet(dim).alias("d")
        return f.join(d, F.col("f.l") == F.col("d.l")).select("f.id", "d.id")

    off, _ = run(spark, build, enabled=False)
    on, plan = run(spark, build, enabled=True)
    assert on == off
    text = explain_text(spark, build())
    considered = text.split("Joins considered")[1]
    skipped = [line for line in considered.splitlines() if "global filter of join_fact.l" in line]
    assert len(skipped) == 1 and ": skipped: " in skipped[0] and "pass" in skipped[0], considered
    assert "global filter of join_dim.l on f.l: injected" in considered.replace("`", "")
    # No build side filters its rows: file pruning is not even considered worth a line's job.
    assert "file pruning of l from the build side's keys: installed" not in considered
    assert "hsbloom_join_filter" in plan


@pytest.fixture(scope="module")
def random_keys(spark, tmp_path_factory, module_system_path):
    """bench/join.py's shape, small: a fact of 20,000 distinct random long keys in 8 files, and a
    dimension (one file) holding every 20th of them, 2 rows per `cat`."""
    base = tmp_path_factory.mktemp("join_random")
    fact, dim = str(base / "fact"), str(base / "dim")
    keys = F.xxhash64(F.col("id"), F.lit("join"))
    spark.range(20_000, numPartitions=8).select(keys.alias("k"), F.col("id").alias("amount")).write.parquet(fact)
    (spark.range(0, 20_000, 20, numPartitions=1)
     .select(keys.alias("k"), ((F.col("id") / 20) % 500).cast("long").alias("cat")).write.parquet(dim))
    hs = hsbloom.Hyperspace(spark)
    hs.create_index(spark.read.parquet(fact), hsbloom.BFIndexConfig("random_fact", ["k"], global_filter=True))
    hs.create_index(spark.read.parquet(dim), hsbloom.BFIndexConfig("random_dim", ["k"], global_filter=True))
    return fact, dim


def test_favourable_shape_gets_both_features(spark, tables, random_keys):
    """Random keys and a selective dimension: the dimension's filter is injected on the fact, and the
    fact lists only the files that may hold the dimension's 2 selected keys."""
    fact, dim = random_keys

    def build():
        d = spark.read.parquet(dim).where(F.col("cat") == 7)
        return spark.read.parquet(fact).join(d, "k").select("k", "amount", "cat")

    off, _ = run(spark, build, enabled=False)
    on, plan = run(spark, build, enabled=True)
    assert on == off and len(off) == 2
    assert "hsbloom_join_filter" in plan and "JoinPrunedFileIndex" in plan
    text = explain_text(spark, build()).replace("`", "")
    considered = text.split("Joins considered")[1]
    assert "global filter of random_dim.k on k: injected" in considered, considered
    assert "file pruning of k from the build side's keys: installed" in considered, considered
    assert "2 distinct key(s) from the build side" in text
    hsbloom.enable(spark)
    try:
        read_on = files_read(build())
    finally:
        hsbloom.disable(spark)
    assert read_on <= 1 + 3  # the dimension's file, and the fact files of 2 keys (+ a false positive)


# Queries whose answer depends on which rows an operator is given, not only on their values: a seeded rand(5) is
# drawn per row of a partition, monotonically_increasing_id() numbers rows by partition and position, a sample draws
# per row. hsbloom prunes, filters and injects nothing below them (each fact file
# is its own partition here, so any file skipped would change the answer). {f}/{d}: the fact and the small dimension.
# (Spark itself refuses a nondeterministic join condition.) The first two are also checked in the explain text.
NONDETERMINISTIC = [
    "SELECT f.id, d.id FROM (SELECT * FROM {f} WHERE rand(5) < 0.5) f JOIN {d} d ON f.s = d.s",
    "SELECT id FROM {f} WHERE s IN ('key-5-ü', 'key-7-ü', 'key-2-ü') AND rand(5) < 0.5",
    "SELECT monotonically_increasing_id(), f.id FROM {f} f JOIN {d} d ON f.i = d.i",
    "SELECT f.mid, d.id FROM (SELECT *, monotonically_increasing_id() AS mid FROM {f}) f JOIN {d} d ON f.l = d.l",
    "SELECT f.id, d.id FROM {f} f JOIN (SELECT * FROM {d} WHERE rand(5) < 0.5) d ON f.d = d.d",
    "SELECT f.id, d.id FROM (SELECT * FROM {f} TABLESAMPLE (50 PERCENT) REPEATABLE (3)) f JOIN {d} d ON f.dec = d.dec",
    "SELECT monotonically_increasing_id(), id FROM {f} WHERE l IN (7919000003, 15838000006, 5)",
]


def test_nothing_is_pruned_below_a_nondeterministic_operator(spark, tables, small_dim):
    fact, _ = tables
    settings = {"spark.hsbloom.join.costModel": "false", "spark.sql.files.openCostInBytes": str(256 << 20)}
    for k, v in settings.items():
        spark.conf.set(k, v)
    spark.read.parquet(fact).createOrReplaceTempView("nd_fact")
    spark.read.parquet(small_dim).createOrReplaceTempView("nd_dim")
    try:
        for n, query in enumerate(NONDETERMINISTIC):
            sql = query.format(f="nd_fact", d="nd_dim")
            off, _ = run(spark, lambda: spark.sql(sql), enabled=False)
            on, _ = run(spark, lambda: spark.sql(sql), enabled=True)
            assert on == off and len(off) > 0, sql
            if n < 2:
                text = explain_text(spark, spark.sql(sql))
                assert "below nondeterministic" in text and ": not pruned" in text, text
    finally:
        for k in settings:
            spark.conf.unset(k)
        hsbloom.disable(spark)


CLUSTERED_FILES = 8


@pytest.fixture(scope="module")
def clustered(spark, tmp_path_factory, module_system_path):
    """Issue #36's shape, small: a fact of 8 files whose keys ascend across files (as time-ordered ids do),
    each key twice, and a one-file dimension whose rows tagged 'x' hold 100 keys in 200-399 (a quarter of the
    fact's files), with duplicate and null keys, -0.0, NaN and the empty string; its other rows hold keys from
    everywhere. The index's fpp is low enough that 100 keys make no false-positive file here."""
    rng = random.Random(36)
    base = tmp_path_factory.mktemp("join_clustered")
    fact, dim = str(base / "fact"), str(base / "dim")

    def double(n):
        return -0.0 if n == 300 else float(n - 300)

    fact_rows = [(n * 2 + c, n, double(n) if c else float(n - 300), f"{n:04d}-ü", f"{rng.getrandbits(128):032x}")
                 for n in range(800) for c in range(2)]
    fact_rows += [(5000, None, None, None, "null keys"), (5001, None, float("nan"), "", "nan and empty")]
    dim_rows = [(n, float(n - 300), f"{n:04d}-ü", "x") for n in range(200, 400, 2)]
    dim_rows += [(n, float(n - 300), f"{n:04d}-ü", "x") for n in range(250, 290, 2)]  # duplicate keys
    dim_rows += [(None, None, None, "x"), (None, -0.0, "", "x"), (310, float("nan"), "", "x")]
    dim_rows += [(n, float(n - 300), f"{n:04d}-ü", "y") for n in range(0, 800, 8)]
    (spark.createDataFrame(fact_rows, "id long, k long, x double, s string, payload string")
     .repartitionByRange(CLUSTERED_FILES, "id").sortWithinPartitions("id").write.parquet(fact))
    spark.createDataFrame(dim_rows, "dk long, dx double, ds string, tag string").coalesce(1).write.parquet(dim)
    hsbloom.Hyperspace(spark).create_index(spark.read.parquet(fact),
                                           hsbloom.BFIndexConfig("join_clustered", ["k", "x", "s"], fpp=0.0001))
    return fact, dim


@contextmanager
def broadcasting(spark, adaptive: bool = True):
    """Broadcast joins on (the module plans shuffle joins), adaptive execution on or off."""
    settings = {"spark.sql.autoBroadcastJoinThreshold": "10MB", "spark.sql.adaptive.enabled": str(adaptive).lower()}
    previous = {k: spark.conf.get(k) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in previous.items():
            spark.conf.set(k, v)
        hsbloom.disable(spark)


def executed(spark, df_builder):
    """Rows (sorted by repr, NaN-safe) and the executed plan's text, after running with hsbloom on."""
    hsbloom.enable(spark)
    df = df_builder()
    rows = sorted((repr(tuple(r)) for r in df.collect()))
    return rows, df, plan_text(df)


def broadcasts(plan: str) -> int:
    """The broadcast exchanges of a plan's text (adaptive: of its final plan), each once, reused ones not counted."""
    final = plan.split("== Initial Plan ==")[0]
    return len({m for line in final.splitlines() if "BroadcastExchange" in line and "ReusedExchange" not in line
                for m in re.findall(r"\[plan_id=(\d+)\]", line)})


def build_sides(spark, fact, dim):
    """Broadcast joins of the fact on each key, the build side a filter, an aggregate and a join, unioned."""

    def build():
        f, d = spark.read.parquet(fact), spark.read.parquet(dim).where("tag = 'x'")
        other = spark.read.parquet(dim).where("tag = 'x'").select(F.col("dk").alias("ok")).distinct()
        aggregate = d.groupBy("ds").agg(F.count("*").alias("n"))
        joined = d.join(other, F.col("dk") == F.col("ok")).select("dk")
        return (f.join(d, f["k"] == d["dk"]).select(F.lit("filter k").alias("on"), "id", F.col("dk").cast("string"))
                .unionByName(f.join(d, f["x"] == d["dx"]).select(F.lit("filter x").alias("on"), "id",
                                                                     F.col("dx").cast("string").alias("dk")))
                .unionByName(f.join(aggregate, f["s"] == aggregate["ds"])
                             .select(F.lit("aggregate s").alias("on"), "id", F.col("n").cast("string").alias("dk")))
                .unionByName(f.join(joined, f["k"] == joined["dk"], "left_semi")
                             .select(F.lit("join k").alias("on"), "id", F.lit(None).cast("string").alias("dk"))))
    return build


@pytest.mark.parametrize("adaptive", [True, False])
def test_broadcast_keys_prune_probe_files_and_the_build_side_runs_once(spark, clustered, adaptive):
    """A broadcast join's own broadcast gives the scan its keys (issue #36): same rows as without hsbloom, the fact
    reads only the files holding a key, and each build side is broadcast once (reused, never read again)."""
    fact, dim = clustered
    build = build_sides(spark, fact, dim)
    with broadcasting(spark, adaptive):
        off, off_plan = run(spark, build, enabled=False)
        rows, df, plan = executed(spark, build)
        assert rows == sorted(repr(r) for r in off) and len(off) > 120
        assert any("'filter x'" in r and "'0.0'" in r for r in rows)
        assert plan.count("SubqueryBroadcast hsbloom_broadcast_keys") == 3, plan  # k, s, k (no double key)
        # As many broadcasts as without hsbloom: the scans' subqueries read the joins' own, never a second one.
        assert broadcasts(plan) == broadcasts(off_plan), plan
        keys = [r.dk for r in spark.read.parquet(dim).where("tag = 'x' AND dk IS NOT NULL").select("dk").collect()]
        holding = (spark.read.parquet(fact).where(F.col("k").isin(keys)).select(F.input_file_name())
                   .distinct().count())
        assert holding <= CLUSTERED_FILES // 4 + 1
        hsbloom.enable(spark)
        one = lambda: spark.read.parquet(fact).join(spark.read.parquet(dim).where("tag = 'x'"), F.expr("k = dk"))  # noqa: E731
        # The dimension's one file too, except without adaptive execution: there the join reads the broadcast the
        # scan's subquery made (a ReusedExchange), whose scan the metrics of the main plan do not reach.
        assert files_read(one()) == holding + (1 if adaptive else 0)
        explained = explain_text(spark, one())
        assert "keys from this join's broadcast, when the probe side is listed at run time" in explained, explained


def test_nondeterministic_operator_above_the_probe_scan_gets_no_broadcast_keys(spark, clustered):
    fact, dim = clustered
    build = lambda: (spark.read.parquet(fact).where(F.rand(3) < 0.99)  # noqa: E731
                     .join(spark.read.parquet(dim).where("tag = 'x'"), F.expr("k = dk")).select("id", "dk"))
    with broadcasting(spark):
        off, _ = run(spark, build, enabled=False)
        rows, df, plan = executed(spark, build)
        assert rows == sorted(repr(r) for r in off)
        assert "hsbloom_broadcast_keys" not in plan
        assert files_read(df) == CLUSTERED_FILES + 1


def fact_files_listed(df, fact: str) -> int:
    """Run `df`; the files its scans of `fact` listed."""
    listed, _ = files_listed(df)
    return sum(len(paths) for paths in listed if paths and all(os.path.dirname(p) == fact for p in paths))


def files_holding(spark, fact: str, keys: list) -> int:
    return spark.read.parquet(fact).where(F.col("k").isin(keys)).select(F.input_file_name()).distinct().count()


@pytest.mark.parametrize("condition", ["x NOT IN (SELECT ox FROM below_other)",
                                       "NOT EXISTS (SELECT 1 FROM below_other WHERE ox = x)",
                                       "x IN (SELECT ox FROM below_other)"])
def test_broadcast_keys_reach_the_scan_through_another_broadcast_join(spark, clustered, condition):
    """TPC-H Q16's shape: Spark puts the subquery's broadcast join (on x: NaN and -0.0 on both sides, nulls in the fact) below the join
    on k, next to the fact's scan. That join makes each row from one fact row and passes k on as it is, so the
    join on k's broadcast still prunes the fact's files: same rows as without hsbloom, and only the files holding
    a key are read."""
    fact, dim = clustered
    spark.read.parquet(fact).createOrReplaceTempView("below_fact")
    spark.read.parquet(dim).where("tag = 'x'").createOrReplaceTempView("below_dim")
    spark.read.parquet(dim).where("tag = 'y' OR ds = ''").select(F.col("dx").alias("ox")) \
        .createOrReplaceTempView("below_other")
    query = f"SELECT id, dk, s, x FROM below_fact JOIN below_dim ON k = dk WHERE {condition}"
    with broadcasting(spark):
        off, _ = run(spark, lambda: spark.sql(query), enabled=False)
        rows, df, plan = executed(spark, lambda: spark.sql(query))
        assert rows == sorted(repr(r) for r in off) and len(off) > 50
        final = plan.split("== Initial Plan ==")[0]
        assert "SubqueryBroadcast hsbloom_broadcast_keys" in final, plan
        # The subquery's join is between the fact's scan and the join on k.
        assert re.search(r"BroadcastHashJoin \[k#\d+L\], \[dk#\d+L\], Inner.*\n.*BroadcastHashJoin", final), plan
        keys = [r.dk for r in spark.read.parquet(dim).where("tag = 'x' AND dk IS NOT NULL").select("dk").collect()]
        hsbloom.enable(spark)
        assert fact_files_listed(spark.sql(query), fact) == files_holding(spark, fact, keys) <= CLUSTERED_FILES // 4 + 1


@pytest.mark.parametrize("spread", [True, False])
def test_a_broadcast_of_many_keys_is_probed_first_with_a_sample(spark, clustered, tmp_path, spread):
    """A broadcast of over 1,024 keys: its first 1,024 are probed alone, and where they keep every file the rest
    are not probed (a superset of keys keeps a superset of files); where they do not, all the keys are probed and
    the files pruned. Same rows as without hsbloom either way; the explain says which happened."""
    fact, _ = clustered
    keys = list(range(800)) + list(range(10_000, 10_400)) if spread else \
        list(range(200, 400)) + list(range(10_000, 11_000))
    many = str(tmp_path / "many")
    spark.createDataFrame([(k,) for k in keys + keys[:50]] + [(None,)], "mk long").coalesce(1).write.parquet(many)
    spark.read.parquet(fact).createOrReplaceTempView("sample_fact")
    spark.read.parquet(many).createOrReplaceTempView("sample_keys")
    query = "SELECT id, mk, s FROM sample_fact JOIN sample_keys ON k = mk"
    with broadcasting(spark):
        off, _ = run(spark, lambda: spark.sql(query), enabled=False)
        rows, _, plan = executed(spark, lambda: spark.sql(query))
        assert rows == sorted(repr(r) for r in off) and len(off) > 300
        assert "SubqueryBroadcast hsbloom_broadcast_keys" in plan, plan
        explained = run_explained_string(spark, query)
        listed = fact_files_listed(spark.sql(query), fact)
    if spread:
        assert listed == CLUSTERED_FILES
        assert f"the first 1024 of its broadcast's {len(keys)} key values" in explained, explained  # the broadcast's keys are distinct
        assert "so the other keys were not probed" in explained, explained
    else:
        assert listed == files_holding(spark, fact, keys) <= CLUSTERED_FILES // 4 + 1
        assert f"run time: {len(keys)} distinct key(s) of its broadcast; the index says {listed} of " \
               f"{CLUSTERED_FILES} files may hold them" in explained, explained
