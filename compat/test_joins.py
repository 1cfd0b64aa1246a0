"""Joins with hsbloom on select the same rows as with it off, and a join whose build side is a filtered scan reads
only the probe side's files that may hold its keys.

A fact table (8 files) and a dimension (2 files), both indexed on their join keys with global filters; keys have
nulls and duplicates, and the dimension holds keys the fact lacks. The join cost model is off, so that each join
feature applies wherever it is correct (docs/joins.md), and joins are shuffle joins, where global filters are
injected.
"""

from __future__ import annotations

from ast import literal_eval

import pytest
from pyspark.sql import functions as F

import hsbloom
from compare import rows_off_and_on
from hsbloom.explain import explain_string, files_read

FACT_FILES, DIM_FILES = 8, 2
KEYS = ["key", "skey", "ikey"]  # bigint, string, int: the same key number in three types
FACT = """
SELECT id, k AS key, concat('k', k, 'ü') AS skey, cast(k AS int) AS ikey
FROM (SELECT id, CASE WHEN id % 53 = 0 THEN NULL ELSE id % 3000 END AS k FROM range(0, 4000, 1, 8))
"""
DIM = """
SELECT 100000 + id AS id, k AS key, concat('k', k, 'ü') AS skey, cast(k AS int) AS ikey,
       CASE WHEN id < 3 THEN 'few' ELSE 'many' END AS tag
FROM (SELECT id, CASE WHEN id % 97 = 1 THEN NULL ELSE id * 7 END AS k FROM range(0, 600, 1, 2))
"""
# The join types hsbloom acts on (each has a side it may reduce).
JOIN_TYPES = ["inner", "left_semi", "left_outer", "right_outer"]


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("joins")
    fact, dim = str(base / "fact"), str(base / "dim")
    spark.sql(FACT).write.parquet(fact)
    spark.sql(DIM).write.parquet(dim)
    hs = hsbloom.Hyperspace(spark)
    hs.create_index(spark.read.parquet(fact), hsbloom.BFIndexConfig("fact_keys", KEYS, global_filter=True))
    hs.create_index(spark.read.parquet(dim), hsbloom.BFIndexConfig("dim_keys", KEYS, global_filter=True))
    return fact, dim


@pytest.fixture(autouse=True)
def shuffle_joins_every_feature_applied(spark):
    """No broadcast, the cost model off, and one task per shuffle (the tables are tiny)."""
    settings = {"spark.hsbloom.join.costModel": "false", "spark.sql.autoBroadcastJoinThreshold": "-1",
                "spark.sql.shuffle.partitions": "1"}  # fmt: skip
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    yield
    for key, value in before.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def every_join(spark, fact: str, dim: str):
    """One query: each join type with `=` and `<=>`, on a bigint, a string, and a bigint key against an int one,
    unioned; rows (the join, fact id, dim id)."""
    f, d = spark.read.parquet(fact).alias("f"), spark.read.parquet(dim).alias("d")
    conditions = [("key", "key", "="), ("skey", "skey", "<=>"), ("key", "ikey", "="), ("ikey", "key", "<=>")]
    parts = []
    for how in JOIN_TYPES:
        for fact_key, dim_key, op in conditions:
            left, right = F.col(f"f.{fact_key}"), F.col(f"d.{dim_key}")
            joined = f.join(d, left.eqNullSafe(right) if op == "<=>" else left == right, how)
            dim_id = F.lit(None).cast("long") if how == "left_semi" else F.col("d.id")
            parts.append(joined.select(F.lit(f"{how} {fact_key} {op} {dim_key}").alias("join"), F.col("f.id"), dim_id))
    union = parts[0]
    for part in parts[1:]:
        union = union.unionAll(part)
    return union


def test_every_join_type_and_key_gives_the_same_rows(spark, tables):
    fact, dim = tables
    off, on = rows_off_and_on(spark, lambda: every_join(spark, fact, dim))
    assert on == off
    joins_with_rows = {literal_eval(row)[0] for row in off}
    assert len(joins_with_rows) == len(JOIN_TYPES) * 4  # every join selects rows
    # Global filters were injected: without them both sides are read and shuffled whole.
    assert "hsbloom_join_filter" in explain_string(every_join(spark, fact, dim))


def test_a_filtered_build_side_prunes_the_fact_files(spark, tables):
    fact, dim = tables

    def join():
        few = spark.read.parquet(dim).alias("d").where("d.tag = 'few'")
        return spark.read.parquet(fact).alias("f").join(few, F.col("f.skey") == F.col("d.skey")).select("f.id", "d.id")

    off, on = rows_off_and_on(spark, join)
    assert on == off and off
    keys = [r.skey for r in spark.read.parquet(dim).where("tag = 'few'").collect() if r.skey is not None]
    holding = spark.read.parquet(fact).where(F.col("skey").isin(keys)).select("_metadata.file_path").distinct().count()
    read_on = files_read(join())
    hsbloom.disable(spark)
    read_off = files_read(join())
    assert read_off == FACT_FILES + DIM_FILES and holding < FACT_FILES
    assert holding + DIM_FILES <= read_on < read_off, (holding, read_on)
    hsbloom.enable(spark)
    assert "file pruning of skey from the build side's keys: installed" in explain_string(join())
