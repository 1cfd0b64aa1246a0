"""The lookup table read without Spark: DuckDB and pyarrow over all files, the native-filter copy, hsbloom's
pruned list, and the limit; then opening an index of 100,000 files and probing it.

    ./dev.sh bench readers [--rows N] [--files N] [--repeat N]        (or .venv/bin/python bench/readers.py)

For a random long key and a uuid key, for `=` and IN of 10 keys that exist, the median time of:
(a) the full read (every file of the table);
(b) the copy with Parquet-native Bloom filters (DuckDB uses them to skip row groups);
(c) hsbloom: the index is opened once per process (as a service would), and each query lists the table
    (staleness), probes the index and reads the kept files;
(d) the limit: reading only the files that hold the values.
Goals (issue #35): (c) within 1.5x of (d), and at least 5x faster than DuckDB over (b).
Then the index of bench/data/scale_100000 (bench/scale.py builds it): the time to open it, and of a probe
(`Index.candidates`, no listing). Goals: 1 s and 50 ms. The table, its native copy and the index are built with
Spark when missing (bench/lookup.py's), and reused.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

import duckdb
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from hsbloom.readers import eq, isin, open_index
from hsbloom.readers.adapters import file_list, pyarrow_dataset

DATA = Path(__file__).resolve().parent / "data"
COLUMNS = ["long_key", "uuid_key"]


def ensure_data(rows: int, files: int) -> tuple[str, str, str]:
    """(table, native copy, index directory), built with Spark only when one is missing."""
    table, native = DATA / f"keys_{rows}_{files}", DATA / f"keys_{rows}_{files}_native"
    index = DATA / "indexes" / f"bench_lookup_{rows}_{files}"
    if not ((table / "_SUCCESS").exists() and (native / "_SUCCESS").exists() and (index / "_hsbloom_log").exists()):
        from common import key_table, session
        from lookup import ensure_index, native_copy

        spark = session("hsbloom-bench-readers")
        key_table(spark, rows, files)
        native_copy(spark, str(table), rows, files)
        ensure_index(spark, str(table), index.name)
        spark.stop()
    return str(table), str(native), str(index)


def sample_keys(table: str, count: int, seed: int) -> list[tuple[str, object, object]]:
    """(file, long key, uuid key) of one row from each of `count` different files."""
    files = sorted(str(p) for p in Path(table).glob("*.parquet"))
    rng = random.Random(seed)
    out = []
    for f in rng.sample(files, count):
        t = pq.ParquetFile(f).read_row_group(0, columns=COLUMNS)
        i = rng.randrange(t.num_rows)
        out.append((f, t["long_key"][i].as_py(), t["uuid_key"][i].as_py()))
    return out


def _sql_list(values: list) -> str:
    return ", ".join(f"'{v}'" if isinstance(v, str) else str(v) for v in values)


def duckdb_read(files, column: str, values: list) -> int:
    listing = f"'{files}'" if isinstance(files, str) else "[" + ", ".join(f"'{f}'" for f in files) + "]"
    return duckdb.sql(f"SELECT count(*) FROM read_parquet({listing}) WHERE {column} IN ({_sql_list(values)})").fetchall()[0][0]


def pyarrow_read(dataset: ds.Dataset, column: str, values: list) -> int:
    return dataset.to_table(filter=pc.field(column).isin(values)).num_rows


def median_ms(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def lookups(args) -> None:
    table, native, index_dir = ensure_data(args.rows, args.files)
    start = time.perf_counter()
    index = open_index(index_dir)  # once per process
    print(f"opened {index_dir} ({len(index._held)} files) in {(time.perf_counter() - start) * 1000:.0f} ms")
    keys = sample_keys(table, 10, seed=35)
    header = f"{'reader':8} {'column':9} {'predicate':9} {'(a) full':>9} {'(b) native':>10} {'(c) hsbloom':>11} " \
             f"{'(d) limit':>9} {'c/d':>5} {'b/c':>6} files c/d"
    print(header)
    for column in COLUMNS:
        for label, chosen in (("=", keys[:1]), ("IN 10", keys)):
            values = [k[1] if column == "long_key" else k[2] for k in chosen]
            limit_files = sorted({k[0] for k in chosen})
            predicate = eq(column, values[0]) if len(values) == 1 else isin(column, values)
            pruned = index.prune(predicate)
            for reader in ("duckdb", "pyarrow"):
                if reader == "duckdb":
                    runs = {"a": lambda: duckdb_read(f"{table}/*.parquet", column, values),
                            "b": lambda: duckdb_read(f"{native}/*.parquet", column, values),
                            "c": lambda: duckdb_read(file_list(index.prune(predicate)), column, values),
                            "d": lambda: duckdb_read(limit_files, column, values)}
                else:
                    runs = {"a": lambda: pyarrow_read(ds.dataset(table, format="parquet"), column, values),
                            "b": lambda: pyarrow_read(ds.dataset(native, format="parquet"), column, values),
                            "c": lambda: pyarrow_read(pyarrow_dataset(index.prune(predicate)), column, values),
                            "d": lambda: pyarrow_read(ds.dataset(limit_files, format="parquet"), column, values)}
                counts = {m: run() for m, run in runs.items()}
                assert len(set(counts.values())) == 1, f"the methods disagree: {counts}"
                ms = {m: median_ms(run, args.repeat) for m, run in runs.items()}
                print(f"{reader:8} {column:9} {label:9} {ms['a']:9.1f} {ms['b']:10.1f} {ms['c']:11.1f} {ms['d']:9.1f} "
                      f"{ms['c'] / ms['d']:5.2f} {ms['b'] / ms['c']:6.1f} {len(pruned.files)}/{len(limit_files)}")


def scale(args) -> None:
    index_dir = DATA / "indexes" / "bench_scale_100000"
    if not (index_dir / "_hsbloom_log").exists():
        print(f"no index at {index_dir}: run bench/scale.py first; skipping the open/probe figures")
        return
    start = time.perf_counter()
    index = open_index(str(index_dir))
    opened = (time.perf_counter() - start) * 1000
    column = index.version.indexed_columns[0]
    probe = median_ms(lambda: index.candidates(eq(column, 12345)), args.repeat)
    print(f"index of {len(index._held):,} files: opened in {opened:.0f} ms (goal 1000), a probe in {probe:.1f} ms "
          "(goal 50)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-scale", action="store_true")
    args = parser.parse_args()
    lookups(args)
    if not args.skip_scale:
        scale(args)


if __name__ == "__main__":
    main()
