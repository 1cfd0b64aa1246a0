"""The pruned listing (answered for all files at once, docs/design/scale.md) is exactly the file-by-file answer.

The file-by-file answer is computed here from the index's stored rows and filters, read back from the documented
layout (`stored_filters`) and probed with the Python SBBF oracle: a file is kept unless its filter cannot hold
any probed value, or its null count rules out IS NULL. Files changed or added after the index was built must be
kept (read), whatever their filters said.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.types import LongType, StringType

import hsbloom
from hsbloom import jar
from hsbloom.readers.parquet_hash import hash_scalar
from hsbloom.readers.sbbf import Sbbf
from pruning_support import create_index
from stored_filters import rows_with_filters

FILES = 40
STRINGS = ["", "ä", "日本", "x", "y", "z"]


def write_file(path: Path, f: int, extra: list[int] = ()) -> None:
    ks = [None if (f * 7 + r) % 13 == 0 else f * 100 + r for r in range(8)] + list(extra)
    ss = [None if (f + r) % 9 == 0 else STRINGS[(f + r) % len(STRINGS)] + str(f % 4) for r in range(len(ks))]
    ids = [f * 1000 + r for r in range(len(ks))]
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "k": pa.array(ks, pa.int64()),
                             "s": pa.array(ss, pa.string())}), path)


def listed_names(df) -> set[str]:
    """The names of the files the pruned scan of `df` lists (its file index asked with the scan's filters)."""
    plan = jar.java_dataframe(df).queryExecution().executedPlan()
    leaves = plan.collectLeaves()
    names: set[str] = set()
    for i in range(leaves.size()):
        scan = leaves.apply(i)
        dirs = scan.relation().location().listFiles(scan.partitionFilters(), scan.dataFilters())
        for d in range(dirs.size()):
            files = dirs.apply(d).files()
            for j in range(files.size()):
                names.add(files.apply(j).getPath().getName())
    return names


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    """A table of FILES files indexed on k and s at a high fpp (so false positives occur), then one file
    rewritten (it now holds k = 500, which its filter lacks) and one added: both must be read."""
    root = tmp_path_factory.mktemp("slots") / "t"
    root.mkdir()
    for f in range(FILES):
        write_file(root / f"part-{f:03d}.parquet", f)
    data_path = create_index(spark, str(root), "slot_pruning", ["k", "s"], fpp=0.3)
    changed = root / "part-003.parquet"
    write_file(changed, 3, extra=[500, 501])
    os.utime(changed, (1_900_000_000, 1_900_000_000))
    write_file(root / "part-999.parquet", 999, extra=[500])
    rows = rows_with_filters(Path(data_path.removeprefix("file:")))
    return root, rows


def per_file(rows: list[dict], name: str, check: Callable) -> bool:
    """The file-by-file answer for file `name` (True: keep)."""
    mine = {r["column"]: r for r in rows if Path(r["file_path"]).name == name}

    def probe(column: str, values: list, spark_type) -> bool:
        row = mine.get(column)
        if row is None or not row["filter"]:
            return True
        hashes = np.array([hash_scalar(v, spark_type) for v in values], dtype=np.uint64)
        return bool(Sbbf.from_bytes(row["filter"]).check_hashes(hashes).any())

    def nulls(column: str) -> bool:
        row = mine.get(column)
        return row is None or row["num_nulls"] > 0

    return check(lambda c, vs: probe(c, vs, LongType() if c == "k" else StringType()), nulls)


PREDICATES = [
    ("k = 500", lambda p, n: p("k", [500])),
    ("k = 1203", lambda p, n: p("k", [1203])),
    ("k IN (5, 1203, 2207, 999999)", lambda p, n: p("k", [5, 1203, 2207, 999999])),
    ("k IS NULL", lambda p, n: n("k")),
    ("k <=> NULL", lambda p, n: n("k")),
    ("s = ''", lambda p, n: p("s", [""])),  # no stored string is empty: kept only by a false positive
    ("s = 'ä1'", lambda p, n: p("s", ["ä1"])),
    ("s = '日本2' OR k = 3305", lambda p, n: p("s", ["日本2"]) or p("k", [3305])),
    ("k = 1203 AND s IS NULL", lambda p, n: p("k", [1203]) and n("s")),
    ("(k = 7 OR k IS NULL) AND (s = 'x3' OR s IS NULL)",
     lambda p, n: (p("k", [7]) or n("k")) and (p("s", ["x3"]) or n("s"))),
]


@pytest.mark.parametrize("predicate,check", PREDICATES, ids=[p for p, _ in PREDICATES])
def test_pruned_listing_is_the_per_file_answer(spark, table, predicate, check):
    root, rows = table
    hsbloom.enable(spark)
    try:
        df = spark.read.parquet(str(root)).where(predicate)
        listed = listed_names(df)
        # The same DataFrame's listing again: its slots are reused, and the answer is the same.
        assert listed_names(df) == listed
        on = sorted(r.id for r in df.collect())
    finally:
        hsbloom.disable(spark)
    off = sorted(r.id for r in spark.read.parquet(str(root)).where(predicate).collect())
    assert on == off
    names = sorted(p.name for p in root.glob("part-*.parquet"))
    stale = {"part-003.parquet", "part-999.parquet"}
    expected = {n for n in names if n in stale or per_file(rows, n, check)}
    assert listed == expected
    assert stale <= listed


def test_a_listing_of_few_indexed_files_is_answered_file_by_file(spark, tmp_path):
    """One partition of 16 lists 1/16 of the indexed files: answered file by file (the same answer), as the
    explain line says; the whole table is answered for all files at once."""
    from pyspark.sql import functions as F

    from hsbloom.explain import explain_string

    directory = str(tmp_path / "parts")
    spark.range(0, 3200, numPartitions=4).select(F.col("id").alias("key"), (F.col("id") % 16).alias("part")) \
        .write.partitionBy("part").parquet(directory)
    create_index(spark, directory, "slot_parts", ["key"])
    one = lambda: spark.read.parquet(directory).where((F.col("key") == 1603) & (F.col("part") == 3))  # noqa: E731
    whole = lambda: spark.read.parquet(directory).where(F.col("key").isin(1603, 77))  # noqa: E731
    hsbloom.enable(spark)
    try:
        assert "file by file: few of the indexed files listed" in explain_string(one())
        assert "all indexed files at once" in explain_string(whole())
        on = (sorted(r.key for r in one().collect()), sorted(r.key for r in whole().collect()))
        assert listed_names(one()) <= listed_names(whole())
        assert len(listed_names(one())) == 1 and len(listed_names(whole())) == 2
    finally:
        hsbloom.disable(spark)
    assert on == ([1603], [77, 1603])
