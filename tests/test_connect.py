"""hsbloom on Spark Connect: the server's command, a server started with hsbloom, and a Connect client managing
indexes and querying through them exactly as a classic session does.

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
import hsbloom.errors
from hsbloom.errors import HsbloomError, IndexNotFoundError, InvalidArgumentError
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


def lines_of(hs, df) -> str:
    printed: list[str] = []
    hs.explain(df, redirect_func=printed.append)
    return "\n".join(printed)


def test_every_operation_from_a_connect_client(connect_spark, tmp_path):
    """Create, query on and off, refresh after an append (quick, then incremental), explain, list, drop, restore and
    vacuum, all through the Connect client: the facade sends SQL, which the server's jar runs."""
    connect_spark.conf.set("spark.hsbloom.system.path", str(tmp_path / "indexes"))
    data = str(tmp_path / "events")
    connect_spark.range(0, 4000, numPartitions=1).selectExpr("id", "id % 7 AS bucket").repartitionByRange(8, "id") \
        .write.parquet(data)
    hs = hsbloom.Hyperspace(connect_spark)
    hs.create_index(connect_spark.read.parquet(data), hsbloom.BFIndexConfig("c_events", ["id"]))
    assert [r.name for r in hs.indexes().collect()] == ["c_events"]
    info = hs.index("c_events")
    assert (info.state.value, info.num_files, info.num_rows, info.source.format) == ("ACTIVE", 8, 4000, "parquet")

    def lookup(value: int):
        return connect_spark.read.parquet(data).where(f"id = {value}").select("id", "bucket")

    def rows_and_files(value: int, enabled: bool) -> tuple[list[tuple], int]:
        (hsbloom.enable if enabled else hsbloom.disable)(connect_spark)
        df = lookup(value)
        return sorted(tuple(r) for r in df.collect()), scan_metric(df, "numFiles")

    assert rows_and_files(1234, False) == ([(1234, 1234 % 7)], 8)
    assert rows_and_files(1234, True) == ([(1234, 1234 % 7)], 1)
    assert "8 files -> 1" in lines_of(hs, lookup(1234))

    connect_spark.range(5000, 5100, numPartitions=2).selectExpr("id", "id % 7 AS bucket").write.mode("append").parquet(data)
    quick = hs.refresh_index("c_events", "quick")
    assert (quick.refreshed, quick.appended_files) == (True, 2)
    assert hs.index("c_events").staleness.appended_files_not_indexed == 2
    assert rows_and_files(5050, True) == ([(5050, 5050 % 7)], 2)  # both appended files are read until indexed
    incremental = hs.refresh_index("c_events", "incremental")
    assert (incremental.refreshed, incremental.data_version) == (True, 1)
    assert rows_and_files(5050, True) == rows_and_files(5050, False)[:1] + (1,)
    assert hs.verify_index("c_events").healthy

    hs.delete_index("c_events")
    assert hs.index("c_events").state.value == "DELETED" and rows_and_files(1234, True)[1] == 10
    hs.restore_index("c_events")
    assert hs.index("c_events").state.value == "ACTIVE"
    hs.delete_index("c_events")
    hs.vacuum_index("c_events")
    with pytest.raises(IndexNotFoundError):
        hs.index("c_events")
    assert hs.indexes().count() == 0


def test_substring_filters_from_a_connect_client(connect_spark, tmp_path):
    """substring_columns, ngram_size and the lower-cased filter reach the server's jar from a Connect client, as from
    a classic one (tests/test_substring.py): LIKE and ILIKE needles read their one file, with the rows of hsbloom off."""
    connect_spark.conf.set("spark.hsbloom.system.path", str(tmp_path / "indexes"))
    data = str(tmp_path / "logs")
    connect_spark.range(0, 4000, numPartitions=1).selectExpr("id", "concat('request ', md5(cast(id AS string))) AS m") \
        .repartitionByRange(8, "id").write.parquet(data)
    hs = hsbloom.Hyperspace(connect_spark)
    hs.create_index(connect_spark.read.parquet(data), hsbloom.BFIndexConfig(
        "c_logs", ["id"], substring_columns=["m"], ngram_size=6, substring_case_insensitive=True))
    info = hs.index("c_logs")
    assert (info.config.substring_columns, info.config.ngram_size, info.config.substring_case_insensitive) == (
        ("m",), 6, True)
    needle = connect_spark.sql("SELECT md5('1234') AS h").first().h[:16]
    for condition in (f"m LIKE '%{needle}%'", f"m ILIKE '%{needle.upper()}%'"):
        df = connect_spark.read.parquet(data).where(condition).select("id")
        hsbloom.disable(connect_spark)
        off = sorted(r.id for r in df.collect())
        hsbloom.enable(connect_spark)
        assert sorted(r.id for r in df.collect()) == off == [1234], condition
        assert scan_metric(connect_spark.read.parquet(data).where(condition).select("id"), "numFiles") == 1, condition
    hsbloom.disable(connect_spark)


def described(info) -> tuple:
    """What an index records of its source, but the salt of its hashed options (new for every entry)."""
    s = info.source
    return (s.format, s.root_paths, s.options, s.table, s.delta_version, s.schema, s.partition_columns, s.read_facts,
            s.user_schema, sorted(s.hashed_options), tuple(info.config.indexed_columns), info.num_files)


def test_connect_indexes_a_dataframes_source_exactly_as_classic(spark, connect_spark, tmp_path):
    """A Parquet path read with a schema and options, a Delta table at a version, a catalog table and a temporary
    view: the same source description from either client."""
    system = str(tmp_path / "indexes")
    spark.conf.set("spark.hsbloom.system.path", system)
    connect_spark.conf.set("spark.hsbloom.system.path", system)
    parquet, delta = str(tmp_path / "p"), str(tmp_path / "d")
    spark.range(0, 300, numPartitions=3).selectExpr("id", "cast(id AS string) AS s").write.parquet(parquet)
    spark.range(0, 100, numPartitions=2).write.format("delta").save(delta)
    spark.range(100, 200, numPartitions=2).write.format("delta").mode("append").save(delta)
    for session in (spark, connect_spark):  # each JVM has its own catalog: the same table in both
        session.sql(f"CREATE TABLE connect_tbl USING parquet LOCATION '{parquet}'")
    sources = {
        "schema": lambda s: s.read.schema("id bigint, s string").option("mergeSchema", "false").parquet(parquet),
        "delta": lambda s: s.read.format("delta").option("versionAsOf", 0).load(delta),
        "table": lambda s: s.table("connect_tbl").select("id"),
        "view": lambda s: s.sql(f"SELECT * FROM parquet.`{parquet}`"),
    }
    try:
        for kind, make in sources.items():
            hsbloom.Hyperspace(spark).create_index(make(spark), hsbloom.BFIndexConfig(f"classic_{kind}", ["id"]))
            connect_df = make(connect_spark)
            if kind == "view":
                connect_df.createOrReplaceTempView("connect_view")
                connect_df = connect_spark.table("connect_view")
            hsbloom.Hyperspace(connect_spark).create_index(connect_df, hsbloom.BFIndexConfig(f"connect_{kind}", ["id"]))
            hs = hsbloom.Hyperspace(spark)
            assert described(hs.index(f"connect_{kind}")) == described(hs.index(f"classic_{kind}")), kind
    finally:
        for session in (spark, connect_spark):
            session.sql("DROP TABLE IF EXISTS connect_tbl")
        spark.conf.unset("spark.hsbloom.system.path")


def test_bad_input_gives_the_same_hsbloom_errors_on_connect_as_on_classic(spark, connect_spark, tmp_path):
    system = str(tmp_path / "indexes")
    data = str(tmp_path / "t")
    spark.range(0, 10).selectExpr("id", "map('k', id) AS m").write.parquet(data)
    spark.conf.set("spark.hsbloom.system.path", system)
    connect_spark.conf.set("spark.hsbloom.system.path", system)
    hsbloom.Hyperspace(spark).create_index(spark.read.parquet(data), hsbloom.BFIndexConfig("taken", ["id"]))
    cases = {
        "unknown column": lambda s: (s.read.parquet(data), hsbloom.BFIndexConfig("x1", ["nope"])),
        "existing name": lambda s: (s.read.parquet(data), hsbloom.BFIndexConfig("taken", ["id"])),
        "unsupported type": lambda s: (s.read.parquet(data), hsbloom.BFIndexConfig("x2", ["m"])),
        "not a scan": lambda s: (s.read.parquet(data).groupBy("id").count(), hsbloom.BFIndexConfig("x3", ["id"])),
        "bad config": lambda s: (s.read.parquet(data), hsbloom.BFIndexConfig("x4", ["id"], fpp=float("nan"))),
    }
    try:
        first: dict[str, tuple] = {}
        for case, make in cases.items():
            raised = []
            for session in (spark, connect_spark):
                with pytest.raises(HsbloomError) as error:
                    hsbloom.Hyperspace(session).create_index(*make(session))
                raised.append((type(error.value), str(error.value)))
            assert raised[0] == raised[1], case
            first[case] = raised[0]
        assert first["bad config"][0] is hsbloom.errors.InvalidConfigError and "got NaN" in first["bad config"][1]
        for session in (spark, connect_spark):
            with pytest.raises(hsbloom.errors.IndexNotFoundError, match="index 'absent' does not exist"):
                hsbloom.Hyperspace(session).restore_index("absent")
    finally:
        spark.conf.unset("spark.hsbloom.system.path")


def test_run_explained_raises_a_statements_own_error_on_connect_as_spark_does(connect_spark, tmp_path):
    """On Connect the server runs the statement: its failure reaches the client as the same exception (class, error
    class, message) through run_explained as through spark.sql, and an hsbloom statement's as its hsbloom error."""
    table = tmp_path / "t"
    connect_spark.range(0, 20, numPartitions=2).selectExpr("id", "0 AS v").write.format("delta").save(str(table))
    connect_spark.sql("SELECT 7L AS id, 1 AS v UNION ALL SELECT 7L, 2").createOrReplaceTempView("dup")
    refused = {
        f"MERGE INTO delta.`{table}` t USING dup s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v":
            "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE",
        f"DELETE FROM delta.`{table}` WHERE id IN (SELECT id FROM dup)": "DELTA_UNSUPPORTED_SUBQUERY",
        f"MERGE delta.`{table}`": "PARSE_SYNTAX_ERROR",
    }
    hs = hsbloom.Hyperspace(connect_spark)
    for statement, condition in refused.items():
        raised = []
        for run in (lambda: connect_spark.sql(statement).collect(), lambda: hs.run_explained(statement, lambda _: None)):
            with pytest.raises(Exception) as error:
                run()
            # The message, without the server's stack trace (run_explained's has more frames).
            text = str(error.value).split("\n\nJVM stacktrace:")[0]
            raised.append((type(error.value), error.value.getCondition(), text))
        assert raised[0][1] == condition and raised[1] == raised[0], statement
        assert not issubclass(raised[1][0], HsbloomError)
    assert connect_spark.read.format("delta").load(str(table)).where("v = 0").count() == 20
    with pytest.raises(IndexNotFoundError, match="index 'absent' does not exist"):
        hs.run_explained("DESCRIBE BLOOMFILTER INDEX absent")


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


def test_the_connect_quickstart_runs_as_written(connect_server):
    """examples/connect_quickstart.py against this file's server (its own start is the one the tests above check)."""
    from conftest import ROOT

    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "connect_quickstart.py"), "--remote", connect_server.url],
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "lookup: 1 row; files read with hsbloom off: 16, on: 1" in done.stdout, done.stdout[-3000:]
    assert "built 2 appended files" in done.stdout and "healthy" in done.stdout

