"""Shared pieces of the benchmarks: a Spark session, a generated table, a timer, off/on runs interleaved.

Every benchmark prints figures measured side by side in one run, so the
ratios compare like with like on whatever machine runs them.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import hsbloom
from hsbloom import settings

DATA = Path(__file__).resolve().parent / "data"
BENCH_JAR = Path(__file__).resolve().parents[1] / "jvm" / "target" / "hsbloom-bench.jar"
# The tests' KMS client (keys from the Hadoop settings, no server), for benchmarks of encrypted tables.
TEST_KMS_JAR = Path(__file__).resolve().parents[1] / "jvm" / "target" / "hsbloom-test-kms.jar"


def session(app: str, delta: bool = False, driver_memory: str = "6g", bench_jar: bool = False,
            cores: int = 2, test_kms: bool = False) -> SparkSession:
    """A local session configured by `hsbloom.configure`; `bench_jar` adds jvm/bench's classes (ScaleBench, ...),
    `test_kms` the tests' KMS client (jvm/testkms: ./dev.sh sbt testKms/package)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app)
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config(settings.SYSTEM_PATH, str(DATA / "indexes"))
    )
    if bench_jar:
        if not BENCH_JAR.is_file():
            sys.exit(f"{BENCH_JAR} is missing: run benchmarks with ./dev.sh bench NAME, which builds it")
    jars = [str(BENCH_JAR)] if bench_jar else []
    if test_kms:
        if not TEST_KMS_JAR.is_file():
            sys.exit(f"{TEST_KMS_JAR} is missing: build it with ./dev.sh sbt testKms/package")
        jars.append(str(TEST_KMS_JAR))
    if jars:
        builder = builder.config("spark.driver.extraClassPath", ":".join(jars))
    spark = hsbloom.configure(builder, delta=delta).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def key_rows(spark: SparkSession, first: int, rows: int, files: int, seed: int = 11):
    """`rows` rows in `files` partitions: a random long key, a uuid string key and a payload."""
    return spark.range(first, first + rows, numPartitions=files).select(
        F.xxhash64(F.col("id"), F.lit("long-key")).alias("long_key"),
        F.expr("uuid()").alias("uuid_key"),
        (F.rand(seed) * 1e6).alias("payload"),
    )


def key_table(spark: SparkSession, rows: int, files: int, name: str | None = None) -> str:
    """A table of `rows` rows in `files` Parquet files: a random long key and a uuid string key.

    Written once under bench/data/ and reused by later runs.
    """
    path = DATA / (name or f"keys_{rows}_{files}")
    if not (path / "_SUCCESS").exists():
        print(f"generating {rows:,} rows in {files} files at {path} ...", flush=True)
        key_rows(spark, 0, rows, files).write.mode("overwrite").parquet(str(path))
    return str(path)


def timed(action: Callable[[], object], repeat: int = 3) -> float:
    """Median wall time of `action` over `repeat` runs, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fastest_interleaved(spark, run: Callable[[], list], repeat: int) -> tuple[float, float, bool]:
    """(fastest off, fastest on, identical rows), runs alternating off/on: off first in even rounds, on first in
    odd ones, so neither always runs right after the other (whose garbage or warm caches it would inherit)."""
    times: dict[bool, list[float]] = {False: [], True: []}
    rows: dict[bool, list] = {}
    for round_ in range(repeat):
        for enabled in ((False, True) if round_ % 2 == 0 else (True, False)):
            (hsbloom.enable if enabled else hsbloom.disable)(spark)
            start = time.perf_counter()
            rows[enabled] = run()
            times[enabled].append(time.perf_counter() - start)
    return min(times[False]), min(times[True]), rows[False] == rows[True]
