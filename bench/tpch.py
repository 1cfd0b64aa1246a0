"""TPC-H with hsbloom off and on: the 22 queries, then selective shapes against their limit.

    ./dev.sh bench tpch [--scale-factor 1] [--parts 24] [--repeat 5] [--seconds 30] [--shape-repeat 7]
                            [--queries 1,8,9] [--answers FILE]

The tables are generated as Parquet by tpchgen-cli (--parts files a table)
under bench/data/ and indexed on their key columns (tests/tpch_data.py):
l_orderkey, l_partkey, l_suppkey; o_orderkey, o_custkey; c_custkey;
p_partkey; ps_partkey, ps_suppkey; s_suppkey. Each query runs --repeat rounds
of off and on back to back, a short query enough rounds for about --seconds
of runs a side (bench/common.py: compare_off_on, interleaved); the medians are
printed with the median of the rounds' own on/off, whether the rows are
identical and whether the query meets its goal, then the totals.

Then the selective shapes, each with off, on and its limit: the same query
with hsbloom off over only the files of the probed table that hold matching
rows (perfect file pruning), with the files read by each. TPC-H writes orders
and lineitem in order-key order, so min/max statistics already prune order-key
lookups, while a customer's orders or a part's line items spread over most
files: the limit shows how much any file pruning can gain there.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from common import DATA, add_off_on_arguments, compare_off_on, interleaved, session, timed

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from tpch_data import canonical, create_indexes, generate, register_views, table_path  # noqa: E402
from tpch_queries import QUERIES  # noqa: E402

import hsbloom  # noqa: E402
from hsbloom.explain import files_read  # noqa: E402


def run_queries(spark, numbers: list[int], repeat: int, seconds: float) -> dict[str, list[str]]:
    """The queries off and on; returns each one's rows (as their texts), the same on and off where `identical`."""
    answers: dict[str, list[str]] = {}

    def run(n: int) -> list:
        rows = canonical(spark.sql(QUERIES[n]).collect())
        answers[f"Q{n}"] = [repr(r) for r in rows]
        return rows

    compare_off_on(spark, {f"Q{n}": (lambda n=n: run(n)) for n in numbers}, repeat, seconds)
    return answers


def check_answers(path: Path, answers: dict[str, list[str]], spark_version: str) -> None:
    """Each query's rows against those another Spark wrote to `path` (--answers), or written there when it has none:
    the rows must not depend on the Spark line hsbloom runs on."""
    if not path.exists():
        path.write_text(json.dumps({"spark": spark_version, "answers": answers}, indent=1) + "\n")
        print(f"\nanswers of Spark {spark_version} written to {path}", flush=True)
        return
    recorded = json.loads(path.read_text())
    differ = [q for q, rows in answers.items() if recorded["answers"].get(q) != rows]
    print(f"\nanswers against Spark {recorded['spark']}'s ({path}): "
          + (f"{len(answers)} of {len(answers)} the same" if not differ else f"DIFFERENT: {', '.join(differ)}"),
          flush=True)


def shapes(spark) -> list[tuple[str, str, str, str]]:
    """(label, query over {probe}, probed table, the probed rows that match: `SELECT <key column> ... `)."""
    customer = spark.sql("SELECT min(o_custkey) FROM orders").first()[0]
    three = [r[0] for r in spark.sql("SELECT DISTINCT o_custkey FROM orders ORDER BY o_custkey LIMIT 3").collect()]
    three_sql = ", ".join(str(k) for k in three)
    return [
        (f"one customer's orders (o_custkey = {customer})",
         f"SELECT count(*), sum(o_totalprice) FROM {{probe}} WHERE o_custkey = {customer}",
         "orders", f"o_custkey = {customer}"),
        (f"orders JOIN customer, c_custkey IN ({three_sql})",
         f"SELECT count(*), sum(o_totalprice) FROM {{probe}} JOIN customer ON o_custkey = c_custkey "
         f"WHERE c_custkey IN ({three_sql})",
         "orders", f"o_custkey IN ({three_sql})"),
        ("lineitem JOIN part, Brand#23 in MED BOX",
         "SELECT count(*), sum(l_extendedprice) FROM {probe} JOIN part ON l_partkey = p_partkey "
         "WHERE p_brand = 'Brand#23' AND p_container = 'MED BOX'",
         "lineitem", "l_partkey IN (SELECT p_partkey FROM part WHERE p_brand = 'Brand#23' AND p_container = 'MED BOX')"),
        ("lineitem JOIN orders of 1995-03-15",
         "SELECT count(*), sum(l_extendedprice) FROM {probe} JOIN orders ON l_orderkey = o_orderkey "
         "WHERE o_orderdate = date '1995-03-15'",
         "lineitem", "l_orderkey IN (SELECT o_orderkey FROM orders WHERE o_orderdate = date '1995-03-15')"),
    ]


def run_shapes(spark, directory: Path, repeat: int, seconds: float) -> None:
    print(f"\nshapes: off, on and limit the medians of at least {repeat} runs after a warm-up (more for short ones: "
          f"about {seconds:g} s a side, as many of the limit); on/off the median of the rounds' own ratios", flush=True)
    print(f"{'shape':52s} {'off':>8s} {'on':>8s} {'limit':>8s} {'on/off':>7s} {'on/limit':>8s}  "
          "files read off / on / limit", flush=True)
    for label, query, probed, matching in shapes(spark):
        files = [r[0] for r in spark.sql(
            f"SELECT DISTINCT f FROM (SELECT input_file_name() AS f, * FROM {probed}) WHERE {matching}").collect()]
        limit_view = f"{probed}_matching_files"
        if files:
            spark.read.parquet(*files).createOrReplaceTempView(limit_view)
        else:  # no file holds a match: the limit reads none
            spark.sql(f"SELECT * FROM {probed} WHERE false").createOrReplaceTempView(limit_view)
        sql, limit_sql = query.format(probe=probed), query.format(probe=limit_view)
        result = interleaved(spark, lambda: spark.sql(sql).collect(), repeat, seconds=seconds)
        hsbloom.disable(spark)
        limit_rows = spark.sql(limit_sql).collect()  # a warm-up, as off and on had; its rows are compared
        limit = timed(lambda: spark.sql(limit_sql).collect(), len(result.off))
        same = result.identical and limit_rows == spark.sql(sql).collect()
        read_off, read_limit = files_read(spark.sql(sql)), files_read(spark.sql(limit_sql))
        hsbloom.enable(spark)
        read_on = files_read(spark.sql(sql))
        hsbloom.disable(spark)
        print(f"{label:52s} {result.median_off:7.2f}s {result.median_on:7.2f}s {limit:7.2f}s {result.ratio:6.2f}x "
              f"{result.median_on / limit:7.2f}x  "
              f"{read_off} / {read_on} / {read_limit}{'' if same else '  RESULTS DIFFER'}", flush=True)
        register_views(spark, directory)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale-factor", type=float, default=1.0)
    parser.add_argument("--parts", type=int, default=24)
    add_off_on_arguments(parser)
    parser.add_argument("--shape-repeat", type=int, default=7,
                        help="runs of each selective shape, at least (more for short ones, as for the queries)")
    parser.add_argument("--answers", type=Path,
                        help="a JSON file of the queries' rows: compared with when it exists, else written")
    parser.add_argument("--queries", default="all",
                        help="comma-separated query numbers, 'all', or 'none' (the shapes only, in a cold session)")
    args = parser.parse_args()
    numbers = (sorted(QUERIES) if args.queries == "all" else [] if args.queries == "none"
               else [int(q) for q in args.queries.split(",")])

    spark = session("hsbloom-bench-tpch", driver_memory="4g")
    directory = DATA / f"tpch_sf{args.scale_factor:g}_{args.parts}"
    if not (directory / "_SUCCESS").exists():
        print(f"generating TPC-H at scale factor {args.scale_factor:g} in {args.parts} files a table "
              f"at {directory} ...", flush=True)
    generate(directory, args.scale_factor, args.parts)
    create_indexes(spark, directory, f"bench_tpch_sf{args.scale_factor:g}_{args.parts}_".replace(".", "_"))
    register_views(spark, directory)
    lineitem_files = len(spark.read.parquet(table_path(directory, "lineitem")).inputFiles())
    print(f"TPC-H scale factor {args.scale_factor:g}, {lineitem_files} lineitem files; local[2], "
          f"{args.repeat} rounds of off and on back to back (more for short queries: about {args.seconds:g} s a side), "
          "alternating which runs first")
    if numbers:
        answers = run_queries(spark, numbers, args.repeat, args.seconds)
        if args.answers:
            check_answers(args.answers, answers, spark.version)
    run_shapes(spark, directory, args.shape_repeat, args.seconds)
    hsbloom.disable(spark)
    spark.stop()


if __name__ == "__main__":
    main()
