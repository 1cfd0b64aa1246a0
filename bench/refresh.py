"""Refresh after appending 5 % new files: incremental vs full, and quick.

    ./dev.sh bench refresh [--rows N] [--files N] [--repeat N]

Each round copies the generated table (200 files by default), creates two
indexes on it (untimed), appends 5 % new files, then times on index A a quick
refresh and an incremental refresh, and on index B a full refresh, all of the
same change. Goals: incremental <= 0.2x full; quick < 2 s. Also printed per
mode: the Spark jobs it ran and the bytes of the data directories it wrote.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from pathlib import Path

from common import DATA, key_rows, key_table, session

import hsbloom
from hsbloom import jar

COLUMNS = ["long_key", "uuid_key"]


def seconds(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def latest_job_id(spark) -> int:
    """The id of the newest Spark job of this application (jobs are numbered in order; -1: none yet)."""
    jobs = jar.java_session(spark).sparkContext().statusStore().jobsList(None)  # newest first
    return jobs.head().jobId() if jobs.nonEmpty() else -1


def directory_bytes(path: str) -> int:
    root = Path(path.removeprefix("file:"))
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file())


def measured(spark, hs, name: str, mode: str) -> tuple[float, int, int]:
    """Seconds, Spark jobs and bytes of new data directories of one refresh."""
    before_dirs, before_job = set(hs.index(name).data_paths), latest_job_id(spark)
    elapsed = seconds(lambda: hs.refresh_index(name, mode))
    jobs = latest_job_id(spark) - before_job
    written = sum(directory_bytes(p) for p in set(hs.index(name).data_paths) - before_dirs)
    return elapsed, jobs, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    appended_files = max(1, args.files * 5 // 100)
    rows_per_file = args.rows // args.files

    spark = session("hsbloom-bench-refresh")
    base = key_table(spark, args.rows, args.files)
    hs = hsbloom.Hyperspace(spark)
    scratch = DATA / "refresh-scratch"
    quick, incremental, full = [], [], []
    for round_ in range(args.repeat + 1):  # round 0 warms up the JVM and is not counted
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.copytree(base, scratch)
        for name in ("bench_refresh_a", "bench_refresh_b"):
            try:
                hs.delete_index(name)
            except hsbloom.errors.IndexNotFoundError:
                pass
            else:
                hs.vacuum_index(name)
            hs.create_index(spark.read.parquet(str(scratch)), hsbloom.BFIndexConfig(name, COLUMNS))
        key_rows(spark, args.rows, appended_files * rows_per_file, appended_files, seed=12).write.mode(
            "append"
        ).parquet(str(scratch))
        # Alternate which index refreshes first, so a change in machine load hits both alike.
        timings, work = {}, {}
        order = ["a", "b"] if round_ % 2 == 0 else ["b", "a"]
        for which in order:
            modes = [("bench_refresh_a", "quick"), ("bench_refresh_a", "incremental")] if which == "a" else [
                ("bench_refresh_b", "full")]
            for name, mode in modes:
                timings[mode], jobs, written = measured(spark, hs, name, mode)
                work[mode] = (jobs, written)
        if round_ > 0:
            quick.append(timings["quick"])
            incremental.append(timings["incremental"])
            full.append(timings["full"])
        print(f"round {round_}: " + ", ".join(
            f"{k} {v:.2f} s ({work[k][0]} jobs, {work[k][1] / 2**20:.1f} MiB written)" for k, v in timings.items()
        ), flush=True)
    for name in ("bench_refresh_a", "bench_refresh_b"):
        hs.delete_index(name)
        hs.vacuum_index(name)
    shutil.rmtree(scratch, ignore_errors=True)

    q, i, f = (statistics.median(x) for x in (quick, incremental, full))
    print(f"\n{args.rows:,} rows in {args.files} files + {appended_files} appended files "
          f"({appended_files * rows_per_file:,} rows), columns {COLUMNS}, local[2], median of {args.repeat}")
    print(f"{'quick refresh':25s} {q:7.2f} s  {work['quick'][0]:3d} jobs {work['quick'][1] / 2**20:8.1f} MiB  "
          "(goal < 2 s)")
    print(f"{'incremental refresh':25s} {i:7.2f} s  {work['incremental'][0]:3d} jobs "
          f"{work['incremental'][1] / 2**20:8.1f} MiB")
    print(f"{'full refresh':25s} {f:7.2f} s  {work['full'][0]:3d} jobs {work['full'][1] / 2**20:8.1f} MiB")
    print(f"incremental / full = {i / f:.2f}x (goal <= 0.2x)")
    spark.stop()


if __name__ == "__main__":
    main()
