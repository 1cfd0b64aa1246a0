"""Index build time beside a plain scan of the same columns and a Parquet-native rewrite.

    ./dev.sh bench build [--rows N] [--files N]

(a) plain scan: df.select(cols).write.format("noop"): the floor for any build
    that reads the data once;
(b) rewrite: the whole table rewritten with Parquet-native Bloom filters on
    the same columns, what a user without hsbloom would do;
(c) hsbloom: the index build at the default settings (file-level filters).
Goals: (c) <= 1.3x (a), and (b) >= 5x (c).
Also printed, labelled: (c') the build with global_filter=True (also one
filter per column over all files, for the join rule's filter on the other
side; off by default), to show what the global filter costs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
import uuid

from common import DATA, key_table, session, timed

import hsbloom

COLUMNS = ["long_key", "uuid_key"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    spark = session("hsbloom-bench-build")
    table = key_table(spark, args.rows, args.files)
    df = spark.read.parquet(table)
    hs = hsbloom.Hyperspace(spark)
    scratch = DATA / "scratch"
    shutil.rmtree(scratch, ignore_errors=True)

    def plain_scan():
        df.select(*COLUMNS).write.format("noop").mode("overwrite").save()

    def hsbloom_build(global_filter: bool = False) -> float:
        """Seconds for one create_index; the index is removed again outside the timing."""
        name = f"bench_build_{uuid.uuid4().hex[:8]}"
        start = time.perf_counter()
        hs.create_index(df, hsbloom.BFIndexConfig(name, COLUMNS, global_filter=global_filter))
        elapsed = time.perf_counter() - start
        hs.delete_index(name)
        hs.vacuum_index(name)
        return elapsed

    # The rewrite writes one file per scan partition (Spark packs several input
    # files into one); each gets filters sized for its own rows at the same fpp
    # as the index, as a user who wants useful filters would configure them.
    rows_per_written_file = args.rows // df.rdd.getNumPartitions()

    def native_rewrite():
        writer = df.write.mode("overwrite")
        for c in COLUMNS:
            writer = writer.option(f"parquet.bloom.filter.enabled#{c}", "true")
            writer = writer.option(f"parquet.bloom.filter.expected.ndv#{c}", str(rows_per_written_file))
            writer = writer.option(f"parquet.bloom.filter.fpp#{c}", "0.01")
        writer.parquet(str(scratch / "rewrite"))

    plain_scan()  # warm up the JVM and the OS cache
    hsbloom_build()
    # Interleaved rounds, so a change in machine load hits all alike; the scan and the build swap places every
    # round, so neither always runs first; the rewrite's gigabyte is flushed to disk outside every timing.
    scans, builds, global_builds, rewrites = [], [], [], []
    for round_ in range(args.repeat):
        if round_ % 2 == 0:
            scans.append(timed(plain_scan, 1))
            builds.append(hsbloom_build())
        else:
            builds.append(hsbloom_build())
            scans.append(timed(plain_scan, 1))
        global_builds.append(hsbloom_build(global_filter=True))
        if round_ < max(1, args.repeat - 1):
            rewrites.append(timed(native_rewrite, 1))
            os.sync()
    scan_s, build_s, global_s, rewrite_s = (
        statistics.median(x) for x in (scans, builds, global_builds, rewrites)
    )
    shutil.rmtree(scratch, ignore_errors=True)

    print(f"\n{args.rows:,} rows in {len(df.inputFiles())} files, key columns {COLUMNS}, local[2]")
    print(f"{'(a) plain scan of the key columns':45s} {scan_s:7.2f} s")
    print(f"{'(b) rewrite with Parquet-native filters':45s} {rewrite_s:7.2f} s")
    print(f"{'(c) hsbloom index build':45s} {build_s:7.2f} s")
    print(f"build / plain scan = {build_s / scan_s:.2f}x (goal <= 1.3x)")
    print(f"rewrite / build    = {rewrite_s / build_s:.2f}x (goal >= 5x)")
    label = "(c') the build with global_filter=True"
    print(f"{label:45s} {global_s:7.2f} s: "
          f"{global_s / scan_s:.2f}x the scan, rewrite / it {rewrite_s / global_s:.2f}x")
    spark.stop()


if __name__ == "__main__":
    main()
