"""Shared pieces of the benchmarks: a Spark session, a generated table, a timer, off/on runs interleaved.

Every benchmark prints figures measured side by side in one run, so the
ratios compare like with like on whatever machine runs them.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import hsbloom
from hsbloom import jar, settings

DATA = Path(__file__).resolve().parent / "data"
BENCH_JAR = Path(__file__).resolve().parents[1] / "jvm" / "target" / "hsbloom-bench.jar"
# The tests' KMS client (keys from the Hadoop settings, no server), for benchmarks of encrypted tables.
TEST_KMS_JAR = Path(__file__).resolve().parents[1] / "jvm" / "target" / "hsbloom-test-kms.jar"
# The benchmarks' own JVM classes (jvm/bench, on the classpath of a session made with `bench_jar`), by role.
BENCH_CLASSES = {"sbbf_bench": "hsbloom.bench.SbbfBench", "scale_bench": "hsbloom.bench.ScaleBench"}


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


def bench_class(spark: SparkSession, role: str):
    """The py4j JavaClass of one of the benchmarks' JVM classes (`BENCH_CLASSES`), through hsbloom's door to the
    JVM (hsbloom.jar)."""
    return jar.java_class(spark, BENCH_CLASSES[role])


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


@dataclass(frozen=True)
class OffOn:
    """Wall times of runs with hsbloom off and on, round by round (round i's two runs ran back to back), and whether
    their rows were identical.

    The goal is judged on the median of the rounds' own ratios: a pair shares the machine's moment, so a slow or a
    lucky minute moves both, while the fastest of each side is decided by one lucky run of either.
    """

    off: list[float]
    on: list[float]
    identical: bool

    @property
    def fastest_off(self) -> float:
        return min(self.off)

    @property
    def fastest_on(self) -> float:
        return min(self.on)

    @property
    def median_off(self) -> float:
        return statistics.median(self.off)

    @property
    def median_on(self) -> float:
        return statistics.median(self.on)

    @property
    def ratio(self) -> float:
        """The median of the rounds' on / off."""
        return statistics.median(on / off for off, on in zip(self.off, self.on))

    @property
    def extra(self) -> float:
        """The median of the rounds' on - off, in seconds."""
        return statistics.median(on - off for off, on in zip(self.off, self.on))

    def meets(self, ratio: float = 1.10, allowance: float = 0.3) -> bool:
        """Within `ratio` of off, or at most `allowance` seconds more (the goal of the multi-query benchmarks)."""
        return self.ratio <= ratio or self.extra <= allowance


def total_ratio(results: list[OffOn]) -> float:
    """The median over rounds of (all queries' time on in that round) / (all queries' time off in that round), over
    the rounds every query ran (a short query's further rounds are left out)."""
    rounds = range(min(len(r.off) for r in results))
    return statistics.median(sum(r.on[i] for r in results) / sum(r.off[i] for r in results) for i in rounds)


def interleaved(spark, run: Callable[[], list], repeat: int, warmup: int = 1, seconds: float = 0.0) -> OffOn:
    """`run` `repeat` rounds with hsbloom off and on, alternating: off first in even rounds, on first in odd ones, so
    neither always runs right after the other (whose garbage or warm caches it would inherit). `warmup` rounds run
    first, untimed (their rows are compared too): the first runs of a query pay for compiling its code and reading
    its files' footers, whichever side runs them.

    With `seconds`, a short query runs more rounds: enough for about `seconds` of runs a side at its fastest pace so
    far (at most 4 x `repeat`), decided once, after the first timed round, from the runs' times on both sides alike,
    never from how off and on compare. Why: a second-long query's rounds' ratios spread by about 0.15 (standard
    deviation, TPC-H Q2 on this 2-core machine), so the median of 9 is uncertain by about 0.06 and cannot tell
    1.04x from 1.10x; the median of 36 is uncertain by about 0.03."""
    times: dict[bool, list[float]] = {False: [], True: []}
    rows: dict[bool, list] = {}
    identical = True
    rounds, round_, fastest = repeat, -warmup, math.inf
    while round_ < rounds:
        for enabled in ((False, True) if round_ % 2 == 0 else (True, False)):
            (hsbloom.enable if enabled else hsbloom.disable)(spark)
            start = time.perf_counter()
            rows[enabled] = run()
            took = time.perf_counter() - start
            if round_ >= 0:
                times[enabled].append(took)
            fastest = min(fastest, took)
        identical = identical and rows[False] == rows[True]
        if round_ == 0 and seconds > 0:
            rounds = max(repeat, min(4 * repeat, math.ceil(seconds / max(fastest, 1e-3))))
        round_ += 1
    return OffOn(times[False], times[True], identical)


def add_off_on_arguments(parser: argparse.ArgumentParser) -> None:
    """`compare_off_on`'s --repeat and --seconds, defined once for the multi-query benchmarks."""
    parser.add_argument("--repeat", type=int, default=5, help="rounds of off and on of each query, at least")
    parser.add_argument("--seconds", type=float, default=30.0,
                        help="a short query runs rounds for about this many seconds a side (up to 4 x --repeat)")


def compare_off_on(spark, runs: dict[str, Callable[[], list]], repeat: int, seconds: float = 0.0) -> list[OffOn]:
    """Each of `runs` (a query's label: a function returning its rows, comparable as they are) `repeat` rounds off
    and on (more for short queries with `seconds`: `interleaved`), printed a line each with whether it meets the
    goal (1.10x, or 0.3 s more), then the totals."""
    print(f"\n{'query':6s} {'off':>8s} {'on':>8s} {'on/off':>7s} {'extra':>7s}  {'fastest off / on':>17s}  "
          "rounds  identical  goal", flush=True)
    results, missed = [], []
    for label, run in runs.items():
        result = interleaved(spark, run, repeat, seconds=seconds)
        results.append(result)
        if not result.meets():
            missed.append(label)
        print(f"{label:6s} {result.median_off:7.2f}s {result.median_on:7.2f}s {result.ratio:6.2f}x "
              f"{result.extra:+6.2f}s  {result.fastest_off:7.2f}s / {result.fastest_on:5.2f}s  "
              f"{len(result.off):6d}  {'yes' if result.identical else 'NO ':9s}  "
              f"{'ok' if result.meets() else 'MISSED'}", flush=True)
    total_off, total_on = sum(r.median_off for r in results), sum(r.median_on for r in results)
    fastest_off, fastest_on = sum(r.fastest_off for r in results), sum(r.fastest_on for r in results)
    print(f"{'total':6s} {total_off:7.2f}s {total_on:7.2f}s {total_ratio(results):6.2f}x "
          f"{total_on - total_off:+6.2f}s  {fastest_off:7.2f}s / {fastest_on:5.2f}s  "
          f"{'':6s}  {'all identical' if all(r.identical for r in results) else 'NOT ALL IDENTICAL'}; "
          f"{'every query within 1.10x or 0.3 s' if not missed else 'over the goal: ' + ', '.join(missed)}",
          flush=True)
    more = f", more for queries under {seconds / repeat:.1f} s" if seconds else ""
    print(f"(off, on: medians of each query's rounds ({repeat}{more}); on/off and extra: medians of the rounds' own "
          "on/off and on - off; the total's on/off: the median of the first rounds' totals on/off; the fastest of "
          "each side beside them)", flush=True)
    return results
