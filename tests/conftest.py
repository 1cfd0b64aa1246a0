"""Shared fixtures: one SparkSession for the whole run (a session costs ~5 s to start)."""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

# The dataset and healthy index of the corruption, recovery, crash and race suites, built once per run.
from healthy_index import copy, expected, healthy, other, source  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parent.parent
EXTERNAL_VECTORS = ROOT / "tests" / "vectors" / "external"
# The KMS client of the tests that write encrypted Parquet (jvm/testkms; ./dev.sh test builds it).
TEST_KMS_JAR = ROOT / "jvm" / "target" / "hsbloom-test-kms.jar"
# The tests' entry points into the jar's internals (jvm/testkit: hsbloom.testkit; ./dev.sh test builds it).
TEST_KIT_JAR = ROOT / "jvm" / "target" / "hsbloom-testkit.jar"
# Every test session's settings, classic and Spark Connect (tests/connect_server.py): sized for small tables on a
# 2-core machine. Delta rebuilds a table's state in 50 partitions by default: 50 tasks per snapshot, for tables
# of a few files.
TEST_SETTINGS = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
}


# The slowest test files, longest first (pytest --durations of a whole run; each runs whole in one xdist
# worker). ./dev.sh test hands files to its two workers in collection order (--no-loadscope-reorder), so these
# start first and the short files fill in at the end: no worker idles while the other runs a long file alone.
SLOWEST_FILES_FIRST = [
    "test_pruning.py",
    "test_wheel.py",
    "test_connect.py",
    "test_pruning_differential.py",
    "test_join.py",
    "test_tpch.py",
    "test_readers_boundaries.py",
    "test_cluster.py",
    "test_zones.py",
    "test_sql.py",
    "test_adopt_build.py",
    "test_encryption.py",
    "test_adopt_zones.py",
    "test_adopt.py",
    "test_readers.py",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The SLOWEST_FILES_FIRST files' tests first, each file's tests together and in their own order."""
    rank = {name: at for at, name in enumerate(SLOWEST_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@contextmanager
def one_spark_start_at_a_time(tmp_path_factory) -> Iterator[None]:
    """Under pytest-xdist each worker starts its own Spark; one at a time, so that two JVMs never resolve the
    Delta package into the same Ivy cache at once (on a fresh machine that downloads it)."""
    with open(tmp_path_factory.getbasetemp().parent / "spark-session-start.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from pyspark.sql import SparkSession

    import hsbloom

    warehouse = tmp_path_factory.mktemp("warehouse")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("hsbloom-tests")
        .config(map=TEST_SETTINGS)
        .config("spark.driver.memory", "4g")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.hsbloom.system.path", str(warehouse / "indexes"))
        # configure() adds the hsbloom jar
        .config("spark.driver.extraClassPath", os.pathsep.join([str(TEST_KMS_JAR), str(TEST_KIT_JAR)]))
    )
    with one_spark_start_at_a_time(tmp_path_factory):
        session = hsbloom.configure(builder, delta=True).getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def external_vectors() -> Path:
    """tests/vectors/external: SBBF files written by other Parquet implementations (see its README)."""
    assert EXTERNAL_VECTORS.is_dir(), f"external test vectors missing at {EXTERNAL_VECTORS}"
    return EXTERNAL_VECTORS


@contextmanager
def _system_path_set_to(spark, path: Path) -> Iterator[Path]:
    from hsbloom.settings import SYSTEM_PATH as SYSTEM_PATH_CONF

    previous = spark.conf.get(SYSTEM_PATH_CONF, None)
    spark.conf.set(SYSTEM_PATH_CONF, str(path))
    try:
        yield path
    finally:
        if previous is None:
            spark.conf.unset(SYSTEM_PATH_CONF)
        else:
            spark.conf.set(SYSTEM_PATH_CONF, previous)


@pytest.fixture
def system_path(spark, tmp_path):
    """A fresh, empty `spark.hsbloom.system.path` for one test, so its indexes are its own."""
    with _system_path_set_to(spark, tmp_path / "hsbloom-system") as path:
        yield path


@pytest.fixture(scope="module")
def module_system_path(spark, tmp_path_factory):
    """A fresh `spark.hsbloom.system.path` shared by the tests of one module."""
    with _system_path_set_to(spark, tmp_path_factory.mktemp("hsbloom-system")) as path:
        yield path
