"""The join cost model skips what cannot pay on a shape like TPC-H Q5, and the rows stay the same.

Three tables as in Q5's first joins: customers (every key once), orders (two a
customer, unique order keys) and line items (one to three an order), each
indexed on its keys. The query joins customer to orders to line items, with
orders filtered by date, as shuffle joins (broadcast off):

- file pruning of `o_custkey` from customer's keys: customer filters no rows,
  so its keys are all of `c_custkey`, which the index counts (2,000), far more
  than the few keys that would keep under half of the orders files;
- line items' global filter probed by `o_orderkey` after the join with
  customer: the join keeps at most the 4,000 order keys the index counts, all
  in the line items' filter.

With broadcasts on (as in TPC-H), customer's keys would come from its
broadcast at no second read, but 2,000 keys each in about a quarter of the
orders files keep every file: not taken either.
"""

from __future__ import annotations

import datetime
import random
import re

import pytest

import hsbloom
from hsbloom.explain import explain_string

CUSTOMERS, ORDERS = 2_000, 4_000
COST_MODEL = "spark.hsbloom.join.costModel"
QUERY = """
SELECT c_nation, count(*) AS items, sum(l_price) AS revenue
FROM customer JOIN orders ON c_custkey = o_custkey JOIN lineitem ON l_orderkey = o_orderkey
WHERE o_date >= date '2001-01-01'
GROUP BY c_nation ORDER BY c_nation"""


@pytest.fixture(scope="module")
def q5_shape(spark, tmp_path_factory, module_system_path):
    rng = random.Random(5)
    base = tmp_path_factory.mktemp("q5_shape")
    start = datetime.date(2000, 1, 1)
    customer = [(k, f"nation-{k % 5}") for k in range(CUSTOMERS)]
    orders = [(k, rng.randrange(CUSTOMERS), start + datetime.timedelta(days=rng.randrange(730))) for k in range(ORDERS)]
    lineitem = [(k, rng.randrange(1, 1000) / 10) for k in range(ORDERS) for _ in range(rng.randrange(1, 4))]
    tables = {
        "customer": (customer, "c_custkey long, c_nation string", 2, ["c_custkey"]),
        "orders": (orders, "o_orderkey long, o_custkey long, o_date date", 8, ["o_orderkey", "o_custkey"]),
        "lineitem": (lineitem, "l_orderkey long, l_price double", 8, ["l_orderkey"]),
    }
    hs = hsbloom.Hyperspace(spark)
    for name, (rows, schema, files, keys) in tables.items():
        path = str(base / name)
        spark.createDataFrame(rows, schema).repartition(files).write.parquet(path)
        hs.create_index(spark.read.parquet(path), hsbloom.BFIndexConfig(f"q5_{name}", keys, global_filter=True))
        spark.read.parquet(path).createOrReplaceTempView(name)
    previous = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    yield
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", previous)
    hsbloom.disable(spark)


def considered(spark) -> list[str]:
    hsbloom.enable(spark)
    try:
        text = explain_string(spark.sql(QUERY))
    finally:
        hsbloom.disable(spark)
    return text.split("Joins considered")[1].splitlines()


def test_q5_shape_skips_what_cannot_pay_and_says_why(spark, q5_shape):
    lines = considered(spark)
    pruning = [line for line in lines if "file pruning of o_custkey" in line]
    assert len(pruning) == 1 and ": skipped: " in pruning[0], lines
    counted = re.search(r"at most (\d+) build key\(s\) are worth it, and the build side filters no rows: "
                        r"its key has (\d+) distinct values \(its index\)", pruning[0])
    assert counted, pruning
    worth, keys = int(counted.group(1)), int(counted.group(2))
    assert 1 <= worth < 10 and abs(keys - CUSTOMERS) < CUSTOMERS * 0.05, pruning  # the index's ndv is an estimate
    probe = [line for line in lines if "global filter of q5_lineitem.l_orderkey on orders.o_orderkey" in line]
    assert len(probe) == 1, lines
    assert ": skipped: " in probe[0] and "probed (read through a join): all may pass" in probe[0], probe
    assert not any(": injected:" in line or ": installed:" in line for line in lines), lines


def test_q5_shape_same_rows_on_off_and_with_every_feature(spark, q5_shape):
    hsbloom.disable(spark)
    off = [tuple(r) for r in spark.sql(QUERY).collect()]
    hsbloom.enable(spark)
    on = [tuple(r) for r in spark.sql(QUERY).collect()]
    spark.conf.set(COST_MODEL, "false")
    try:
        forced = [tuple(r) for r in spark.sql(QUERY).collect()]
    finally:
        spark.conf.unset(COST_MODEL)
        hsbloom.disable(spark)
    assert len(off) == 5 and sum(r[1] for r in off) > 0
    assert on == off and forced == off


def test_q5_shape_broadcast_keys_that_keep_every_file_are_not_taken(spark, q5_shape):
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", str(10 << 20))
    try:
        lines = considered(spark)
        hsbloom.disable(spark)
        off = [tuple(r) for r in spark.sql(QUERY).collect()]
        hsbloom.enable(spark)
        on = [tuple(r) for r in spark.sql(QUERY).collect()]
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
        hsbloom.disable(spark)
    pruning = [line for line in lines if "file pruning of o_custkey" in line]
    assert len(pruning) == 1 and ": skipped: " in pruning[0], lines
    assert "no broadcast's keys either: " in pruning[0], pruning
    assert re.search(r"its key has \d+ distinct values \(its index\), which keep every file", pruning[0]), pruning
    assert on == off and len(off) == 5
