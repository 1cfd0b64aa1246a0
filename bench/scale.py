"""Planning at scale: index size, log entry bytes, planning time and driver memory at 10k, 100k and 1M files.

    ./dev.sh bench scale [--real 10000,100000] [--synthetic 1000000] [--rounds 5] [--in-values 1000]

Real tables: --real sizes, each a table of that many tiny Parquet files (10
rows each: an id and a random long key `k`), written once with pyarrow under
bench/data/ and indexed afresh on `k` by `create_index` (timed). For each:
data and index bytes (the index with its filter bits, from hs.index), the log
entry's bytes, then the planning of `k = v` on a DataFrame read once (as a
notebook or a catalog table keeps it): the first query of the index version
(the catalog's cache emptied first, so it loads), later `=` queries (median of
--rounds, other values) and IN of --in-values; hsbloom's time inside the
listing (the pruned scan's report) beside Spark's whole planning to an RDD
with hsbloom on and off, and the goal. "new read" is a later `=` on a new
spark.read (Spark lists the files again, and hsbloom hashes their paths
again). The largest real table also gets an incremental refresh after 1 % more
files (timed; the files are removed after). The driver memory of the loaded
index: its estimate and the heap it took.

Synthetic: --synthetic sizes, a written file table and blocks/ side files of
that many files and a listing made in the JVM (jvm/bench ScaleBench): load
time (the first query) and the predicate over the slots (later queries), no
Spark query; `--profile-load` adds where the first query's time goes, phase
by phase, the load as planning did it before beside the load it does now.
`--real 2000 --synthetic 100000` checks the script works in
a few minutes; the full run (10k and 100k real, 1M synthetic) takes an
estimated 30 to 45 minutes on a quiet 2-core machine, most of it writing
100,000 files the first time and indexing them at each run (every run creates
the indexes afresh, to time it), and 6 GB of driver memory.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from common import DATA, bench_class, session
from pyspark.sql import functions as F

import hsbloom
from hsbloom import jar
from hsbloom.errors import IndexNotFoundError

ROWS_PER_FILE = 10
GOALS = {100_000: (500.0, 50.0), 1_000_000: (3000.0, 100.0)}  # files: (first ms, later '=' ms)


def key_of(file: int, row: int) -> int:
    """The key of one row: distinct, spread over the longs (so files do not share keys)."""
    return random.Random(file * 1_000 + row).getrandbits(63)


def tiny_files(n: int) -> Path:
    """`n` Parquet files of ROWS_PER_FILE rows at bench/data/scale_<n>, written once."""
    path = DATA / f"scale_{n}"
    if (path / "_SUCCESS").exists():
        return path
    print(f"writing {n:,} tiny Parquet files at {path} ...", flush=True)
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    for f in range(n):
        write_file(path / f"part-{f:07d}.parquet", f)
    (path / "_SUCCESS").touch()
    return path


def write_file(target: Path, f: int) -> None:
    ids = [f * ROWS_PER_FILE + r for r in range(ROWS_PER_FILE)]
    keys = [key_of(f, r) for r in range(ROWS_PER_FILE)]
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "k": pa.array(keys, pa.int64())}), target)


def bytes_under(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.name.endswith(".crc"))


def fresh_index(spark, hs, path: Path, name: str) -> float:
    """Index `k` of the table as `name` (dropping an older one); seconds taken."""
    try:
        hs.delete_index(name)
        hs.vacuum_index(name)
    except IndexNotFoundError:
        pass
    start = time.perf_counter()
    hs.create_index(spark.read.parquet(str(path)), hsbloom.BFIndexConfig(name, ["k"]))
    return time.perf_counter() - start


def plan(bench, df) -> tuple[float, float, int, int]:
    """(Spark's planning ms, hsbloom's ms in the listing, files before, files after)."""
    spark_ms, hs_ms, before, after = bench.plan(jar.java_dataframe(df)).split()
    return float(spark_ms), float(hs_ms), int(before), int(after)


def real(spark, bench, n: int, args, refresh: bool) -> None:
    hs = hsbloom.Hyperspace(spark)
    path = tiny_files(n)
    name = f"bench_scale_{n}"
    create_s = fresh_index(spark, hs, path, name)
    info = hs.index(name)
    index_dir = DATA / "indexes" / name
    logs = sorted((index_dir / "_hsbloom_log").glob("*.json"))
    entry = logs[-1].stat().st_size if logs else 0
    # The version's data directories and its log entry; the log's older entries are history (earlier runs').
    parts = {d: sum(bytes_under(v / d) for v in index_dir.glob("v__=*")) for d in ("blocks", "files", "global")}
    stored = sum(bytes_under(v) for v in index_dir.glob("v__=*")) + entry
    print(f"\n{n:,} real files ({ROWS_PER_FILE} rows each): data {bytes_under(path):,} bytes, index "
          f"{stored:,} bytes on storage (hs.index: {info.index_bytes or 0:,}), latest log entry {entry:,} bytes; "
          f"create_index {create_s:.1f} s", flush=True)
    filters = sum(c.file_filter_bytes + c.global_filter_bytes for c in info.columns)
    bitsets = sum(pq.read_table(f, columns=["bitset_bytes"]).column(0).to_numpy().sum()
                  for f in index_dir.glob("v__=*/files/*.parquet"))
    print(f"  filter bytes {filters:,} (file and global filters as serialized, with their headers); index / "
          f"filters {stored / filters:.2f}x; index / (file bitsets + global filter) "
          f"{stored / (bitsets + sum(c.global_filter_bytes for c in info.columns)):.2f}x; on storage: blocks/ "
          f"{parts['blocks']:,}, files/ {parts['files']:,} ({parts['files'] / n:.1f} a file), global/ "
          f"{parts['global']:,}", flush=True)
    base = spark.read.parquet(str(path))
    base.count()  # Spark's own listing, done once, as for a table a session keeps
    rng = random.Random(n)
    value = lambda: key_of(rng.randrange(n), 0)  # noqa: E731
    catalog = jar.jar_class(spark, "index_catalog")
    hsbloom.enable(spark)
    catalog.invalidateAll()
    first = plan(bench, base.where(F.col("k") == value()))
    later = [plan(bench, base.where(F.col("k") == value())) for _ in range(args.rounds)]
    values = [value() for _ in range(args.in_values)]
    in_plan = plan(bench, base.where(F.col("k").isin(values)))
    new_read = plan(bench, spark.read.parquet(str(path)).where(F.col("k") == value()))
    hsbloom.disable(spark)
    off = [plan(bench, base.where(F.col("k") == value()))[0] for _ in range(args.rounds)]
    hsbloom.enable(spark)
    first_goal, later_goal = GOALS.get(n, (None, None))
    med = lambda xs: statistics.median(xs)  # noqa: E731
    goal = lambda g: f" (goal <= {g:.0f} ms)" if g else ""  # noqa: E731
    print(f"  first query of the version: hsbloom {first[1]:.1f} ms{goal(first_goal)}, Spark planning "
          f"{first[0]:.0f} ms; {first[2]:,} files -> {first[3]}")
    print(f"  later '=': hsbloom {med([p[1] for p in later]):.2f} ms{goal(later_goal)}, Spark planning on "
          f"{med([p[0] for p in later]):.1f} ms vs off {med(off):.1f} ms; files kept {[p[3] for p in later]}")
    print(f"  IN of {args.in_values}: hsbloom {in_plan[1]:.1f} ms, Spark planning {in_plan[0]:.0f} ms; "
          f"{in_plan[2]:,} files -> {in_plan[3]}")
    print(f"  '=' on a new spark.read: hsbloom {new_read[1]:.1f} ms, Spark planning {new_read[0]:.0f} ms")
    print(f"  loaded index in the driver: {bench.memory(jar.java_session(spark), ','.join(info.data_paths))}", flush=True)
    if refresh:
        extra = [path / f"extra-{f:07d}.parquet" for f in range(n // 100)]
        try:
            for f, target in enumerate(extra):
                write_file(target, n + f)
            start = time.perf_counter()
            hs.refresh_index(name, mode="incremental")
            print(f"  incremental refresh after {len(extra):,} new files: {time.perf_counter() - start:.1f} s",
                  flush=True)
        finally:
            for target in extra:
                target.unlink(missing_ok=True)


def synthetic(spark, bench, n: int, args) -> None:
    data_path = bench.write(jar.java_session(spark), str(DATA / "indexes_synthetic"), n, ROWS_PER_FILE, 64)
    fields = dict(kv.split("=") for kv in bench.run(jar.java_session(spark), data_path, n, args.in_values, args.rounds).split())
    first_goal, later_goal = GOALS.get(n, (None, None))
    goal = lambda g: f" (goal <= {g:.0f} ms)" if g else ""  # noqa: E731
    print(f"\n{n:,} synthetic files (a written file table and blocks, a listing made in the JVM; no Spark "
          f"query){' in a JVM that never loaded an index (code not compiled yet)' if fields['cold'] == 'true' and not args.real else ''}: "
          f"load {fields['load_ms']} ms (CPU of the process {fields['load_cpu_ms']} ms), first query {fields['first_query_ms']} ms{goal(first_goal)}; "
          f"later '=' {fields['eq_ms']} ms{goal(later_goal)} ({fields['eq_kept']} kept; the last one's CPU "
          f"{fields['eq_cpu_ms']} ms); IN of {args.in_values} "
          f"{fields['in_ms']} ms ({fields['in_kept']} kept); '=' on a new listing {fields['new_listing_eq_ms']} ms; "
          f"index in the driver: estimate {int(fields['index_bytes_estimate']):,} bytes, heap "
          f"{int(fields['index_heap_bytes']):,} bytes", flush=True)
    if args.profile_load:
        split = dict(kv.split("=") for kv in bench.profileLoad(jar.java_session(spark), data_path, n, args.rounds).split())
        phases = [k[: -len("_cpu_ms")] for k in split if k.endswith("_cpu_ms")]
        print(f"  where the first query's time goes (least of {args.rounds} rounds; ms wall / ms CPU / ms first "
              "round; row_* the record reader planning used before, column_* and load the one it uses now):")
        for phase in phases:
            print(f"    {phase:16s} {split[phase + '_ms']:>9s} {split[phase + '_cpu_ms']:>9s} "
                  f"{split[phase + '_cold_ms']:>9s}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", default="10000,100000", help="file counts of the real tables ('' for none)")
    parser.add_argument("--synthetic", default="1000000", help="file counts of synthetic indexes ('' for none)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--in-values", type=int, default=1000)
    parser.add_argument("--profile-load", action="store_true",
                        help="also print, per synthetic size, where the first query's time goes (jvm/bench LoadProfile)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.real.split(",") if s]
    spark = session("hsbloom-bench-scale", bench_jar=True)
    bench = bench_class(spark, "scale_bench")
    for n in sizes:
        real(spark, bench, n, args, refresh=n == max(sizes))
    for n in [int(s) for s in args.synthetic.split(",") if s]:
        synthetic(spark, bench, n, args)
    spark.stop()


if __name__ == "__main__":
    main()
