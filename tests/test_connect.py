"""hsbloom on Spark Connect: the server's command, a server started with hsbloom, and what a Connect client
can do with it today.

One server for the file (tests/connect_server.py). Expressions on Connect DataFrames are SQL strings: this
process may also hold the classic `spark` session, so `pyspark.sql.functions` build classic columns here.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time

import pytest

import hsbloom
from connect_server import connect_server, connect_spark  # noqa: F401  (fixtures)
from hsbloom import connect, jar, session_checks
from hsbloom import session as hs_session
from hsbloom.errors import InvalidArgumentError, HsbloomError
from pruning_support import create_index
from standalone_cluster import free_port

JAR = str(hs_session.default_jar_path().resolve())


def conf_flags(argv: list[str]) -> dict[str, str]:
    """The --conf flags of a command, as a dict."""
    return dict(argv[i + 1].split("=", 1) for i, arg in enumerate(argv) if arg == "--conf")


def flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def test_the_command_starts_the_connect_server_with_pysparks_spark_submit_and_the_jar():
    argv = hsbloom.connect_server_command()
    assert argv[0] == str(connect.spark_home() / "bin" / "spark-submit") and os.access(argv[0], os.X_OK)
    assert flag(argv, "--class") == "org.apache.spark.sql.connect.service.SparkConnectServer"
    assert flag(argv, "--master") == "local[*]"
    assert flag(argv, "--driver-class-path") == JAR
    assert "--packages" not in argv
    assert conf_flags(argv) == {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": "15002",
        "spark.sql.extensions": "hsbloom.HsbloomExtension",
    }


def test_the_command_with_delta_and_extra_settings_extends_what_it_sets():
    argv = hsbloom.connect_server_command(
        port=15123, delta=True, master="spark://master:7077",
        conf={"spark.sql.extensions": "com.example.Ext", "spark.driver.extraClassPath": "/opt/other.jar",
              "spark.jars.packages": "com.example:lib:1.0", "spark.hsbloom.system.path": "hdfs:///shared/hsbloom"},
    )
    assert flag(argv, "--master") == "spark://master:7077"
    assert flag(argv, "--driver-class-path") == os.pathsep.join(["/opt/other.jar", JAR])
    assert flag(argv, "--packages") == f"com.example:lib:1.0,{hs_session.delta_maven_coordinate()}"
    assert conf_flags(argv) == {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": "15123",
        "spark.sql.extensions": "com.example.Ext,hsbloom.HsbloomExtension,io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.hsbloom.system.path": "hdfs:///shared/hsbloom",
    }
    assert shlex.split(shlex.join(argv)) == argv  # a shell line for docs and deployments


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"port": 0}, "port must be an int from 1 to 65535, not 0"),
        ({"port": "15002"}, "port must be an int"),
        ({"master": ""}, "master must be a Spark master URL"),
        ({"conf": {"spark.ui.enabled": False}}, "conf maps setting names to string values"),
        ({"conf": {"spark.connect.grpc.binding.port": "1"}}, "from its port= argument: pass port= instead"),
        ({"conf": {"spark.master": "local"}}, "from its master= argument: pass master= instead"),
    ],
)
def test_a_bad_argument_is_a_value_error_naming_it(arguments, message):
    with pytest.raises(InvalidArgumentError, match=message) as raised:
        hsbloom.connect_server_command(**arguments)
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, HsbloomError)


def test_the_command_checks_the_jar_first(tmp_path):
    with pytest.raises(hsbloom.HsbloomJarError, match="hsbloom jar not found at"):
        hsbloom.connect_server_command(jar=tmp_path / "missing.jar")


def test_a_server_that_exits_at_start_is_an_error_with_its_log(tmp_path):
    """An unusable heap size: the JVM exits at once, before Spark starts."""
    started = time.monotonic()
    with pytest.raises(hsbloom.HsbloomSessionError, match=r"the Spark Connect server \(pid \d+\) exited with code 1") as raised:
        hsbloom.start_connect_server(port=free_port(), conf={"spark.driver.memory": "lots"},
                                     log_path=tmp_path / "x.log")
    assert "Invalid maximum heap size: -Xmxlots" in str(raised.value)
    assert str(tmp_path / "x.log") in str(raised.value)
    assert time.monotonic() - started < 60


def test_a_server_that_does_not_answer_in_time_is_stopped(tmp_path):
    log = tmp_path / "slow.log"
    with pytest.raises(hsbloom.HsbloomSessionError, match=r"did not answer on port \d+ within 0.5 s") as raised:
        hsbloom.start_connect_server(port=free_port(), timeout=0.5, log_path=log)
    assert f"the end of its log ({log})" in str(raised.value)
    pid = int(str(raised.value).split("(pid ")[1].split(")")[0])
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)  # nothing of its process group is left


def test_a_taken_port_is_refused_before_anything_starts(connect_server):
    with pytest.raises(hsbloom.HsbloomSessionError, match=f"port {connect_server.port} on 127.0.0.1 is already in use"):
        hsbloom.start_connect_server(port=connect_server.port)


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


def test_enable_refuses_a_connect_server_started_without_the_extension(connect_spark, monkeypatch):
    """A second server without hsbloom costs as much as this one (about a minute on a busy 2-core machine), so the
    check runs against this server's real answers, looking for an extension its spark.sql.extensions lacks."""
    monkeypatch.setattr(session_checks, "EXTENSION_CLASS", "hsbloom.ExtensionNotStarted")
    with pytest.raises(hsbloom.HsbloomSessionError, match="server was started without hsbloom's SQL ext") as raised:
        hsbloom.enable(connect_spark)
    message = str(raised.value)
    assert "(its spark.sql.extensions does not name hsbloom.ExtensionNotStarted)" in message
    assert "`hsbloom.connect_server_command(delta=...)` returns its command" in message
    assert f"--class org.apache.spark.sql.connect.service.SparkConnectServer --driver-class-path {JAR}" in message
    assert not hsbloom.is_enabled(connect_spark)


def test_enable_refuses_a_connect_server_whose_extension_did_not_load(connect_spark, monkeypatch):
    """The extension named but its jar missing: Spark skips it, and its SQL function is unknown to the server (here:
    a function this server does not have)."""
    monkeypatch.setattr(session_checks, "VERSION_FUNCTION", "hsbloom_version_of_a_skipped_extension")
    with pytest.raises(hsbloom.HsbloomSessionError, match="HsbloomExtension in spark.sql.extensions, but") as raised:
        hsbloom.enable(connect_spark)
    message = str(raised.value)
    assert "hsbloom_version_of_a_skipped_extension() does not answer ([UNRESOLVED_ROUTINE]" in message
    assert "the hsbloom jar is not on the server driver's classpath" in message
    assert "hsbloom.connect_server_command(delta=...)" in message
    assert not hsbloom.is_enabled(connect_spark)


def test_pysparks_own_remote_builder_refuses_while_a_classic_session_runs(spark, connect_server):
    """Why connect_spark uses Connect's builder (tests/connect_server.py), and that it leaves the process classic."""
    from pyspark.errors import PySparkRuntimeError
    from pyspark.sql import SparkSession

    with pytest.raises(PySparkRuntimeError, match="SESSION_ALREADY_EXIST"):
        SparkSession.builder.remote(connect_server.url).getOrCreate()
    assert "SPARK_CONNECT_MODE_ENABLED" not in os.environ


USER_PROGRAM = """
import sys
from pyspark.sql import SparkSession, functions as F
import hsbloom

spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
hsbloom.enable(spark)
rows = spark.range(50).where(F.col("id").isin(3, 30)).collect()
print("RESULT", hsbloom.is_enabled(spark), [r.id for r in rows], flush=True)
spark.stop()
"""


def test_a_connect_program_made_the_usual_way_enables_hsbloom(connect_server, tmp_path):
    """A user's program: its own process, PySpark's builder, pyspark.sql.functions (Connect columns there)."""
    program = tmp_path / "program.py"
    program.write_text(USER_PROGRAM)
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    result = subprocess.run([sys.executable, str(program), connect_server.url], capture_output=True, text=True,
                            timeout=300, env=env)
    assert "RESULT True [3, 30]" in result.stdout, result.stderr[-3000:]
    assert result.returncode == 0
