"""Zones (granularity "row_group"): a lookup reads only the row groups that may hold its value, and the rows are
those of hsbloom off, with zones on and with zones off (file-level pruning only).

Spark writes 3 files of 1,000 rows with a small Parquet block size, so each file has several row groups; a key
sits in one row group. Strings and doubles hold nulls, empty and unicode strings, NaN and both zeros.
"""

from __future__ import annotations

import random

import pytest

import hsbloom
from compare import selected_ids
from hsbloom.explain import row_group_counts

ZONES = "spark.hsbloom.zones.enabled"
ROWS = 3000
SPECIAL_STRINGS = ["", "ü", "日本語", "emoji 🎉", "it''s"]  # as SQL text: a quote written twice
SPECIAL_DOUBLES = ["0.0D", "cast('-0.0' AS double)", "double('NaN')", "double('inf')", "1.5D"]
DATA = f"""
SELECT id,
  CASE WHEN id % 41 = 7 THEN NULL ELSE (id * 7919) % {ROWS} END AS key,
  CASE WHEN id % 37 = 3 THEN NULL
       WHEN id % 11 = 0 THEN element_at(array({", ".join(f"'{s}'" for s in SPECIAL_STRINGS)}), int(id % 5) + 1)
       ELSE concat('s', (id * 31) % {ROWS}, 'é') END AS s,
  CASE WHEN id % 43 = 5 THEN NULL
       WHEN id % 13 = 0 THEN element_at(array({", ".join(SPECIAL_DOUBLES)}), int(id % 5) + 1)
       ELSE id * 7.25D END AS d
FROM range(0, {ROWS}, 1, 3)
"""


@pytest.fixture(scope="module")
def zoned(spark, tmp_path_factory) -> str:
    """The files, indexed with zones on all three columns."""
    path = str(tmp_path_factory.mktemp("zones") / "data")
    spark.sql(DATA).write.option("parquet.block.size", 4096).parquet(path)
    config = hsbloom.BFIndexConfig("zoned", ["key", "s", "d"], granularity="row_group")
    hsbloom.Hyperspace(spark).create_index(spark.read.parquet(path), config)
    return path


def random_predicates(seed: int, count: int) -> list[str]:
    """Predicates on the indexed columns (and one that is not), literals mostly of values the data holds."""
    rng = random.Random(seed)
    key = lambda: rng.randrange(ROWS) if rng.random() < 0.8 else rng.randint(ROWS, 2 * ROWS)  # noqa: E731
    text = lambda: f"'s{key()}é'" if rng.random() < 0.7 else f"'{rng.choice(SPECIAL_STRINGS)}'"  # noqa: E731
    double = lambda: (  # noqa: E731
        f"{rng.randrange(ROWS) * 7.25}D" if rng.random() < 0.6 else rng.choice(SPECIAL_DOUBLES))

    def leaf() -> str:
        return rng.choice([
            f"key = {key()}", f"key IN ({key()}, {key()}, {key()})", f"key <=> {key()}", "key IS NULL",
            f"key = '{key()}'", f"NOT (key = {key()})", f"s = {text()}", f"s IN ({text()}, {text()})", "s IS NULL",
            f"d = {double()}", f"d IN ({double()}, -0.0D)", "d IS NULL", f"id < {rng.randrange(100)}",
        ])  # fmt: skip

    return [rng.choice([leaf(), f"({leaf()}) OR ({leaf()})", f"({leaf()}) AND ({leaf()})"]) for _ in range(count)]


def test_zones_select_the_same_rows_as_files_alone_and_as_hsbloom_off(spark, zoned):
    df = spark.read.parquet(zoned)
    predicates = random_predicates(11, 40)
    off = selected_ids(spark, df, predicates, enabled=False)
    with_zones = selected_ids(spark, df, predicates, enabled=True)
    spark.conf.set(ZONES, "false")
    files_only = selected_ids(spark, df, predicates, enabled=True)
    assert [p for p, a, b, c in zip(predicates, off, with_zones, files_only) if not a == b == c] == []
    assert sum(1 for answer in off if answer) >= 20  # most predicates select rows


def test_a_lookup_reads_only_the_row_groups_that_may_hold_its_key(spark, zoned):
    df = spark.read.parquet(zoned)
    lookup = df.where("key = 1234")
    hsbloom.disable(spark)
    expected = [r.id for r in lookup.collect()]
    hsbloom.enable(spark)
    assert [r.id for r in lookup.collect()] == expected and len(expected) == 1
    before, pruned = row_group_counts(lookup)
    # Only the key's file is kept, and of its row groups (several) about one is read.
    assert before >= 4 and before - pruned <= 2, (before, pruned)
    spark.conf.set(ZONES, "false")
    assert row_group_counts(lookup) == (None, None)  # the kept file is read whole
