"""Delta MERGE, DELETE and UPDATE by key: hsbloom off, on, and the limit perfect pruning could reach.

    ./dev.sh bench upsert [--rows N] [--files N] [--scale N] [--dv on|off|both] [--keys long_key,uuid_key]

A Delta table of --rows rows in --files files (a random long key and a uuid string key, both indexed at the
default fpp). Each statement runs from the same table version three ways: with hsbloom off, with hsbloom on,
and "limit": the same statement on a copy of the table that holds only the files with its keys (what perfect
pruning could reach). Statements, with random existing keys: MERGE of 10 and of 100 updated rows, DELETE of
10 keys, UPDATE of 1 key. Per run: the time, the target files the touched-file scans read (before -> after
hsbloom, from `hs.run_explained`) and the files the commit rewrote. Then the same on --scale times the table
(and files), to show that with hsbloom the cost grows with the keys, not with the table; with deletion
vectors off only the first size runs (the growth is shown with them on, Delta's default for new tables here).
`--prepare` writes the tables and their indexes and stops (so a timed run can start on a quiet machine).

A DML statement changes the table, so RESTORE brings it back after every run. With hsbloom on and for the
limit the fastest of --repeat runs counts (the two are compared within 1.3x); off runs once (it is the
baseline whose growth with the table is shown).
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import time
from pathlib import Path

from common import DATA, key_rows, session
from pyspark.sql import functions as F

import hsbloom
from hsbloom.errors import IndexExistsError
from hsbloom.explain import run_explained_string


def delta_table(spark, rows: int, files: int, dv: bool) -> str:
    path = DATA / f"upsert_{rows}_{files}_{'dv' if dv else 'nodv'}"
    if not (path / "_delta_log").exists():
        print(f"generating {rows:,} rows in {files} Delta files at {path} ...", flush=True)
        key_rows(spark, 0, rows, files).write.format("delta") \
            .option("delta.enableDeletionVectors", str(dv).lower()).save(str(path))
    return str(path)


def index_name(rows: int, files: int, dv: bool) -> str:
    return f"bench_upsert_{rows}_{files}_{int(dv)}"


def ensure_index(spark, path: str, name: str, keys: list[str]) -> None:
    try:
        hsbloom.Hyperspace(spark).create_index(spark.read.format("delta").load(path),
                                               hsbloom.BFIndexConfig(name, keys))
    except IndexExistsError:
        pass


def sample_rows(spark, path: str, rows: int, n: int, seed: int) -> list:
    """`n` random rows of the table (spread over its files, not the first ones), each with `_file`, the file
    that holds it (keys are unique, so that file is the only one holding its key)."""
    fraction = min(1.0, 50.0 * n / rows)
    found = spark.read.format("delta").load(path).sample(fraction=fraction, seed=seed) \
        .withColumn("_file", F.input_file_name()).collect()
    return random.Random(seed).sample(found, n)


def statements(key: str, rows: list) -> dict[str, str]:
    def literal(v) -> str:
        return f"'{v}'" if isinstance(v, str) else str(v)

    return {
        "MERGE 10": f"MERGE INTO {{t}} t USING upsert_src10 s ON t.{key} = s.{key} "
                    "WHEN MATCHED THEN UPDATE SET payload = s.payload WHEN NOT MATCHED THEN INSERT *",
        "MERGE 100": f"MERGE INTO {{t}} t USING upsert_src100 s ON t.{key} = s.{key} "
                     "WHEN MATCHED THEN UPDATE SET payload = s.payload WHEN NOT MATCHED THEN INSERT *",
        "DELETE 10": f"DELETE FROM {{t}} WHERE {key} IN ({', '.join(literal(r[key]) for r in rows[:10])})",
        "UPDATE 1": f"UPDATE {{t}} SET payload = -1 WHERE {key} = {literal(rows[0][key])}",
    }


def limit_table(spark, holders: set[str], dv: bool, target: Path) -> str:
    """A Delta table over copies of only the files `holders` that hold the statement's keys (CONVERT TO DELTA:
    same files, no rewrite)."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in holders:
        shutil.copy(name.removeprefix("file:"), target)
    spark.sql(f"CONVERT TO DELTA parquet.`{target}`")
    spark.sql(f"ALTER TABLE delta.`{target}` SET TBLPROPERTIES ('delta.enableDeletionVectors' = '{str(dv).lower()}')")
    return str(target)


def rewritten(spark, path: str) -> str:
    metrics = spark.sql(f"DESCRIBE HISTORY delta.`{path}` LIMIT 1").first().operationMetrics or {}
    removed = metrics.get("numTargetFilesRemoved", metrics.get("numRemovedFiles", "0"))
    dvs = metrics.get("numDeletionVectorsAdded", metrics.get("numTargetDeletionVectorsAdded", "0"))
    return f"{removed} files, {dvs} DVs"


def run(spark, statement: str, path: str, enabled: bool) -> tuple[float, list[tuple[int, int]], int]:
    (hsbloom.enable if enabled else hsbloom.disable)(spark)
    version = spark.sql(f"DESCRIBE HISTORY delta.`{path}` LIMIT 1").first().version
    start = time.perf_counter()
    report = run_explained_string(spark, statement.format(t=f"delta.`{path}`"))
    seconds = time.perf_counter() - start
    scans = [(int(a), int(b)) for a, b in re.findall(r"(\d+) files -> (\d+)", report.split("Joins considered")[0])]
    return seconds, scans, version


def restore(spark, path: str, version: int) -> None:
    hsbloom.disable(spark)
    spark.sql(f"RESTORE TABLE delta.`{path}` TO VERSION AS OF {version}")


def measure(spark, rows: int, files: int, dv: bool, keys: list[str], repeat: int, only: set[str]) -> None:
    path = delta_table(spark, rows, files, dv)
    ensure_index(spark, path, index_name(rows, files, dv), keys)
    print(f"\n{rows:,} rows in {files} files, deletion vectors {'on' if dv else 'off'}")
    print(f"{'key':9s} {'statement':10s} {'off':>8s} {'on':>8s} {'limit':>8s}  {'on/limit':>8s}  "
          f"{'files read off -> on (limit)':30s} rewritten (on)")
    for seed, key in enumerate(keys):
        sample = sample_rows(spark, path, rows, 100, seed)
        for n in (10, 100):
            spark.createDataFrame([r.asDict() | {"payload": float(i)} for i, r in enumerate(sample[:n])]) \
                .select("long_key", "uuid_key", "payload").createOrReplaceTempView(f"upsert_src{n}")
        for label, statement in statements(key, sample).items():
            if only and label not in only:
                continue
            holders = {r["_file"] for r in sample[:int(label.split()[1])]}
            limit = limit_table(spark, holders, dv, DATA / "upsert_limit")
            times, scans = {}, {}
            for mode, target, enabled in (("off", path, False), ("on", path, True), ("limit", limit, False)):
                runs = []
                # MERGE 100's claim is the files it reads, not its time: one run of each.
                for _ in range(1 if mode == "off" or label == "MERGE 100" else repeat):
                    seconds, scans[mode], version = run(spark, statement, target, enabled)
                    runs.append(seconds)
                    if mode == "on":
                        changed = rewritten(spark, path)
                    restore(spark, target, version)
                times[mode] = min(runs)
            before = sum(b for b, _ in scans["on"]) if scans["on"] else "-"
            after = sum(a for _, a in scans["on"]) if scans["on"] else "not pruned"
            limit_files = len(spark.read.format("delta").load(limit).inputFiles())
            print(f"{key:9s} {label:10s} {times['off']:7.2f}s {times['on']:7.2f}s {times['limit']:7.2f}s  "
                  f"{times['on'] / times['limit']:7.2f}x  {f'{before} -> {after} ({limit_files})':30s} {changed}",
                  flush=True)
    hsbloom.disable(spark)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--scale", type=int, default=5, help="then the same at this many times rows and files")
    parser.add_argument("--dv", choices=["on", "off", "both"], default="both")
    parser.add_argument("--keys", default="long_key,uuid_key")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each statement with hsbloom on and of "
                        "the limit (the fastest counts); off runs once")
    parser.add_argument("--statements", default="", help="only these (comma-separated labels, e.g. 'DELETE 10')")
    parser.add_argument("--sizes", default="", help="only these multiples of the table (e.g. '5'), default 1 and --scale")
    parser.add_argument("--prepare", action="store_true", help="write the tables and indexes, time nothing")
    args = parser.parse_args()
    keys = args.keys.split(",")
    only = {s.strip() for s in args.statements.split(",") if s.strip()}
    spark = session("hsbloom-bench-upsert", delta=True, driver_memory="4g")
    for dv in {"on": [True], "off": [False], "both": [True, False]}[args.dv]:
        sizes = [int(f) for f in args.sizes.split(",")] if args.sizes else sorted({1, args.scale}) if dv else [1]
        for factor in sizes:
            rows, files = args.rows * factor, args.files * factor
            if args.prepare:
                ensure_index(spark, delta_table(spark, rows, files, dv), index_name(rows, files, dv), keys)
            else:
                measure(spark, rows, files, dv, keys, args.repeat, only)
    spark.stop()


if __name__ == "__main__":
    main()
