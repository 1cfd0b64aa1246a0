"""One Spark Connect server with hsbloom per test process, and Connect client sessions of it.

A test file imports the fixtures (`from connect_server import connect_server, connect_spark`). The server
(`hsbloom.start_connect_server`: the hsbloom jar, Delta, the test KMS jar, the suite's trims, master
local[2]) starts once per test process, when a test first needs it, and is stopped at the end.

A classic session (the `spark` fixture) and Connect sessions share one Python process only when the
Connect sessions are made with Connect's own builder, `pyspark.sql.connect.session.SparkSession.builder`,
as `connect_spark` does. PySpark's `SparkSession.builder.remote(url).getOrCreate()` refuses to run while
a classic session is active (SESSION_ALREADY_EXIST), and when it does run it sets the process-wide
SPARK_CONNECT_MODE_ENABLED, after which `pyspark.sql.functions` build Connect columns for every session (a
classic session's `F.col` then fails) and a classic builder asks for a Connect URL: one Connect test file
would break the classic files that pytest-xdist runs after it in the same worker. Without that variable,
`pyspark.sql.functions` build classic columns, which a Connect DataFrame rejects: Connect tests write
expressions as SQL strings or with `pyspark.sql.connect.functions`.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

import hsbloom
from conftest import TEST_KMS_JAR, TEST_SETTINGS, one_spark_start_at_a_time
from jvm_options import SHORT_LIVED_JVM
from standalone_cluster import free_port

# A loaded 2-core machine starts a Connect server with Delta in 30-60 s; a stuck one fails the tests.
SERVER_START_TIMEOUT = 300


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory) -> Iterator[hsbloom.ConnectServer]:
    """A Spark Connect server with hsbloom and Delta; its warehouse and system path under pytest's tmp dir."""
    root = tmp_path_factory.mktemp("connect-server")
    conf = {
        **TEST_SETTINGS,
        "spark.driver.memory": "2g",
        "spark.driver.extraJavaOptions": SHORT_LIVED_JVM,
        "spark.driver.extraClassPath": str(TEST_KMS_JAR),  # connect_server_command adds the hsbloom jar
        "spark.sql.warehouse.dir": str(root / "warehouse"),
        "spark.hsbloom.system.path": str(root / "indexes"),
    }
    with one_spark_start_at_a_time(tmp_path_factory):
        server = hsbloom.start_connect_server(
            port=free_port(), delta=True, master="local[2]", conf=conf, timeout=SERVER_START_TIMEOUT,
            log_path=root / "server.log",
        )
    with server:
        yield server


def connect_session(url: str) -> Any:
    """A new Connect client session of the server at `url`, made so that it can share this process with a classic
    session (module doc)."""
    from pyspark.sql.connect.session import SparkSession as ConnectSparkSession

    return ConnectSparkSession.builder.remote(url).create()


@pytest.fixture
def connect_spark(connect_server) -> Iterator[Any]:
    """A fresh Connect session of the test process's server for one test (its settings are its own)."""
    session = connect_session(connect_server.url)
    yield session
    session.stop()  # before the server stops: a client whose server is gone retries its release for minutes
