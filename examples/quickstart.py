"""hsbloom quickstart: index a table of many files, then look up one key.

Run it with `./dev.sh example` (which sets everything up first). It writes a
local dataset under data/ beside this script (reused on later runs), builds a
Bloom filter index on two high-cardinality keys, and runs the same point
lookups with hsbloom off and on: same rows, far fewer files read.
`--rows N --files M` sets the dataset's size (a new size writes it afresh).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

import hsbloom
from hsbloom.explain import files_read

DATA = Path(__file__).resolve().parent / "data"
INDEX = "events_keys"


def uuid_shaped(hex32: Column) -> Column:
    """32 hex digits as a uuid's 8-4-4-4-12 groups."""
    groups = ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))
    return F.concat_ws("-", *(F.substring(hex32, start, length) for start, length in groups))


def make_dataset(spark: SparkSession, events: Path, num_rows: int, num_files: int) -> None:
    """Write num_rows rows in num_files Parquet files: a hashed long user id and a uuid-shaped trace id per row.

    Both keys are hashes of the row number, so every run writes the same table and prunes the same files
    (a Bloom filter's false positives included).
    """
    if (events / "_SUCCESS").exists():
        return
    print(f"writing {num_rows:,} rows in {num_files} files to {events} ...")
    (
        spark.range(num_rows, numPartitions=num_files)
        .select(
            F.xxhash64("id").alias("user_id"),
            uuid_shaped(F.md5(F.col("id").cast("string"))).alias("trace_id"),
            (F.rand(7) * 1000).alias("amount"),
        )
        .write.mode("overwrite")
        .parquet(str(events))
    )


def timed_lookup(lookup: DataFrame) -> tuple[int, float, int]:
    """(rows, seconds, files read) of a lookup, best of three runs."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        rows = lookup.count()
        best = min(best, time.perf_counter() - start)
    return rows, best, files_read(lookup)


def files_holding(lookup: DataFrame) -> int:
    """The files that hold a row of the lookup's answer: the fewest any index could read.

    A Bloom filter may also keep a file that does not hold the key: a false positive, each other file with
    probability at most the index's fpp.
    """
    return lookup.select(F.input_file_name()).distinct().count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000, help="rows in the dataset")
    parser.add_argument("--files", type=int, default=200, help="Parquet files in the dataset")
    args = parser.parse_args()
    events_path = DATA / f"events-{args.rows}-{args.files}"
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("hsbloom-quickstart")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(DATA / "warehouse"))
    )
    spark = hsbloom.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    print(f"hsbloom {hsbloom.__version__} on Spark {spark.version}")
    make_dataset(spark, events_path, args.rows, args.files)

    events = spark.read.parquet(str(events_path))
    hs = hsbloom.Hyperspace(spark)
    if INDEX in [r["name"] for r in hs.indexes().collect()]:
        # A previous run's index, possibly written by an older hsbloom: build it afresh.
        hs.delete_index(INDEX)
        hs.vacuum_index(INDEX)
    start = time.perf_counter()
    hs.create_index(events, hsbloom.BFIndexConfig(INDEX, ["user_id", "trace_id"], fpp=0.01))
    print(f"built index {INDEX} in {time.perf_counter() - start:.1f} s")
    info = hs.index(INDEX)
    print(f"index {INDEX}: {info.num_files} files, {info.index_bytes / 1e6:.1f} MB")

    sample = events.select("user_id", "trace_id").where(F.rand(3) < 40 / args.rows).limit(1).first()
    lookups = {
        f"user_id = {sample.user_id}": events.where(F.col("user_id") == sample.user_id),
        f"trace_id = '{sample.trace_id}'": events.where(F.col("trace_id") == sample.trace_id),
        "user_id = 42 (absent)": events.where(F.col("user_id") == 42),
    }
    for label, lookup in lookups.items():
        hsbloom.disable(spark)
        rows_off, seconds_off, files_off = timed_lookup(lookup)
        hsbloom.enable(spark)
        rows_on, seconds_on, files_on = timed_lookup(lookup)
        assert rows_on == rows_off, "hsbloom never changes an answer"
        print(
            f"{label}: {rows_on} row(s); files read {files_off} -> {files_on} "
            f"(files holding it: {files_holding(lookup)}); "
            f"{seconds_off:.2f} s -> {seconds_on:.2f} s ({seconds_off / seconds_on:.1f}x faster)"
        )
    hs.explain(lookups[f"user_id = {sample.user_id}"])
    spark.stop()


if __name__ == "__main__":
    main()
