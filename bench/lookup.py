"""Point lookups and IN-lists with hsbloom's file pruning beside the alternatives, and planning cost.

    ./dev.sh bench lookup [--rows N] [--files N] [--planning-files N] [--repeat N] [--small-fpp F] [--encrypted]

For a random long key and a uuid string key, for `=`, IN of 10 and IN of
1,000 values of keys that exist, the median time of:
(a) the full scan (hsbloom off);
(b) the same data rewritten with Parquet-native Bloom filters (hsbloom off);
(c) hsbloom (file pruning on, index built once);
(d) reading only the file(s) that hold a match directly: the physical limit.
Goals: (c) within 1.2x (=) and 1.5x (IN 10) of (d), (b) at least 2.5x (c),
with the index's default fpp (each file's filter at 0.05 / files:
docs/indexes.md#false-positive-rate). The same lookups with an index built at --small-fpp
(default 0.001) are printed beside them as (c'), labelled; fpp is the user's
knob, the default figures stay the headline. Each round runs (a), (b), (c),
(c') and (d) once, interleaved, so a load change hits all of them alike; the
figures are medians over --repeat rounds, after each method but (a) ran 3
times to warm up (the JIT compiles hsbloom's code as it compiles Spark's).

With --encrypted, the table is also written with both keys encrypted (Parquet
modular encryption, column key k1, plaintext footer signed with k2, the tests'
KMS client: jvm/testkms) and indexed with spark.hsbloom.index.encryption=columns
(its filters sealed, read whole into memory: docs/design/encryption.md); (e),
hsbloom over it, and its own limit (d_e), reading the encrypted files that hold
a match, are printed beside the rest with their ratio e/d_e.

Then, for `=` on each key, where a lookup's time goes: creating the
DataFrame (listing the files, inferring the schema), planning, and running,
for hsbloom off and on over the table's directory and for the limit over the
holders' paths; and the same lookup over the table as a catalog table
(`spark.table`: Spark keeps its listing and schema between queries) beside
its limit, the holders read with the table's schema given. A lookup over a
directory pays Spark's listing and schema inference of every file before
any rule runs, with hsbloom on or off; the limit does not.

Then, on a table of --planning-files files, what pruning adds to planning
(the PrunedFileIndex's own time, as hs.explain reports it): the first query of
an index version (which loads it) and later ones. Goal: at most 0.5 s.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import time
from pathlib import Path

from common import DATA, key_table, session
from pyspark.sql import functions as F

from hsbloom import jar, settings
import hsbloom
from hsbloom.errors import IndexExistsError, IndexNotFoundError
from hsbloom.explain import explain_string

COLUMNS = ["long_key", "uuid_key"]
WARM_UP_RUNS = 3


def ensure_index(spark, table: str, name: str, fpp: float | None = None) -> None:
    """Index `table` as `name` at `fpp` (None: the default), unless an index of that name and fpp exists."""
    hs = hsbloom.Hyperspace(spark)
    try:
        if hs.index(name).config.fpp != fpp:
            hs.delete_index(name, force=True)  # built at another fpp (an earlier default): rebuilt below
            hs.vacuum_index(name)
    except IndexNotFoundError:
        pass
    try:
        hs.create_index(
            spark.read.parquet(table), hsbloom.BFIndexConfig(name, COLUMNS, fpp=fpp, global_filter=False)
        )
    except IndexExistsError:
        pass


def index_copy(table: str, rows: int, files: int) -> str:
    """The table's files again under another directory (hard links), for an index with another fpp.

    An index covers a relation by its root path, so a second index of the same
    files at another fpp needs a second path: the copy shares the files' bytes.
    """
    path = DATA / f"keys_{rows}_{files}_second_index"
    if not (path / "_SUCCESS").exists():
        path.mkdir(parents=True, exist_ok=True)
        # _SUCCESS last, so that an interrupted copy is completed by the next run.
        for f in sorted(Path(table).iterdir(), key=lambda f: f.name == "_SUCCESS"):
            target = path / f.name
            if not target.exists():
                os.link(f, target)
    return str(path)


def native_copy(spark, table: str, rows: int, files: int) -> str:
    """The table rewritten with Parquet-native Bloom filters on both keys (written once, reused)."""
    path = DATA / f"keys_{rows}_{files}_native"
    if not (path / "_SUCCESS").exists():
        print(f"writing the Parquet-native copy at {path} ...", flush=True)
        writer = spark.read.parquet(table).repartition(files).write.mode("overwrite")
        for c in COLUMNS:
            writer = writer.option(f"parquet.bloom.filter.enabled#{c}", "true")
            writer = writer.option(f"parquet.bloom.filter.expected.ndv#{c}", str(rows // files))
        writer.parquet(str(path))
    return str(path)


# The tests' KMS client with two fixed keys (jvm/testkms): a benchmark of the encryption, not of a KMS.
ENCRYPTION = {
    "parquet.crypto.factory.class": "org.apache.parquet.crypto.keytools.PropertiesDrivenCryptoFactory",
    "parquet.encryption.kms.client.class": "hsbloom.testkms.TestKmsClient",
    "parquet.encryption.key.list": "k1:AAECAwQFBgcICQoLDA0ODw==,k2:EBESExQVFhcYGRobHB0eHw==",
}


def encrypted_copy(spark, table: str, rows: int, files: int) -> str:
    """The table rewritten with both keys encrypted under k1, footers plaintext, signed with k2 (written once)."""
    path = DATA / f"keys_{rows}_{files}_encrypted"
    if not (path / "_SUCCESS").exists():
        print(f"writing the encrypted copy at {path} ...", flush=True)
        spark.read.parquet(table).repartition(files).write.mode("overwrite").options(**{
            "parquet.encryption.column.keys": "k1:" + ",".join(COLUMNS), "parquet.encryption.footer.key": "k2",
            "parquet.encryption.plaintext.footer": "true"}).parquet(str(path))
    return str(path)


def condition(column: str, keys: list) -> F.Column:
    return F.col(column) == keys[0] if len(keys) == 1 else F.col(column).isin(keys)


def pruning_ms(df) -> tuple[int, int, float]:
    """(files before, files after, ms) of the pruned scan, as hs.explain reports it."""
    match = re.search(r"(\d+) files -> (\d+) \(checks: .*?, ([\d.]+) ms\)", explain_string(df))
    if not match:
        raise RuntimeError("the query was not pruned:\n" + explain_string(df))
    return int(match.group(1)), int(match.group(2)), float(match.group(3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--planning-files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--small-fpp", type=float, default=0.001, help="fpp of the second index, (c')")
    parser.add_argument("--planning-only", action="store_true", help="only the planning cost with many files")
    parser.add_argument("--encrypted", action="store_true", help="also (e): an encrypted copy, its index sealed")
    args = parser.parse_args()

    spark = session("hsbloom-bench-lookup", test_kms=args.encrypted)
    if args.encrypted:  # the session holds the keys: the sealed filters are read with its settings
        for key, value in {**ENCRYPTION, settings.INDEX_ENCRYPTION: "columns"}.items():
            spark.conf.set(key, value)
    if not args.planning_only:
        sample = sampled_rows(spark, key_table(spark, args.rows, args.files), args.rows)
        lookups(spark, args, sample)
        time_split(spark, args, sample)
    planning(spark, args)
    spark.stop()


def lookups(spark, args, sample: list) -> None:
    """(a)-(d), and (c') with a smaller fpp, for =, IN 10 and IN 1000 on both key columns."""
    table = key_table(spark, args.rows, args.files)
    native = native_copy(spark, table, args.rows, args.files)
    ensure_index(spark, table, f"bench_lookup_{args.rows}_{args.files}")
    second = index_copy(table, args.rows, args.files)
    ensure_index(spark, second, f"bench_lookup_{args.rows}_{args.files}_fpp{args.small_fpp:g}", fpp=args.small_fpp)
    encrypted = encrypted_copy(spark, table, args.rows, args.files) if args.encrypted else None
    if encrypted:
        ensure_index(spark, encrypted, f"bench_lookup_{args.rows}_{args.files}_encrypted")
    print(f"\n{args.rows:,} rows in {args.files} files, local[2], median of {args.repeat} interleaved rounds; "
          f"(c) index at the default fpp (0.05 / files a file filter), (c') at fpp {args.small_fpp:g}")
    header = ["column", "predicate", "(a) full", "(b) native", "(c) hsbloom", "(d) limit", "files c/d", "c/d",
              "b/c", "(c')", "files", "c'/d", "b/c'"] + (["(e)", "(d_e)", "e/d_e"] if encrypted else [])
    widths = [10, 9, 9, 11, 12, 10, 10, 6, 6, 7, 6, 6, 6] + ([8, 8, 6] if encrypted else [])
    print(" ".join(h.ljust(w) if k < 2 else h.rjust(w) for k, (h, w) in enumerate(zip(header, widths))))
    for column in COLUMNS:
        for label, n in [("=", 1), ("IN 10", 10), ("IN 1000", 1000)]:
            keys = [r[column] for r in sample[:n]]
            cond = condition(column, keys)
            hsbloom.enable(spark)
            matching = holder_files(spark, table, cond)
            hsbloom.disable(spark)

            def run(path_or_paths, enabled):
                paths = path_or_paths if isinstance(path_or_paths, list) else [path_or_paths]

                def action():
                    (hsbloom.enable if enabled else hsbloom.disable)(spark)
                    spark.read.parquet(*paths).where(cond).collect()
                return action

            methods = {"a": run(table, False), "b": run(native, False), "c": run(table, True),
                       "c2": run(second, True), "d": run(matching, False)}
            if encrypted:
                hsbloom.enable(spark)
                matching_e = holder_files(spark, encrypted, cond)
                methods.update(e=run(encrypted, True), de=run(matching_e, False))
            # Warm-up: the index versions loaded (the sealed filters decrypted), and every method's code compiled by
            # the JIT, hsbloom's own included: the rounds measure lookups in a running session (the first query of an
            # index version is the planning figure below).
            for _ in range(WARM_UP_RUNS):
                for m, action in methods.items():
                    if m != "a":  # the full scan warms what the native copy and the limit run too
                        action()
            times = {m: [] for m in methods}
            for _ in range(args.repeat):
                for m, action in methods.items():
                    start = time.perf_counter()
                    action()
                    times[m].append(time.perf_counter() - start)
            med = {m: statistics.median(t) for m, t in times.items()}
            hsbloom.enable(spark)
            after = pruning_ms(spark.read.parquet(table).where(cond))[1]
            after2 = pruning_ms(spark.read.parquet(second).where(cond))[1]
            hsbloom.disable(spark)
            print(f"{column:10s} {label:9s} {med['a']:8.2f}s {med['b']:10.2f}s {med['c']:11.2f}s {med['d']:9.2f}s "
                  f"{after:>4d}/{len(matching):<5d} {med['c'] / med['d']:5.2f}x {med['b'] / med['c']:5.2f}x "
                  f"{med['c2']:6.2f}s {after2:>6d} {med['c2'] / med['d']:5.2f}x {med['b'] / med['c2']:5.2f}x" +
                  (f" {med['e']:7.2f}s {med['de']:7.2f}s {med['e'] / med['de']:5.2f}x" if encrypted else ""),
                  flush=True)


def sampled_rows(spark, table: str, rows: int) -> list:
    """About 2,000 rows of the table, shuffled (seeded): keys from many files, not the first few."""
    sample = spark.read.parquet(table).sample(fraction=2000 / rows, seed=7).collect()
    random.Random(7).shuffle(sample)
    return sample


def holder_files(spark, table: str, cond) -> list[str]:
    """The files of `table` that hold a row matching `cond`: what the limit reads."""
    return sorted(r[0] for r in spark.read.parquet(table).where(cond).select(F.input_file_name()).distinct().collect())


def time_split(spark, args, sample: list) -> None:
    """Median milliseconds of a `=` lookup's phases: the DataFrame's creation, planning, running; by directory and
    by catalog table, each beside its limit."""
    table = key_table(spark, args.rows, args.files)
    spark.sql(f"CREATE TABLE IF NOT EXISTS bench_lookup_keys USING parquet LOCATION '{table}'")
    schema = spark.read.parquet(table).schema
    print(f"\nwhere a '=' lookup's time goes (median of {args.repeat} interleaved rounds, ms): "
          "create DataFrame / plan / run / total")
    for column in COLUMNS:
        cond = F.col(column) == sample[0][column]
        holders = holder_files(spark, table, cond)
        shapes = {  # name: (label, hsbloom on, the DataFrame before the filter)
            "off": ("hsbloom off, the directory", False, lambda: spark.read.parquet(table)),
            "on": ("hsbloom on, the directory", True, lambda: spark.read.parquet(table)),
            "limit": ("the limit, the holders' paths", False, lambda: spark.read.parquet(*holders)),
            "on_table": ("hsbloom on, the catalog table", True, lambda: spark.table("bench_lookup_keys")),
            "limit_table": ("the limit, the holders, schema given", False,
                            lambda: spark.read.schema(schema).parquet(*holders)),
        }
        times = {name: [] for name in shapes}
        for round_ in range(args.repeat + 1):  # the first round warms up
            for name, (_, enabled, source) in shapes.items():
                (hsbloom.enable if enabled else hsbloom.disable)(spark)
                start = time.perf_counter()
                df = source().where(cond)
                created = time.perf_counter()
                jar.java_dataframe(df).queryExecution().executedPlan()
                planned = time.perf_counter()
                df.collect()
                done = time.perf_counter()
                if round_:
                    times[name].append((created - start, planned - created, done - planned, done - start))
        hsbloom.disable(spark)
        med = {name: [statistics.median(t[k] for t in ts) * 1000 for k in range(4)] for name, ts in times.items()}
        print(f"{column} = ({len(holders)} holder file(s) of {args.files})")
        for name, (create_ms, plan_ms, run_ms, total_ms) in med.items():
            print(f"  {shapes[name][0]:38s} {create_ms:6.1f} {plan_ms:6.1f} {run_ms:7.1f} {total_ms:7.1f}")
        print(f"  on / limit: the directory {med['on'][3] / med['limit'][3]:.2f}x (creating its DataFrame: "
              f"+{med['on'][0] - med['limit'][0]:.1f} ms, paid with hsbloom off too; planning: "
              f"+{med['on'][1] - med['off'][1]:.1f} ms over off), "
              f"the catalog table {med['on_table'][3] / med['limit_table'][3]:.2f}x")


def planning(spark, args) -> None:
    """Pruning time of the first and later queries of an index version over many files."""
    many = key_table(spark, 2_000_000, args.planning_files, name=f"keys_2000000_{args.planning_files}")
    ensure_index(spark, many, f"bench_planning_{args.planning_files}")
    jar.jar_class(spark, "index_catalog").invalidateAll()
    hsbloom.enable(spark)
    key = spark.read.parquet(many).select("long_key").first()[0]
    df = spark.read.parquet(many).where(F.col("long_key") == key)
    start = time.perf_counter()
    before, after, cold_ms = pruning_ms(df)
    cold_total = time.perf_counter() - start
    warm = sorted(pruning_ms(spark.read.parquet(many).where(F.col("long_key") == key))[2] for _ in range(5))
    in1000 = [r[0] for r in spark.read.parquet(many).select("long_key").limit(1000).collect()]
    warm_in = pruning_ms(spark.read.parquet(many).where(F.col("long_key").isin(in1000)))[2]
    hsbloom.disable(spark)
    print(f"\nplanning with {before:,} indexed files (2M rows): pruning to {after} file(s) took "
          f"{cold_ms:.0f} ms on the first query of the index version (loading it; explain total "
          f"{cold_total:.1f} s), then {warm[len(warm) // 2]:.1f} ms (median of 5) for '=' and "
          f"{warm_in:.1f} ms for IN of 1000 (goal: at most 500 ms)")


if __name__ == "__main__":
    main()
