"""The Star Schema Benchmark with hsbloom off and on: 13 star joins of small dimensions to a large fact.

    ./dev.sh bench ssb [--scale-factor 1] [--fact-file-mb 8] [--repeat 5] [--seconds 30]
                           [--queries 1.1,3.4]

A second multi-join workload beside TPC-H (bench/tpch.py): every query joins
the fact `lineorder` to one to four small dimensions (`dwdate`, `customer`,
`supplier`, `part`) filtered on their attributes, the shape hsbloom's join
features (global filters, file pruning from build-side keys) are for. Each
query runs --repeat rounds of off and on back to back, a short query enough
rounds for about --seconds of runs a side (bench/common.py: compare_off_on,
interleaved); the medians are printed with the median of the rounds' own
on/off, whether the rows are identical and whether it meets the goal (within
1.10x or 0.3 s of off), then the totals. Then, per
query, one line of where hsbloom's time could go with it on: planning off and
on (parse to physical plan, fastest of 3), the scans it pruned with its index
checks' time (`hs.explain`'s "Indexes used"), and each join feature used or
skipped, grouped by why ("Joins considered"), so a slower query can be placed.

Data. No SSB generator is on PyPI, so SSB is derived with Spark from TPC-H at
the same scale factor (tests/tpch_data.py, tpchgen-cli, 24 files a table,
shared with bench/tpch.py) following SSB's definitions (O'Neil, O'Neil, Chen
and Revilak, "Star Schema Benchmark", revision 3): lineorder is lineitem
joined with its order (and its partsupp row for the supply cost), one row a
line item, written in order-key order as Parquet files of about
--fact-file-mb MB; each dimension is one file. Kept under
bench/data/ssb_sf<N>_<MB>mb with a `_SUCCESS` marker, generated once.
Indexed: lineorder on lo_custkey, lo_partkey, lo_suppkey, lo_orderdate; each
dimension on its key.

Where it departs from the SSB specification (none of it matters for a
benchmark of join planning and file pruning; all of it is deterministic):

- Value distributions are TPC-H's: 1.5 M orders of 1-7 lines at scale factor
  1 (about 6 M lineorder rows, as in SSB), order dates 1992-01-01..1998-08-02
  (so 1998 is short, as in SSB's own dbgen), customers 30,000 and suppliers
  2,000 a scale factor (SSB: 30,000 and 2,000), parts 200,000 a scale factor
  (SSB grows parts logarithmically: 200,000 * (1 + log2 SF)).
- A city is the first 9 characters of the nation name, padded with blanks,
  and the key's last digit (SSB: a random digit); a customer's or supplier's
  nation and region are TPC-H's.
- p_brand1 is MFGR#<m><n><b>: m and n from TPC-H's p_brand Brand#mn, b (01-40)
  from the part key (SSB: random); p_category is MFGR#<m><n>, p_mfgr MFGR#<m>;
  p_color is the first word of TPC-H's p_name.
- lo_supplycost is the line's partsupp ps_supplycost; lo_revenue is
  l_extendedprice * (1 - l_discount) rounded to cents; lo_discount and lo_tax
  are TPC-H's fractions times 100 (0-10 and 0-8, as SSB's); prices stay
  TPC-H's decimals, so sums are exact and answers compare exactly.
- dwdate covers 1992-01-01..1998-12-31; d_weeknuminyear is
  (day of year - 1) / 7 + 1; d_holidayfl marks only 1 Jan, 4 Jul and 25 Dec;
  d_sellingseason is Winter/Spring/Summer/Fall/Christmas by month.

Answers compare as the multiset of rows: Q3.x order by revenue, and rows with
equal revenue may come in either order.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import sys
import time
from pathlib import Path

from common import DATA, add_off_on_arguments, compare_off_on, session

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from tpch_data import canonical, generate, table_path  # noqa: E402

import hsbloom  # noqa: E402
from hsbloom import jar  # noqa: E402
from hsbloom.errors import IndexExistsError  # noqa: E402
from hsbloom.explain import explain_string  # noqa: E402

TPCH_PARTS = 24  # bench/tpch.py's default, so both benchmarks share the TPC-H data

TABLES = ["lineorder", "customer", "supplier", "part", "dwdate"]

# The key columns indexed, per table (one index per table).
INDEXED_KEYS: dict[str, list[str]] = {
    "lineorder": ["lo_custkey", "lo_partkey", "lo_suppkey", "lo_orderdate"],
    "customer": ["c_custkey"],
    "supplier": ["s_suppkey"],
    "part": ["p_partkey"],
    "dwdate": ["d_datekey"],
}

# The 13 queries, SSB's text with its `date` table named dwdate.
_Q1 = """SELECT sum(lo_extendedprice * lo_discount) AS revenue FROM lineorder, dwdate
WHERE lo_orderdate = d_datekey AND {dates} AND lo_discount BETWEEN {discount} AND lo_quantity {quantity}"""
_Q2 = """SELECT sum(lo_revenue), d_year, p_brand1 FROM lineorder, dwdate, part, supplier
WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey AND lo_suppkey = s_suppkey AND {part} AND s_region = '{region}'
GROUP BY d_year, p_brand1 ORDER BY d_year, p_brand1"""
_Q3 = """SELECT {c}, {s}, d_year, sum(lo_revenue) AS revenue FROM customer, lineorder, supplier, dwdate
WHERE lo_custkey = c_custkey AND lo_suppkey = s_suppkey AND lo_orderdate = d_datekey AND {where}
GROUP BY {c}, {s}, d_year ORDER BY d_year ASC, revenue DESC"""
_UK = ("(c_city = 'UNITED KI1' OR c_city = 'UNITED KI5') AND (s_city = 'UNITED KI1' OR s_city = 'UNITED KI5')")
_Q4 = """SELECT d_year, {cols}, sum(lo_revenue - lo_supplycost) AS profit FROM dwdate, customer, supplier, part, lineorder
WHERE lo_custkey = c_custkey AND lo_suppkey = s_suppkey AND lo_partkey = p_partkey AND lo_orderdate = d_datekey
AND {where} GROUP BY d_year, {cols} ORDER BY d_year, {cols}"""
QUERIES: dict[str, str] = {
    "1.1": _Q1.format(dates="d_year = 1993", discount="1 AND 3", quantity="< 25"),
    "1.2": _Q1.format(dates="d_yearmonthnum = 199401", discount="4 AND 6", quantity="BETWEEN 26 AND 35"),
    "1.3": _Q1.format(dates="d_weeknuminyear = 6 AND d_year = 1994", discount="5 AND 7",
                      quantity="BETWEEN 26 AND 35"),
    "2.1": _Q2.format(part="p_category = 'MFGR#12'", region="AMERICA"),
    "2.2": _Q2.format(part="p_brand1 BETWEEN 'MFGR#2221' AND 'MFGR#2228'", region="ASIA"),
    "2.3": _Q2.format(part="p_brand1 = 'MFGR#2221'", region="EUROPE"),
    "3.1": _Q3.format(c="c_nation", s="s_nation",
                      where="c_region = 'ASIA' AND s_region = 'ASIA' AND d_year >= 1992 AND d_year <= 1997"),
    "3.2": _Q3.format(c="c_city", s="s_city", where="c_nation = 'UNITED STATES' AND s_nation = 'UNITED STATES' "
                      "AND d_year >= 1992 AND d_year <= 1997"),
    "3.3": _Q3.format(c="c_city", s="s_city", where=f"{_UK} AND d_year >= 1992 AND d_year <= 1997"),
    "3.4": _Q3.format(c="c_city", s="s_city", where=f"{_UK} AND d_yearmonth = 'Dec1997'"),
    "4.1": _Q4.format(cols="c_nation", where="c_region = 'AMERICA' AND s_region = 'AMERICA' "
                      "AND (p_mfgr = 'MFGR#1' OR p_mfgr = 'MFGR#2')"),
    "4.2": _Q4.format(cols="s_nation, p_category", where="c_region = 'AMERICA' AND s_region = 'AMERICA' "
                      "AND (d_year = 1997 OR d_year = 1998) AND (p_mfgr = 'MFGR#1' OR p_mfgr = 'MFGR#2')"),
    "4.3": _Q4.format(cols="s_city, p_brand1", where="c_region = 'AMERICA' AND s_nation = 'UNITED STATES' "
                      "AND (d_year = 1997 OR d_year = 1998) AND p_category = 'MFGR#14'"),
}

_DATEKEY = "CAST(date_format({0}, 'yyyyMMdd') AS INT)"
_CITY = "concat(rpad(substr(n_name, 1, 9), 9, ' '), CAST({0} % 10 AS STRING))"


def derive(spark, tpch: Path, directory: Path, fact_file_mb: int) -> None:
    """Writes SSB's five tables under `directory`, once, from TPC-H under `tpch` (`_SUCCESS` last)."""
    if (directory / "_SUCCESS").exists():
        return
    if directory.exists():
        shutil.rmtree(directory)
    for table in ("lineitem", "orders", "partsupp", "customer", "supplier", "part", "nation", "region"):
        spark.read.parquet(table_path(tpch, table)).createOrReplaceTempView(f"tpch_{table}")
    place = ("JOIN tpch_nation ON {0}_nationkey = n_nationkey JOIN tpch_region ON n_regionkey = r_regionkey")
    tables = {
        "customer": f"""SELECT c_custkey, c_name, c_address, {_CITY.format('c_custkey')} AS c_city,
            n_name AS c_nation, r_name AS c_region, c_phone, c_mktsegment
            FROM tpch_customer {place.format('c')}""",
        "supplier": f"""SELECT s_suppkey, s_name, s_address, {_CITY.format('s_suppkey')} AS s_city,
            n_name AS s_nation, r_name AS s_region, s_phone FROM tpch_supplier {place.format('s')}""",
        "part": """SELECT p_partkey, p_name, concat('MFGR#', substr(p_brand, 7, 1)) AS p_mfgr,
            concat('MFGR#', substr(p_brand, 7, 2)) AS p_category,
            concat('MFGR#', substr(p_brand, 7, 2), lpad(CAST(p_partkey % 40 + 1 AS STRING), 2, '0')) AS p_brand1,
            substring_index(p_name, ' ', 1) AS p_color, p_type, p_size, p_container FROM tpch_part""",
        "dwdate": f"""SELECT {_DATEKEY.format('d')} AS d_datekey, date_format(d, 'MMMM d, yyyy') AS d_date,
            date_format(d, 'EEEE') AS d_dayofweek, date_format(d, 'MMMM') AS d_month, year(d) AS d_year,
            year(d) * 100 + month(d) AS d_yearmonthnum, date_format(d, 'MMMyyyy') AS d_yearmonth,
            dayofweek(d) AS d_daynuminweek, dayofmonth(d) AS d_daynuminmonth, dayofyear(d) AS d_daynuminyear,
            month(d) AS d_monthnuminyear, CAST((dayofyear(d) - 1) / 7 AS INT) + 1 AS d_weeknuminyear,
            CASE WHEN month(d) = 12 THEN 'Christmas' WHEN month(d) IN (1, 2) THEN 'Winter'
                 WHEN month(d) IN (3, 4, 5) THEN 'Spring' WHEN month(d) IN (6, 7, 8) THEN 'Summer'
                 ELSE 'Fall' END AS d_sellingseason,
            dayofweek(d) = 7 AS d_lastdayinweekfl, d = last_day(d) AS d_lastdayinmonthfl,
            date_format(d, 'MMdd') IN ('0101', '0704', '1225') AS d_holidayfl,
            dayofweek(d) BETWEEN 2 AND 6 AS d_weekdayfl
            FROM (SELECT explode(sequence(DATE '1992-01-01', DATE '1998-12-31')) AS d)""",
    }
    for table, sql in tables.items():
        spark.sql(sql).coalesce(1).write.parquet(str(directory / table))
    lineorder = spark.sql(f"""SELECT l_orderkey AS lo_orderkey, l_linenumber AS lo_linenumber,
        o_custkey AS lo_custkey, l_partkey AS lo_partkey, l_suppkey AS lo_suppkey,
        {_DATEKEY.format('o_orderdate')} AS lo_orderdate, o_orderpriority AS lo_orderpriority,
        o_shippriority AS lo_shippriority, CAST(l_quantity AS INT) AS lo_quantity,
        l_extendedprice AS lo_extendedprice, o_totalprice AS lo_ordtotalprice,
        CAST(l_discount * 100 AS INT) AS lo_discount,
        CAST(l_extendedprice * (1 - l_discount) AS DECIMAL(15, 2)) AS lo_revenue,
        ps_supplycost AS lo_supplycost, CAST(l_tax * 100 AS INT) AS lo_tax,
        {_DATEKEY.format('l_commitdate')} AS lo_commitdate, l_shipmode AS lo_shipmode
        FROM tpch_lineitem JOIN tpch_orders ON l_orderkey = o_orderkey
        JOIN tpch_partsupp ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey""")
    # Written once to learn its size, then again in files of about fact_file_mb MB, in order-key order.
    staging = directory / "_lineorder_staging"
    lineorder.write.parquet(str(staging))
    size = sum(f.stat().st_size for f in staging.glob("*.parquet"))
    files = max(1, math.ceil(size / (fact_file_mb * 1024 * 1024)))
    (spark.read.parquet(str(staging)).repartitionByRange(files, "lo_orderkey")
     .sortWithinPartitions("lo_orderkey", "lo_linenumber").write.parquet(str(directory / "lineorder")))
    shutil.rmtree(staging)
    (directory / "_SUCCESS").touch()


def register_views(spark, directory: Path) -> None:
    """Each table as a temporary view of its name, read afresh (so hsbloom's rules see the plain relation)."""
    for table in TABLES:
        spark.read.parquet(str(directory / table)).createOrReplaceTempView(table)


def create_indexes(spark, directory: Path, prefix: str) -> None:
    """One index per table on its key columns, with global filters (every join feature on); an existing one is kept
    (rebuilt when an older hsbloom wrote it)."""
    hs = hsbloom.Hyperspace(spark)
    for table, columns in INDEXED_KEYS.items():
        try:
            hs.create_index(spark.read.parquet(str(directory / table)),
                            hsbloom.BFIndexConfig(f"{prefix}{table}", columns, global_filter=True))
        except IndexExistsError:
            if hs.index(f"{prefix}{table}").needs_full_refresh:
                hs.refresh_index(f"{prefix}{table}", mode="full")


def sections(explained: str) -> dict[str, list[str]]:
    """The explain's sections by title ("Indexes used", ...), each its non-empty lines."""
    found: dict[str, list[str]] = {}
    parts = re.split(r"^={72}\n(.+?):?\n={72}$", explained, flags=re.M)
    for title, body in zip(parts[1::2], parts[2::2]):
        found[title.split(" (")[0]] = [line for line in body.splitlines() if line.strip()]
    return found


def decisions(explained: str) -> str:
    """One line of what hsbloom did with a query: the scans it pruned (files before -> after) and the time its
    index checks took, the join features it used, and the ones it skipped grouped by why."""
    parts = sections(explained)
    pruned, unchanged, millis, table = [], 0, 0.0, "?"
    for line in parts.get("Indexes used", []):
        if not line.startswith(" "):
            table = line.rstrip("/").split("/")[-1]
        elif m := re.search(r"(\d+) files -> (\d+)", line):
            if m[1] == m[2]:
                unchanged += 1
            else:
                pruned.append(f"{table} {m[1]}->{m[2]}")
            millis += sum(float(ms) for ms in re.findall(r", ([\d.]+) ms\)", line))
        elif line.strip().startswith("join on "):
            pruned.append(f"{table} ({line.strip()})")
    used, skipped = [], {}
    for line in parts.get("Joins considered", []):
        fields = line.split(": ", 3)
        if len(fields) < 3:
            continue
        feature, verdict = fields[1], fields[2]
        short = re.sub(r"^global filter of \S*?(\w+) on \S*?(\w+)$", r"gf \1->\2", feature)
        short = re.sub(r"^file pruning of (\S+) from the build side's keys$", r"fp \1", short)
        if verdict == "skipped":
            why = fields[3].split(": ")[0] if len(fields) > 3 else "no reason given"
            skipped.setdefault(why, []).append(short)
        else:
            used.append(f"{short} {verdict}")
    files = ", ".join(pruned) if pruned else "none pruned"
    why_skipped = "; ".join(", ".join(features) + f" ({why})" for why, features in skipped.items())
    return (f"files: {files} ({unchanged} scan(s) unchanged; index checks {millis:.1f} ms); "
            f"joins used: {', '.join(used) if used else 'none'}; skipped: {why_skipped or 'none'}")


def planning_ms(spark, sql: str, enabled: bool, repeat: int = 3) -> float:
    """The fastest of `repeat` plannings of `sql` (parse to physical plan, not run), in ms."""
    (hsbloom.enable if enabled else hsbloom.disable)(spark)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        jar.java_dataframe(spark.sql(sql)).queryExecution().executedPlan()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def run_queries(spark, names: list[str], repeat: int, seconds: float) -> None:
    runs = {f"Q{name}": (lambda name=name: sorted(canonical(spark.sql(QUERIES[name]).collect()), key=repr))
            for name in names}
    compare_off_on(spark, runs, repeat, seconds)
    print("\nwhere hsbloom's time goes with it on: planning off / on (fastest of 3), then hs.explain's decisions "
          "(gf: a global filter of the indexed column -> the probed one; fp: file pruning of a column from the "
          "build side's keys)", flush=True)
    for name in names:
        off_ms, on_ms = planning_ms(spark, QUERIES[name], False), planning_ms(spark, QUERIES[name], True)
        print(f"Q{name:<5s} planning {off_ms:.0f} / {on_ms:.0f} ms; "
              f"{decisions(explain_string(spark.sql(QUERIES[name])))}", flush=True)
    hsbloom.disable(spark)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale-factor", type=float, default=1.0)
    parser.add_argument("--fact-file-mb", type=int, default=8, help="about how large each lineorder file is")
    add_off_on_arguments(parser)
    parser.add_argument("--queries", default="all", help="comma-separated query names (1.1, ..., 4.3), or 'all'")
    args = parser.parse_args()
    names = list(QUERIES) if args.queries == "all" else [q.strip().lstrip("Qq") for q in args.queries.split(",")]
    unknown = [n for n in names if n not in QUERIES]
    if unknown:
        sys.exit(f"unknown queries {', '.join(unknown)}: choose from {', '.join(QUERIES)}")
    if args.fact_file_mb < 1:
        sys.exit("--fact-file-mb must be at least 1")

    spark = session("hsbloom-bench-ssb", driver_memory="4g")
    sf = f"{args.scale_factor:g}"
    directory = DATA / f"ssb_sf{sf}_{args.fact_file_mb}mb"
    if not (directory / "_SUCCESS").exists():
        tpch = DATA / f"tpch_sf{sf}_{TPCH_PARTS}"
        print(f"generating TPC-H at scale factor {sf} at {tpch}, then SSB from it at {directory} ...", flush=True)
        generate(tpch, args.scale_factor, TPCH_PARTS)
        hsbloom.disable(spark)
        derive(spark, tpch, directory, args.fact_file_mb)
    create_indexes(spark, directory, f"bench_ssb_sf{sf}_{args.fact_file_mb}mb_".replace(".", "_"))
    register_views(spark, directory)
    fact_files = len(spark.read.parquet(str(directory / "lineorder")).inputFiles())
    print(f"SSB scale factor {sf} (derived from TPC-H), {fact_files} lineorder files of about "
          f"{args.fact_file_mb} MB; local[2], {args.repeat} rounds of off and on back to back (more for short "
          f"queries: about {args.seconds:g} s a side), alternating which runs first")
    run_queries(spark, names, args.repeat, args.seconds)
    spark.stop()


if __name__ == "__main__":
    main()
