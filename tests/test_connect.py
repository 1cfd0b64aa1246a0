"""hsbloom on Spark Connect: a server started with hsbloom, and what a Connect client can do with it today.

One server for the file (tests/connect_server.py). Expressions on Connect DataFrames are SQL strings: this
process may also hold the classic `spark` session, so `pyspark.sql.functions` build classic columns here.
"""

from __future__ import annotations

import pytest

import hsbloom
from connect_server import connect_server, connect_spark  # noqa: F401  (fixtures)
from hsbloom import jar
from pruning_support import create_index


def scan_metric(df, name: str) -> int:
    """Run `df` on Connect; the sum of the SQL metric `name` over its plan's nodes, as the server reports them."""
    df.collect()
    _, nodes = df.executionInfo.metrics.extract_graph()
    return sum(m.value for node in nodes.values() for m in node.metrics if m.name == name)


def test_the_server_runs_hsbloom_and_delta(connect_server, connect_spark):
    assert connect_server.running() and connect_server.url.startswith("sc://127.0.0.1:")
    extensions = connect_spark.conf.get("spark.sql.extensions").split(",")
    assert extensions == [hsbloom.session.EXTENSION_CLASS, hsbloom.session.DELTA_EXTENSION_CLASS]
    assert connect_spark.sql("SELECT hsbloom_version() AS v").first()["v"] == hsbloom.__version__
    assert connect_spark.conf.get("spark.sql.catalog.spark_catalog") == hsbloom.session.DELTA_CATALOG_CLASS


def test_enable_disable_and_is_enabled_set_the_connect_session_without_py4j(connect_spark, monkeypatch):
    def no_jvm(*args, **kwargs):
        raise AssertionError("a Connect session reached for the JVM through py4j")

    monkeypatch.setattr(jar, "jvm", no_jvm)
    monkeypatch.setattr(jar, "jar_class", no_jvm)
    assert not hsbloom.is_enabled(connect_spark)
    hsbloom.enable(connect_spark)
    assert hsbloom.is_enabled(connect_spark)
    assert connect_spark.conf.get("spark.hsbloom.enabled") == "true"  # the server's session has it
    hsbloom.disable(connect_spark)
    assert not hsbloom.is_enabled(connect_spark)


def test_hyperspace_still_refuses_a_connect_session(connect_spark):
    with pytest.raises(hsbloom.HsbloomSessionError, match="This is a Spark Connect session") as raised:
        hsbloom.Hyperspace(connect_spark)
    assert "hsbloom.enable, disable and is_enabled work" in str(raised.value)


def test_delta_and_parquet_tables_written_through_connect_are_read_back(connect_spark, tmp_path):
    rows = connect_spark.range(200).selectExpr("id", "concat('k', id) AS key")
    rows.write.format("delta").save(str(tmp_path / "delta"))
    rows.write.parquet(str(tmp_path / "parquet"))

    delta = connect_spark.sql(f"SELECT * FROM delta.`{tmp_path / 'delta'}` WHERE key = 'k42'")
    assert [tuple(r) for r in delta.collect()] == [(42, "k42")]
    parquet = connect_spark.read.parquet(str(tmp_path / "parquet"))
    assert [tuple(r) for r in parquet.where("id IN (7, 150)").orderBy("id").collect()] == [(7, "k7"), (150, "k150")]


def test_an_index_made_by_a_classic_session_prunes_connect_queries(spark, system_path, connect_spark, tmp_path):
    """The classic session and the server share the system path; the server's JVM reads the index it never saw."""
    data = str(tmp_path / "events")
    spark.range(0, 4000, numPartitions=1).selectExpr("id", "id % 7 AS bucket").repartitionByRange(8, "id") \
        .write.parquet(data)
    create_index(spark, data, "connect_ids", ["id"])
    connect_spark.conf.set("spark.hsbloom.system.path", str(system_path))

    def lookup():
        return connect_spark.read.parquet(data).where("id IN (17, 3333)").select("id", "bucket")

    hsbloom.disable(connect_spark)
    off = lookup()
    files_off = scan_metric(off, "numFiles")
    hsbloom.enable(connect_spark)
    on = lookup()
    files_on = scan_metric(on, "numFiles")
    assert sorted(tuple(r) for r in on.collect()) == sorted(tuple(r) for r in off.collect()) == [(17, 3), (3333, 1)]
    assert files_off == 8
    assert files_on == 2
    assert scan_metric(lookup(), "hsbloomFilesPruned") == 6
