"""Equi-joins of a large fact table to a dimension, Spark's defaults vs the same with hsbloom.

    ./dev.sh bench join [--rows N] [--files N] [--dim-rows N] [--clustered-rows N] [--repeat N]

The fact table (--rows rows in --files Parquet files) has a random long key,
every value distinct; the dimension (--dim-rows rows) holds a tenth of the
fact's keys, so it is far too large for Spark to broadcast. Both are indexed
on the key (with global filters). Two queries, each an aggregate over the join
so that only the join is measured:

(a) fact JOIN dimension (unfiltered): hsbloom drops the nine tenths of fact
    rows that cannot join before the shuffle, with the dimension's global filter;
(b) fact JOIN dimension filtered to about 20 keys: hsbloom also lists only the
    fact files whose filters may hold one of those keys;
(c) the clustered shape: a second fact (--clustered-rows rows in 80 files, keys
    in ascending ranges, as time-ordered ids are) joined to a dimension filtered
    to 40 keys that sit in 20 of the 80 files (a quarter). Beside it, its limit:
    the same join over only the fact files that hold the keys, with hsbloom off.

Spark runs with its defaults (adaptive execution, its own runtime Bloom
filter on); "hsbloom" is the same session with hsbloom enabled. Runs
alternate between the two, median of --repeat. Goal: 2x in both cases.
"""

from __future__ import annotations

import argparse
import statistics
import time

from common import DATA, session
from pyspark.sql import functions as F

import hsbloom
from hsbloom.errors import IndexExistsError
from hsbloom.explain import explain_string, files_read


def fact_table(spark, rows: int, files: int) -> str:
    path = DATA / f"join_fact_{rows}_{files}"
    if not (path / "_SUCCESS").exists():
        print(f"generating the fact table: {rows:,} rows in {files} files at {path} ...", flush=True)
        (
            spark.range(rows, numPartitions=files)
            .select(
                F.xxhash64(F.col("id"), F.lit("join")).alias("k"),
                (F.rand(3) * 1000).alias("amount"),
                (F.col("id") % 1000).cast("int").alias("store"),
            )
            .write.mode("overwrite")
            .parquet(str(path))
        )
    return str(path)


def dim_table(spark, rows: int, fact_rows: int) -> str:
    """Every tenth fact key (ids 0, 10, 20, ...), `cat` = row number mod rows/20 (so a `cat` has 20 rows)."""
    path = DATA / f"join_dim_{rows}_{fact_rows}"
    if not (path / "_SUCCESS").exists():
        print(f"generating the dimension: {rows:,} rows at {path} ...", flush=True)
        (
            spark.range(rows, numPartitions=max(1, rows // 500_000))
            .select(
                F.xxhash64(F.col("id") * (fact_rows // rows), F.lit("join")).alias("k"),
                (F.col("id") % (rows // 20)).alias("cat"),
                F.concat(F.lit("name-"), F.col("id").cast("string")).alias("name"),
            )
            .write.mode("overwrite")
            .parquet(str(path))
        )
    return str(path)


CLUSTERED_FILES = 80


def clustered_tables(spark, rows: int) -> tuple[str, str]:
    """A fact whose file n holds the keys [n * rows / 80, (n + 1) * rows / 80); a dimension of 4,000 keys spread
    evenly (50 a file), `cat` = 1 for 2 keys in each file whose number is a multiple of 4 (40 keys, 20 files)."""
    fact, dim = DATA / f"join_clustered_{rows}", DATA / f"join_clustered_dim_{rows}"
    if not (fact / "_SUCCESS").exists():
        print(f"generating the clustered fact: {rows:,} rows in {CLUSTERED_FILES} files at {fact} ...", flush=True)
        (spark.range(rows, numPartitions=CLUSTERED_FILES)
         .select(F.col("id").alias("k"), (F.rand(3) * 1000).alias("amount"))
         .write.mode("overwrite").parquet(str(fact)))
    if not (dim / "_SUCCESS").exists():
        per_file = rows // CLUSTERED_FILES
        step = max(1, rows // 4000)
        k = F.col("id") * step
        selected = ((k / per_file).cast("long") % 4 == 0) & (F.col("id") % 25 == 0)
        (spark.range(min(4000, rows), numPartitions=1)
         .select(k.alias("k"), F.when(selected, 1).otherwise(0).alias("cat"))
         .write.mode("overwrite").parquet(str(dim)))
    return str(fact), str(dim)


def ensure_index(spark, path: str, name: str) -> None:
    """An index on `k` with a global filter (the join filter on the other side needs one)."""
    try:
        index = hsbloom.BFIndexConfig(name, ["k"], global_filter=True)
        hsbloom.Hyperspace(spark).create_index(spark.read.parquet(path), index)
    except IndexExistsError:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--dim-rows", type=int, default=2_000_000)
    parser.add_argument("--clustered-rows", type=int, default=20_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    spark = session("hsbloom-bench-join", driver_memory="4g")
    fact = fact_table(spark, args.rows, args.files)
    dim = dim_table(spark, args.dim_rows, args.rows)
    ensure_index(spark, fact, f"bench_join_fact_{args.rows}_{args.files}")
    ensure_index(spark, dim, f"bench_join_dim_{args.dim_rows}_{args.rows}")

    def query(filtered: bool):
        d = spark.read.parquet(dim)
        if filtered:
            d = d.where(F.col("cat") == 7)
        joined = spark.read.parquet(fact).join(d, "k")
        return joined.agg(F.count("*").alias("rows"), F.bit_xor(F.xxhash64("k", "amount", "cat")).alias("check"))

    print(f"\nfact {args.rows:,} rows in {args.files} files; dimension {args.dim_rows:,} rows "
          f"(a tenth of the fact's keys); local[2], median of {args.repeat}, runs alternating")
    print(f"{'query':34s} {'Spark':>8s} {'hsbloom':>8s} {'speedup':>8s} {'fact files':>11s}  result")
    for label, filtered in [("(a) dimension unfiltered", False), ("(b) dimension filtered to 20 keys", True)]:
        results, times = {}, {False: [], True: []}
        for enabled in (True, False):  # warm-up: JVM, OS cache, the global filter's first load
            (hsbloom.enable if enabled else hsbloom.disable)(spark)
            results[enabled] = query(filtered).collect()[0]
        for _ in range(args.repeat):
            for enabled in (False, True):
                (hsbloom.enable if enabled else hsbloom.disable)(spark)
                start = time.perf_counter()
                row = query(filtered).collect()[0]
                times[enabled].append(time.perf_counter() - start)
                if row != results[enabled]:
                    raise RuntimeError(f"{label}: results changed between runs: {row} vs {results[enabled]}")
        if results[True] != results[False]:
            raise RuntimeError(f"{label}: hsbloom changed the result: {results[True]} vs {results[False]}")
        hsbloom.enable(spark)
        read_on = files_read(query(filtered))
        hsbloom.disable(spark)
        read_off = files_read(query(filtered))
        spark_s, hs_s = statistics.median(times[False]), statistics.median(times[True])
        dim_files = len(spark.read.parquet(dim).inputFiles())
        print(f"{label:34s} {spark_s:7.2f}s {hs_s:7.2f}s {spark_s / hs_s:7.2f}x "
              f"{read_off - dim_files:>4d} -> {read_on - dim_files:<4d}  rows={results[True]['rows']:,} "
              f"(identical)", flush=True)
    hsbloom.enable(spark)
    print("\nhs.explain of (b):\n" + explain_string(query(True)).split("Indexes used:")[1])
    clustered(spark, args.clustered_rows, args.repeat)
    spark.stop()


def clustered(spark, rows: int, repeat: int) -> None:
    """(c): hsbloom on and off, and the limit (only the fact files that hold the keys, hsbloom off)."""
    fact, dim = clustered_tables(spark, rows)
    ensure_index(spark, fact, f"bench_join_clustered_{rows}")
    ensure_index(spark, dim, f"bench_join_clustered_dim_{rows}")
    keys = [r.k for r in spark.read.parquet(dim).where("cat = 1").collect()]
    hsbloom.disable(spark)
    holding = sorted(r[0] for r in spark.read.parquet(fact).where(F.col("k").isin(keys))
                     .select(F.input_file_name()).distinct().collect())

    def query(files: list[str] | None):
        f = spark.read.parquet(*files) if files else spark.read.parquet(fact)
        joined = f.join(spark.read.parquet(dim).where("cat = 1"), "k")
        return joined.agg(F.count("*").alias("rows"), F.bit_xor(F.xxhash64("k", "amount")).alias("check"))

    runs = {"off": (False, None), "on": (True, None), "limit": (False, holding)}
    results, times = {}, {name: [] for name in runs}
    for _ in range(repeat + 1):  # the first round warms up
        for name, (enabled, files) in runs.items():
            (hsbloom.enable if enabled else hsbloom.disable)(spark)
            start = time.perf_counter()
            results[name] = query(files).collect()[0]
            times[name].append(time.perf_counter() - start)
    if not results["on"] == results["off"] == results["limit"]:
        raise RuntimeError(f"(c): results differ: {results}")
    hsbloom.enable(spark)
    read_on = files_read(query(None)) - 1
    hsbloom.disable(spark)
    med = {name: statistics.median(t[1:]) for name, t in times.items()}
    print(f"\n(c) clustered: {rows:,} rows in {CLUSTERED_FILES} files, dimension filtered to {len(keys)} keys in "
          f"{len(holding)} files; median of {repeat}")
    print(f"  Spark {med['off']:.2f}s  hsbloom {med['on']:.2f}s ({med['off'] / med['on']:.2f}x, fact files read "
          f"{read_on})  limit {med['limit']:.2f}s ({med['off'] / med['limit']:.2f}x, {len(holding)} files); "
          f"hsbloom / limit {med['on'] / med['limit']:.2f}x  rows={results['on']['rows']:,} (identical)")
    hsbloom.enable(spark)
    print("hs.explain of (c):\n" + explain_string(query(None)).split("Joins considered")[1])


if __name__ == "__main__":
    main()
