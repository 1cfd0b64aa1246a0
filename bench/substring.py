"""Substring search (issue 54): LIKE, ILIKE, startswith and endswith on a log-like table, hsbloom beside the limit.

    ./dev.sh bench substring [--rows N] [--files N] [--ngram N|auto] [--repeat N]

A table of --rows rows (default 20,000,000) in --files Parquet files (default 200), rows in random order (no
sorting): a message with an embedded trace id (32 hex digits) and an error code, a URL path with a 7-digit order
id, an email. One index has substring filters of the three columns, with the lower-cased filter too: n = --ngram
for all three, or (auto, the default) each column's n as create chooses it from the column's data.

Needles, each held by a few files: the trace id of one row inside the message, an error code two rows hold
(under 1 % of the files), a URL prefix with one order id (startswith), an email domain two rows hold (endswith),
and the ILIKE of each (the needle upper-cased). Common substrings, held by most files: a word of the message,
the URL's path, a common domain. Per query, side by side in one run (interleaved rounds, medians):

  files holding a match, files hsbloom reads; time with hsbloom off, on, and the limit: the same query over
  only the files that hold a match (their paths, the table's schema given).

Goals: a needle reads at most ceil(1.05 x the files holding a match), runs within 1.5x of the limit and at
least 5x faster than off; a common substring runs within 1.05x of off. Then the index's size beside the columns'
compressed size, the build's time beside a plain scan of the columns, and the arithmetic of n-grams (how many
distinct grams a file holds, so how large its filter is and how often a needle's grams are all there anyway).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import statistics
import time
from pathlib import Path

import pyarrow.parquet as pq
from common import DATA, session
from pyspark.sql import functions as F

import hsbloom
from hsbloom.errors import IndexNotFoundError
from hsbloom.explain import files_read

COLUMNS = ["message", "url", "email"]
TRACE_ROW = 123_456  # the row whose trace id is looked for
RARE_ROWS = (4_242, 15_000_017)  # the rows with the rare error code and the rare domain


def log_table(spark, rows: int, files: int) -> str:
    """The log-like table, written once under bench/data/ (rows assigned to files at random, not sorted)."""
    path = DATA / f"logs_{rows}_{files}"
    if (path / "_SUCCESS").exists():
        return str(path)
    print(f"generating {rows:,} rows in {files} files at {path} ...", flush=True)
    rare = F.col("id").isin(*RARE_ROWS)
    code = F.when(rare, F.lit("ERR_QUOTA_EXCEEDED")).otherwise(F.element_at(
        F.array(*[F.lit(c) for c in ("ERR_TIMEOUT", "ERR_CONN_RESET", "ERR_NOT_FOUND", "ERR_UNAUTHORIZED")]),
        (F.pmod(F.xxhash64("id", F.lit("code")), F.lit(4)) + 1).cast("int")))
    domain = F.when(rare, F.lit("rare-mail.example")).otherwise(F.element_at(
        F.array(*[F.lit(d) for d in ("gmail.com", "yahoo.com", "outlook.com", "corp.example")]),
        (F.pmod(F.xxhash64("id", F.lit("domain")), F.lit(4)) + 1).cast("int")))
    order = F.pmod(F.xxhash64("id", F.lit("order")), F.lit(9_000_000)) + 1_000_000
    (spark.range(rows, numPartitions=max(2, files // 4))
     .select("id",
             F.concat(F.lit("request "), F.md5(F.col("id").cast("string")), F.lit(" failed with "), code,
                      F.lit(" at gateway-"), F.col("id") % 97, F.lit(" after "), F.col("id") % 5000,
                      F.lit(" ms (timeout policy "), F.col("id") % 7, F.lit(")")).alias("message"),
             F.concat(F.lit("/api/v2/orders/"), order, F.lit("/items")).alias("url"),
             F.concat(F.lit("user"), F.col("id") % 500_000, F.lit("@"), domain).alias("email"))
     .repartition(files, F.rand(54))  # random order: every file holds rows from all over
     .write.mode("overwrite").parquet(str(path)))
    return str(path)


def queries(spark, path: str) -> tuple[dict[str, str], dict[str, str]]:
    """The needle queries (label -> condition), with the ILIKE of each (its pattern upper-cased), and the common
    ones."""
    trace = hashlib.md5(str(TRACE_ROW).encode()).hexdigest()
    order = spark.read.parquet(path).where(F.col("id") == 777).select("url").first().url.split("/")[4]
    patterns = {"trace": ("message", f"%{trace}%"), "code": ("message", "%ERR_QUOTA_EXCEEDED%"),
                "url": ("url", f"/api/v2/orders/{order}%"), "email": ("email", "%@rare-mail.example")}
    needles = {label: f"{c} LIKE '{p}'" for label, (c, p) in patterns.items()}
    needles |= {f"{label} ilike": f"{c} ILIKE '{p.upper()}'" for label, (c, p) in patterns.items()}
    common = {"word": "message LIKE '%timeout policy%'", "path": "url LIKE '%/items'",
              "domain": "email LIKE '%@gmail.com'"}
    return needles, common


def holders(spark, df, condition: str) -> list[str]:
    """The files that hold a row matching `condition` (hsbloom off)."""
    hsbloom.disable(spark)
    return sorted(r.f for r in df.where(condition).select(F.input_file_name().alias("f")).distinct().collect())


def timed_rounds(spark, runs: dict, repeat: int) -> dict[str, float]:
    """Median time of each run over `repeat` interleaved rounds, after one warm-up round; each run returns a count,
    and all counts must agree."""
    times: dict[str, list[float]] = {k: [] for k in runs}
    for round_ in range(-1, repeat):
        counts = set()
        for label, (enabled, run) in runs.items():
            (hsbloom.enable if enabled else hsbloom.disable)(spark)
            start = time.perf_counter()
            counts.add(run())
            if round_ >= 0:
                times[label].append(time.perf_counter() - start)
        assert len(counts) == 1, f"the runs disagree: {counts}"
    hsbloom.disable(spark)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--ngram", default="auto", help="the index's ngram_size: 2 to 8, or auto (chosen per column)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    ngram = None if args.ngram == "auto" else int(args.ngram)

    spark = session("hsbloom-bench-substring", driver_memory="8g")
    path = log_table(spark, args.rows, args.files)
    df = spark.read.parquet(path)
    schema = df.schema
    hs = hsbloom.Hyperspace(spark)
    name = f"bench_substring_{args.rows}_{args.files}_n{args.ngram}"
    # Every index of this table goes first, whatever its n: a query uses every index that covers its table.
    for n in [*range(2, 9), "auto"]:
        try:
            hs.delete_index(f"bench_substring_{args.rows}_{args.files}_n{n}", force=True)
            hs.vacuum_index(f"bench_substring_{args.rows}_{args.files}_n{n}")
        except IndexNotFoundError:
            pass

    start = time.perf_counter()
    df.select(*COLUMNS).write.format("noop").mode("overwrite").save()
    scan = time.perf_counter() - start
    start = time.perf_counter()
    hs.create_index(df, hsbloom.BFIndexConfig(name, ["id"], substring_columns=COLUMNS, ngram_size=ngram,
                                              substring_case_insensitive=True))
    build = time.perf_counter() - start
    info = hs.index(name)
    sizes = info.ngram_sizes
    print(f"\n{args.rows:,} rows in {args.files} files; index {name} (n: "
          + ", ".join(f"{c} {n}" for c, n in sizes.items())
          + f"): build {build:.1f} s, a plain scan of the columns {scan:.1f} s ({build / scan:.1f}x)")

    needles, common = queries(spark, path)
    print(f"\n{'query':12s} {'holders':>7s} {'read':>5s} {'goal':>5s}  {'off':>7s} {'on':>7s} {'limit':>7s}  "
          f"{'on/limit':>8s} {'off/on':>7s}  goals")
    for label, condition in {**needles, **common}.items():
        held = holders(spark, df, condition)
        hsbloom.enable(spark)
        read = files_read(df.where(condition).groupBy().count())  # the scan's metrics, without collecting rows
        limit_df = spark.read.schema(schema).parquet(*held) if held else None
        runs = {"off": (False, lambda: df.where(condition).count()),
                "on": (True, lambda: df.where(condition).count())}
        if limit_df is not None:
            runs["limit"] = (False, lambda: limit_df.where(condition).count())
        t = timed_rounds(spark, runs, args.repeat)
        limit = t.get("limit", float("nan"))
        is_needle = label in needles
        allowed = math.ceil(1.05 * len(held)) if is_needle else args.files
        if is_needle:
            met = read <= allowed and t["on"] <= 1.5 * limit and t["off"] >= 5 * t["on"]
        else:
            met = t["on"] <= 1.05 * t["off"]
        print(f"{label:12s} {len(held):7d} {read:5d} {allowed:5d}  {t['off']:6.2f}s {t['on']:6.2f}s {limit:6.2f}s  "
              f"{t['on'] / limit:7.2f}x {t['off'] / t['on']:6.2f}x  {'met' if met else 'MISSED'}", flush=True)

    compressed = {c: 0 for c in COLUMNS}
    for f in sorted(Path(path).glob("*.parquet")):
        meta = pq.ParquetFile(f).metadata
        for g in range(meta.num_row_groups):
            for k in range(meta.num_columns):
                column = meta.row_group(g).column(k)
                if column.path_in_schema in compressed:
                    compressed[column.path_in_schema] += column.total_compressed_size
    first = pq.read_table(sorted(Path(path).glob("*.parquet"))[0], columns=COLUMNS)
    per_file = {c: len({v[i:i + sizes[c]] for v in (x.encode() for x in first.column(c).to_pylist() if x)
                        for i in range(len(v) - sizes[c] + 1)}) for c in COLUMNS}
    print(f"\n{'filter':24s} {'bytes':>14s} {'grams (table)':>14s} {'grams (a file)':>15s}  column compressed  "
          "filter/column")
    for c in info.columns:
        if "(" not in c.column:
            continue
        source = c.column.split("(")[-1].rstrip(")")
        size = compressed[source]
        print(f"{c.column:24s} {c.file_filter_bytes:14,d} {c.ndv:14,d} {per_file[source]:15,d}  {size:17,d}  "
              f"{c.file_filter_bytes / size:12.2f}x")
    files_rows = args.rows // max(args.files, 1)
    n = sizes["message"]
    message_filter = next(c.file_filter_bytes for c in info.columns if c.column == f"ngram{n}(message)")
    bytes_per_gram = message_filter / max(args.files, 1) / max(per_file["message"], 1)
    print(f"\nThe arithmetic: a file's substring filter holds its distinct n-grams ("
          + ", ".join(f"{k}: {v:,d}" for k, v in per_file.items())
          + f" in the first file), at about {bytes_per_gram:.1f} bytes each (fpp {info.file_fpp:.5f}, power-of-two "
          f"sizes). A needle is "
          f"read in a file that lacks it only when all its probed grams are there anyway: a hex trace id's "
          f"{n}-grams are {16 ** n:,} possible ones, and a file of {files_rows:,} messages has "
          f"{files_rows * (32 - n + 1):,} trace grams, so it holds "
          f"{1 - math.exp(-files_rows * (32 - n + 1) / 16 ** n):.0%} of them (1 - e^(-k/m)).")
    spark.stop()


if __name__ == "__main__":
    main()
