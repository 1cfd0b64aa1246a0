"""hsbloom quickstart: generate a table of many files, then look up one key.

Run it with `./dev.sh example` (which sets everything up first). It writes a
local dataset under examples/data/ (reused on later runs), starts Spark with
hsbloom, and times a point lookup on a high-cardinality key.
"""

from __future__ import annotations

import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import hsbloom

DATA = Path(__file__).resolve().parent / "data" / "events"
NUM_ROWS = 2_000_000
NUM_FILES = 100


def make_dataset(spark: SparkSession) -> None:
    """Write NUM_ROWS rows in NUM_FILES Parquet files: a random long id and a uuid per row."""
    if (DATA / "_SUCCESS").exists():
        return
    print(f"writing {NUM_ROWS:,} rows in {NUM_FILES} files to {DATA} ...")
    (
        spark.range(NUM_ROWS, numPartitions=NUM_FILES)
        .select(
            F.abs(F.xxhash64("id")).alias("user_id"),
            F.expr("uuid()").alias("trace_id"),
            (F.rand(7) * 1000).alias("amount"),
        )
        .write.mode("overwrite")
        .parquet(str(DATA))
    )


def files_read(df) -> int:
    """Number of files the scan of `df` reads, from its physical plan."""
    return len(df.inputFiles())


def main() -> None:
    builder = SparkSession.builder.master("local[2]").appName("hsbloom-quickstart")
    spark = hsbloom.configure(builder.config("spark.ui.showConsoleProgress", "false")).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    print(f"hsbloom {hsbloom.__version__} (jar {spark.sql('SELECT hsbloom_version()').first()[0]}) on Spark {spark.version}")
    make_dataset(spark)

    events = spark.read.parquet(str(DATA))
    key = events.select("user_id").limit(1).first()[0]
    lookup = events.where(F.col("user_id") == key)

    start = time.perf_counter()
    rows = lookup.collect()
    elapsed = time.perf_counter() - start
    print(f"lookup user_id = {key}: {len(rows)} row(s) in {elapsed:.2f} s, "
          f"table has {files_read(events)} files")
    spark.stop()


if __name__ == "__main__":
    main()
