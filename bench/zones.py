"""Point lookups with zones (a filter per row group) beside file granularity, Parquet-native filters and the limit.

    ./dev.sh bench zones [--scale 1.0] [--repeat N]

Two tables, each with a random long key and a uuid string key, written by
Spark with row groups of about --group-rows rows (`parquet.block.size` is set
from the measured bytes per row; the row groups each file got are printed):
(A) few big files: 16 files of 8 row groups of 400,000 rows;
(B) many files: 200 files of 4 row groups of 25,000 rows.
--scale multiplies the row counts (0.01 checks that the script works).
Each table is also written with Parquet-native Bloom filters on both keys,
sized for a row group's distinct values. For `=` and IN of 10 on each key,
the median time of: (a) the full scan; (b) the native-filter copy; (c)
hsbloom at file granularity; (z) hsbloom with zones; (d) reading only the
matching row groups (each copied once into a file of its own): the limit.
And the row groups read by (z), from the scan metrics, averaged over
--key-sets key sets. Every method runs once per round, interleaved, so a load
change hits all alike; each round looks up keys of its own, so a figure is a
typical lookup's, not one key's luck with false positives. Then the limit
beside a whole file of 8 row groups of 400k, 1M and 2M rows (what zones save
on bigger row groups).

Then the build time over table A's native copies, adopting their filters vs
hashing the keys (`settings.BUILD_ADOPT_NATIVE_FILTERS`), beside a plain
scan of the key columns and its ratio to it, at file granularity and with
zones: the copy with filters sized for a row group (whose OR over a file's 8
row groups misses the target fpp, so it is hashed, the reasons printed,
unless `settings.BUILD_ADOPT_ROW_GROUP_SIZED_FILTERS` lets the zones decide:
the "rg-sized on" row) and one with filters sized for twice a file's rows
(adopted, file filters and zones).
`--build-only` runs just that.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

import pyarrow.parquet as pq
from common import DATA, key_rows, session
from hsbloom import settings
from pyspark.sql import functions as F

import hsbloom
from hsbloom.errors import IndexExistsError
from hsbloom.explain import row_group_counts
job_group_id = lambda operation, name: f"hsbloom-{operation}-{name}"  # the jar's JobGroup.id

COLUMNS = ["long_key", "uuid_key"]
ADOPT = settings.BUILD_ADOPT_NATIVE_FILTERS
ROW_GROUP_SIZED = settings.BUILD_ADOPT_ROW_GROUP_SIZED_FILTERS
TABLES = {"A": (16, 8, 400_000), "B": (200, 4, 25_000)}  # files, row groups per file, rows per row group


def write(spark, path: Path, files: int, rows: int, group_rows: int, group_bytes: int, native_ndv: int | None) -> str:
    """`rows` rows in `files` files with row groups of `group_rows` rows, about `group_bytes` (written once)."""
    if not (path / "_SUCCESS").exists():
        print(f"writing {rows:,} rows in {files} files at {path} ...", flush=True)
        # Row groups of exactly `group_rows` rows (parquet-java's row count limit), the byte size only a backstop.
        writer = (key_rows(spark, 0, rows, files).write.mode("overwrite")
                  .option("parquet.block.size", 4 * group_bytes)
                  .option("parquet.block.row.count.limit", group_rows))
        if native_ndv:  # Spark caps a filter at 1 MiB unless told otherwise; a file-sized one needs more
            writer = writer.option("parquet.bloom.filter.max.bytes", 128 << 20)
        for c in COLUMNS if native_ndv else ():
            writer = writer.option(f"parquet.bloom.filter.enabled#{c}", "true")
            writer = writer.option(f"parquet.bloom.filter.expected.ndv#{c}", str(native_ndv))
        writer.parquet(str(path))
    return str(path)


def bytes_per_row(spark) -> float:
    """Compressed bytes per row of the key table, from a sample file."""
    sample = DATA / "zones_sample"
    write(spark, sample, 1, 200_000, 200_000, 1 << 30, None)
    return sum(f.stat().st_size for f in sample.glob("*.parquet")) / 200_000


def ensure_index(spark, table: str, name: str, granularity: str) -> None:
    try:
        hsbloom.Hyperspace(spark).create_index(spark.read.parquet(table), hsbloom.BFIndexConfig(
            name, COLUMNS, global_filter=False, granularity=granularity))
    except IndexExistsError:
        pass


def limit_files(spark, table: str, column: str, keys: list, name: str) -> list[str]:
    """The row groups holding one of `keys`, each copied into a file of its own (once)."""
    hsbloom.disable(spark)
    cond = F.col(column).isin(keys)
    files = sorted(r[0] for r in spark.read.parquet(table).where(cond).select(F.input_file_name()).distinct().collect())
    wanted = set(keys)
    out = []
    for f in files:
        parquet = pq.ParquetFile(f.replace("file://", "").replace("file:", ""))
        for g in range(parquet.num_row_groups):
            target = DATA / "zones_limit" / name / f"{Path(f).stem}-{g}.parquet"
            if not target.exists():
                if wanted.isdisjoint(parquet.read_row_group(g, columns=[column]).column(0).to_pylist()):
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                pq.write_table(parquet.read_row_group(g), target)
            out.append(str(target))
    return out


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def build_times(spark, copies: dict[str, str], repeat: int) -> None:
    """Per copy and granularity: a plain scan of the key columns, and an index build (no global filter)
    adopting native filters and hashing; the median of `repeat` runs each, interleaved. With zones, also a build
    that adopts files whose filters are sized for a row group (`ROW_GROUP_SIZED`)."""
    hs = hsbloom.Hyperspace(spark)
    print(f"\nbuild over table A's native copies: median of {repeat} interleaved rounds")
    print(f"{'copy':16s} {'index':22s} {'scan keys':>10s} {'adopted':>9s} {'hashed':>9s} {'adopt/scan':>11s} "
          f"{'hash/scan':>10s} {'jobs':>5s}  adoption")
    print("jobs: Spark jobs of the adopted build (its job group), listing included")
    variants = {"file": ("file", False), "zones": ("row_group", False), "zones, rg-sized on": ("row_group", True)}
    for label, path in copies.items():
        for variant, (granularity, row_group_sized) in variants.items():
            times: dict[str, list[float]] = {"scan": [], "true": [], "false": []}
            outcome, jobs = "", 0
            for round_ in range(repeat):
                scan = spark.read.parquet(path).select(*COLUMNS)
                times["scan"].append(timed(lambda: scan.write.format("noop").mode("overwrite").save()))
                for adopt in ("true", "false"):
                    name = f"bench_adopt_{Path(path).name}_{granularity}_{int(row_group_sized)}_{adopt}_{round_}"
                    spark.conf.set(ADOPT, adopt)
                    spark.conf.set(ROW_GROUP_SIZED, str(row_group_sized).lower())
                    config = hsbloom.BFIndexConfig(name, COLUMNS, global_filter=False, granularity=granularity)
                    try:
                        times[adopt].append(timed(lambda: hs.create_index(spark.read.parquet(path), config)))
                    finally:
                        spark.conf.unset(ADOPT)
                        spark.conf.unset(ROW_GROUP_SIZED)
                    if adopt == "true":
                        info = hs.index(name)
                        outcome = f"{info.adopted_files} files adopted, hashed: {info.hashed_files or 'none'}"
                        jobs = len(spark.sparkContext.statusTracker().getJobIdsForGroup(job_group_id("create", name)))
                    hs.delete_index(name)
                    hs.vacuum_index(name)
            med = {k: statistics.median(v) for k, v in times.items()}
            print(f"{label:16s} {variant:22s} {med['scan']:9.2f}s {med['true']:8.2f}s {med['false']:8.2f}s "
                  f"{med['true'] / med['scan']:10.2f}x {med['false'] / med['scan']:9.2f}x {jobs:5d}  {outcome}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--build-only", action="store_true", help="only the build-time comparison")
    parser.add_argument("--key-sets", type=int, default=20, help="key sets averaged for the row groups read")
    parser.add_argument("--tables", default="A,B", help="the lookup tables to run (A, B or both)")
    parser.add_argument("--predicates", default="=,IN 10", help="the lookups to run ('=', 'IN 10' or both)")
    parser.add_argument("--no-side", action="store_true", help="leave out the limit vs whole-file side figure")
    parser.add_argument("--no-build", action="store_true", help="leave out the build-time comparison")
    args = parser.parse_args()
    spark = session("hsbloom-bench-zones")
    per_row = bytes_per_row(spark)
    files, groups, group_rows = TABLES["A"]
    group_rows = max(100, int(group_rows * args.scale))
    name = f"zones_A_{files * groups * group_rows}"
    group_bytes = int(per_row * group_rows)
    copies = {
        "row-group-sized": write(spark, DATA / f"{name}_native", files, files * groups * group_rows, group_rows, group_bytes,
                                 group_rows),
        # Sized for twice a file's rows: parquet-java's sizing may pick the power of two below the spec's bits.
        "file-sized": write(spark, DATA / f"{name}_native_file", files, files * groups * group_rows, group_rows, group_bytes,
                            2 * groups * group_rows),
    }
    if not args.build_only:
        lookups(spark, args, per_row)
        if not args.no_side:
            row_group_side_figure(spark, per_row, args.repeat)
    if not args.no_build:
        build_times(spark, copies, max(1, min(args.repeat, 3)))
    spark.stop()


def lookups(spark, args, per_row: float) -> None:
    """The lookup table of both tables (see the module's docstring)."""
    for label, (files, groups, group_rows) in TABLES.items():
        if label not in args.tables.split(","):
            continue
        group_rows = max(100, int(group_rows * args.scale))
        rows = files * groups * group_rows
        name = f"zones_{label}_{rows}"
        group_bytes = int(per_row * group_rows)
        plain = write(spark, DATA / name, files, rows, group_rows, group_bytes, None)
        native = write(spark, DATA / f"{name}_native", files, rows, group_rows, group_bytes, group_rows)
        zoned = DATA / f"{name}_zoned"  # the same files under another root, for the zones index
        if not zoned.exists():
            zoned.mkdir()
            for f in Path(plain).iterdir():
                (zoned / f.name).hardlink_to(f)
        ensure_index(spark, plain, f"bench_{name}_file", "file")
        ensure_index(spark, str(zoned), f"bench_{name}_zones", "row_group")
        got = [pq.ParquetFile(f).num_row_groups for f in sorted(Path(plain).glob("*.parquet"))]
        print(f"\n({label}) {rows:,} rows in {files} files; row groups per file: {min(got)}-{max(got)} "
              f"(aimed at {groups}); median of {args.repeat} interleaved rounds, each on keys of its own")
        print(f"{'column':10s} {'predicate':9s} {'(a) full':>9s} {'(b) native':>11s} {'(c) file':>9s} "
              f"{'(z) zones':>10s} {'(d) limit':>10s} {'z/d':>6s} {'b/z':>6s} {'c/z':>6s} {'groups read':>12s}")
        print(f"groups read: row groups (z) read per query, the mean over {args.key_sets} key sets (scan metrics)")
        sample = spark.read.parquet(plain).sample(fraction=min(1.0, 400 / rows), seed=5).collect()
        random.Random(5).shuffle(sample)
        for column in COLUMNS:
            for predicate, n in [("=", 1), ("IN 10", 10)]:
                if predicate not in args.predicates.split(","):
                    continue
                # Each round looks up its own keys (a lookup's luck with false positives is not the figure).
                key_sets = [[r[column] for r in sample[i * n:(i + 1) * n]] for i in range(args.repeat + 1)]
                limits = [limit_files(spark, plain, column, keys, f"{name}_{column}_{n}") for keys in key_sets]

                def run(paths, enabled, keys):
                    def action():
                        (hsbloom.enable if enabled else hsbloom.disable)(spark)
                        spark.read.parquet(*paths).where(F.col(column).isin(keys)).collect()
                    return action

                def methods(i: int) -> dict:
                    keys = key_sets[i]
                    return {"a": run([plain], False, keys), "b": run([native], False, keys),
                            "c": run([plain], True, keys), "z": run([str(zoned)], True, keys),
                            "d": run(limits[i], False, keys)}

                for action in methods(args.repeat).values():
                    action()  # warm up, on keys of their own
                times = {m: [] for m in "abczd"}
                for i in range(args.repeat):
                    for m, action in methods(i).items():
                        start = time.perf_counter()
                        action()
                        times[m].append(time.perf_counter() - start)
                med = {m: statistics.median(t) for m, t in times.items()}
                read = average_groups_read(spark, str(zoned), column, sample, n, args.key_sets)
                print(f"{column:10s} {predicate:9s} {med['a']:8.2f}s {med['b']:10.2f}s {med['c']:8.2f}s "
                      f"{med['z']:9.2f}s {med['d']:9.2f}s {med['z'] / med['d']:5.2f}x {med['b'] / med['z']:5.2f}x "
                      f"{med['c'] / med['z']:5.2f}x {read:>12s}", flush=True)


def average_groups_read(spark, zoned: str, column: str, sample: list, n: int, key_sets: int) -> str:
    """Row groups (z) reads per query, the mean over `key_sets` sets of `n` sampled keys (from the scan metrics)."""
    hsbloom.enable(spark)
    counts = []
    for i in range(key_sets):
        keys = [r[column] for r in (sample[i * n:(i + 1) * n] if (i + 1) * n <= len(sample) else
                                    random.Random(i).sample(sample, n))]
        before, pruned = row_group_counts(spark.read.parquet(zoned).where(F.col(column).isin(keys)))
        if before is None:
            hsbloom.disable(spark)
            return "?"
        counts.append(before - pruned)
    hsbloom.disable(spark)
    return f"{statistics.mean(counts):.2f}"


def row_group_side_figure(spark, per_row: float, repeat: int) -> None:
    """What zones gain on bigger row groups: an `=` lookup reading one whole file of 8 row groups (what file
    granularity reads when the file holds the key) beside reading only the row group that holds it (the
    limit), at 400k, 1M and 2M rows a row group. Real tables' 128 MB row groups hold several million rows."""
    print(f"\nthe limit vs a whole 8-row-group file, '=' on long_key, median of {repeat} interleaved rounds")
    print(f"{'rows a row group':>17s} {'whole file':>11s} {'one row group':>14s} {'file/limit':>11s}")
    hsbloom.disable(spark)
    for group_rows in (400_000, 1_000_000, 2_000_000):
        path = DATA / f"zones_side_{group_rows}"
        write(spark, path, 1, 8 * group_rows, group_rows, int(per_row * group_rows), None)
        (whole,) = [str(f) for f in path.glob("*.parquet")]
        parquet = pq.ParquetFile(whole)
        group = parquet.num_row_groups // 2  # a random key: min/max statistics cannot skip a row group
        key = parquet.read_row_group(group, columns=["long_key"]).column(0)[1234].as_py()
        single = DATA / "zones_limit" / f"side_{group_rows}.parquet"
        if not single.exists():
            single.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(parquet.read_row_group(group), single)
        cond = F.col("long_key") == key
        runs = {"whole": lambda: spark.read.parquet(whole).where(cond).collect(),
                "limit": lambda: spark.read.parquet(str(single)).where(cond).collect()}
        times = {m: [] for m in runs}
        for action in runs.values():
            action()
        for _ in range(repeat):
            for m, action in runs.items():
                times[m].append(timed(action))
        med = {m: statistics.median(t) for m, t in times.items()}
        print(f"{group_rows:>17,} {med['whole']:10.2f}s {med['limit']:13.2f}s {med['whole'] / med['limit']:10.2f}x "
              f"({parquet.num_row_groups} row groups)", flush=True)


if __name__ == "__main__":
    main()
