"""Refresh after appending 5 % new files: incremental vs full, and quick.

    ./dev.sh bench refresh [--rows N] [--files N] [--repeat N]

Each round copies the generated table (200 files by default), creates two
indexes on it (untimed), appends 5 % new files, then times on index A a quick
refresh and an incremental refresh, and on index B a full refresh, all of the
same change. Goals: incremental <= 0.2x full; quick < 2 s.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time

from common import DATA, key_rows, key_table, session

import hsbloom

COLUMNS = ["long_key", "uuid_key"]


def seconds(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
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
        timings = {}
        order = ["a", "b"] if round_ % 2 == 0 else ["b", "a"]
        for which in order:
            if which == "a":
                timings["quick"] = seconds(lambda: hs.refresh_index("bench_refresh_a", "quick"))
                timings["incremental"] = seconds(lambda: hs.refresh_index("bench_refresh_a", "incremental"))
            else:
                timings["full"] = seconds(lambda: hs.refresh_index("bench_refresh_b", "full"))
        if round_ > 0:
            quick.append(timings["quick"])
            incremental.append(timings["incremental"])
            full.append(timings["full"])
        print(f"round {round_}: " + ", ".join(f"{k} {v:.2f} s" for k, v in timings.items()), flush=True)
    for name in ("bench_refresh_a", "bench_refresh_b"):
        hs.delete_index(name)
        hs.vacuum_index(name)
    shutil.rmtree(scratch, ignore_errors=True)

    q, i, f = (statistics.median(x) for x in (quick, incremental, full))
    print(f"\n{args.rows:,} rows in {args.files} files + {appended_files} appended files "
          f"({appended_files * rows_per_file:,} rows), columns {COLUMNS}, local[2], median of {args.repeat}")
    print(f"{'quick refresh':25s} {q:7.2f} s  (goal < 2 s)")
    print(f"{'incremental refresh':25s} {i:7.2f} s")
    print(f"{'full refresh':25s} {f:7.2f} s")
    print(f"incremental / full = {i / f:.2f}x (goal <= 0.2x)")
    spark.stop()


if __name__ == "__main__":
    main()
