"""A Spark Connect round trip: a server started with hsbloom (`hsbloom.start_connect_server`) and a client of it
that creates an index, queries through it with the same rows as without it, refreshes, drops and vacuums it.

Collected only where the running Spark's Connect server takes hsbloom (`running_line().connect`); where it
does not (3.5), test_connect_refused.py checks that hsbloom says so.

This process also holds the classic session: the client is made with Connect's own builder, which may share a
process with it, and its expressions are SQL strings (`pyspark.sql.functions` build classic columns here).
"""

from __future__ import annotations

import pytest

import hsbloom
from conftest import SESSION_SETTINGS, free_port
from hsbloom.errors import IndexNotFoundError

# A loaded 2-core machine starts a Connect server in 10-60 s.
SERVER_START_TIMEOUT = 300


@pytest.fixture(scope="module")
def connect_spark(tmp_path_factory):
    """A Connect client session of a server with hsbloom, whose warehouse and indexes are under pytest's tmp dir."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    root = tmp_path_factory.mktemp("connect")
    conf = {
        **SESSION_SETTINGS,
        "spark.local.dir": str(root / "local"),
        "spark.sql.warehouse.dir": str(root / "warehouse"),
        "spark.hsbloom.system.path": str(root / "indexes"),
    }
    with hsbloom.start_connect_server(port=free_port(), master="local[2]", conf=conf, timeout=SERVER_START_TIMEOUT,
                                      log_path=root / "server.log") as server:  # fmt: skip
        session = ConnectSession.builder.remote(server.url).create()
        yield session
        session.stop()  # before the server stops: a client whose server is gone retries for minutes


def explained(hs, df) -> str:
    lines: list[str] = []
    hs.explain(df, redirect_func=lines.append)
    return "\n".join(lines)


def test_an_index_from_a_connect_client(connect_spark, tmp_path):
    spark = connect_spark
    assert spark.sql("SELECT hsbloom_version() AS v").first().v == hsbloom.__version__  # the server runs this hsbloom
    data = str(tmp_path / "events")
    spark.range(0, 4000, 1, 8).selectExpr("id", "concat('k', id, 'ü') AS name").write.parquet(data)
    hs = hsbloom.Hyperspace(spark)
    hs.create_index(spark.read.parquet(data), hsbloom.BFIndexConfig("connect_events", ["id", "name"]))
    info = hs.index("connect_events")
    assert (info.state.value, info.num_files, info.num_rows) == ("ACTIVE", 8, 4000)

    def lookup_rows(enabled: bool) -> list[tuple]:
        (hsbloom.enable if enabled else hsbloom.disable)(spark)
        assert hsbloom.is_enabled(spark) == enabled
        lookups = spark.read.parquet(data).where("id IN (42, 3999, -1) OR name = 'k1234ü'")
        return sorted(tuple(row) for row in lookups.collect())

    assert lookup_rows(True) == lookup_rows(False) == [(42, "k42ü"), (1234, "k1234ü"), (3999, "k3999ü")]
    hsbloom.enable(spark)
    assert "8 files -> 1" in explained(hs, spark.read.parquet(data).where("id = 42"))

    spark.range(5000, 5100, 1, 2).selectExpr("id", "concat('k', id, 'ü') AS name").write.mode("append").parquet(data)
    refreshed = hs.refresh_index("connect_events", "incremental")
    assert (refreshed.refreshed, refreshed.appended_files, refreshed.data_version) == (True, 2, 1)
    assert "10 files -> 1" in explained(hs, spark.read.parquet(data).where("id = 5050"))
    assert hs.verify_index("connect_events").healthy

    hs.delete_index("connect_events")
    assert hs.index("connect_events").state.value == "DELETED"
    hs.vacuum_index("connect_events")
    with pytest.raises(IndexNotFoundError, match="index 'connect_events' does not exist"):
        hs.index("connect_events")
