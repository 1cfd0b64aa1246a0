"""The compatibility suite's set-up: which supported Spark line runs, one SparkSession for every test, an index
system path for each test module, and the quickstarts started in JVMs of their own while the tests run.

The suite runs once per supported Spark minor, in that Spark's own environment, against hsbloom installed there as
a user installs it. So it uses hsbloom's public API only, needs no test-only jar, reads nothing outside this
repository and writes only under pytest's temporary directories (compat/README.md).
"""

from __future__ import annotations

import socket
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# `python -m pytest compat` from the repository root puts the root first on sys.path, where the source tree's hsbloom/
# (with no jar, or one built for another Spark) would stand in for the installed package under test.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != ROOT]

import hsbloom  # noqa: E402  (after the source tree left sys.path)
import quickstarts  # noqa: E402
from hsbloom.spark_lines import SparkLine, running_line  # noqa: E402

LINE = running_line()

# Test files that the running line cannot run, left out of collection (each file's docstring says why).
collect_ignore = []
if LINE.delta is None:
    collect_ignore.append("test_delta.py")
collect_ignore.append("test_connect_refused.py" if LINE.connect else "test_connect.py")

# Sized for tables of a few thousand rows on a 2-core machine: a scan reads its few small files in one task (by
# default each file is a task of its own), and Delta rebuilds a snapshot in 2 partitions, not 50. UTC, so that the
# timestamps the suite writes and the literals it queries them with mean the same instants.
SESSION_SETTINGS = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.sql.files.minPartitionNum": "1",
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def installed_delta() -> str | None:
    """The installed delta-spark's version, or None."""
    try:
        return metadata.version("delta-spark")
    except metadata.PackageNotFoundError:
        return None


def pytest_report_header() -> list[str]:
    import pyspark

    delta = f"delta-spark {LINE.delta} expected, {installed_delta() or 'none'} installed" if LINE.delta else "no Delta"
    return [
        f"hsbloom {hsbloom.__version__} from {Path(hsbloom.__file__).parent}",
        f"pyspark {pyspark.__version__}: line {LINE.name}; {delta}; Spark Connect: {'yes' if LINE.connect else 'no'}",
    ]


# Test files whose tests wait for JVMs started with the test session, which run meanwhile: last.
RUN_LAST = ["test_examples.py"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.path.name in RUN_LAST)  # a stable sort: the order is otherwise kept


@pytest.fixture(scope="session", autouse=True)
def example_runs(request, tmp_path_factory):
    """The quickstarts, started when the test session starts (when test_examples.py is collected), so that their
    JVMs run while the other tests do."""
    if not any(item.path.name == "test_examples.py" for item in request.session.items):
        yield None
        return
    started = quickstarts.start(tmp_path_factory.mktemp("examples"))
    yield started
    for example in started.values():
        example.stop()


@pytest.fixture(scope="session")
def line() -> SparkLine:
    return LINE


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """The suite's one classic session (a start costs ~5 s), with Delta where the line has it (configure adds Delta's
    jar; its Python package is optional)."""
    from pyspark.sql import SparkSession

    scratch = tmp_path_factory.mktemp("spark")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("hsbloom-compat")
        .config(map=SESSION_SETTINGS)
        .config("spark.driver.memory", "2g")
        .config("spark.local.dir", str(scratch / "local"))
        .config("spark.sql.warehouse.dir", str(scratch / "warehouse"))
    )
    with_delta = LINE.delta is not None
    session = hsbloom.configure(builder, delta=with_delta).getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


def uses_the_session(items) -> bool:
    return any("spark" in item.fixturenames for item in items)


@pytest.fixture(scope="module", autouse=True)
def system_path(request, tmp_path_factory):
    """Each test module's own `spark.hsbloom.system.path`: a module's indexes are its own, and one built by a
    module's fixture is there for all its tests. Modules whose tests do not use the session do not start it."""
    if not uses_the_session(item for item in request.session.items if item.module is request.module):
        yield None
        return
    spark = request.getfixturevalue("spark")
    path = tmp_path_factory.mktemp("indexes")
    spark.conf.set("spark.hsbloom.system.path", str(path))
    yield path
    spark.conf.unset("spark.hsbloom.system.path")


# Session settings tests change; each is back at its default after every test.
SETTINGS_TESTS_CHANGE = ["spark.sql.ansi.enabled", "spark.sql.readSideCharPadding", "spark.hsbloom.join.costModel",
                         "spark.hsbloom.zones.enabled"]


@pytest.fixture(autouse=True)
def session_reset(request):
    """hsbloom off and the settings tests change at their defaults after every test that uses the session."""
    yield
    if uses_the_session([request.node]):
        spark = request.getfixturevalue("spark")
        hsbloom.disable(spark)
        for key in SETTINGS_TESTS_CHANGE:
            spark.conf.unset(key)
