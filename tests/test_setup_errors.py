"""Set-up mistakes each get an hsbloom error that names the fix.

Sessions without hsbloom need their own Python process (the suite's JVM has
hsbloom), so one subprocess makes them
all in turn and reports what each hsbloom call raised. Python workers and Delta on a real cluster are
checked by tests/test_cluster.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import hsbloom
from hsbloom import jar
from hsbloom import session as hs_session

ROOT = Path(__file__).resolve().parent.parent

SESSIONS_WITHOUT_HSBLOOM = textwrap.dedent(
    """
    import json
    import os
    from pyspark.sql import SparkSession
    import hsbloom

    results = {}

    def attempt(name, call):
        try:
            call()
            results[name] = "no error"
        except Exception as exc:
            results[name] = f"{type(exc).__name__}: {exc}"

    def plain_builder():
        return SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")

    # A session started without hsbloom.configure, as a notebook's would be.
    spark = plain_builder().getOrCreate()
    attempt("no_extension.Hyperspace", lambda: hsbloom.Hyperspace(spark))
    attempt("no_extension.enable", lambda: hsbloom.enable(spark))
    results["no_extension.enabled_conf"] = spark.conf.get("spark.hsbloom.enabled", "unset")
    spark.stop()

    # The extension named, but no jar on the classpath: Spark skips the extension with a warning.
    spark = plain_builder().config("spark.sql.extensions", "hsbloom.HsbloomExtension").getOrCreate()
    attempt("no_jar.Hyperspace", lambda: hsbloom.Hyperspace(spark))
    attempt("no_jar.enable", lambda: hsbloom.enable(spark))
    spark.stop()

    print("RESULTS " + json.dumps(results), flush=True)
    """
)


@pytest.fixture(scope="module")
def without_hsbloom() -> dict[str, str]:
    """What each hsbloom call raised on sessions that cannot run hsbloom (one subprocess, two sessions)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED")}
    result = subprocess.run(
        [sys.executable, "-c", SESSIONS_WITHOUT_HSBLOOM], capture_output=True, text=True, timeout=300, env=env
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULTS ")]
    assert lines, f"the subprocess failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return json.loads(lines[-1].removeprefix("RESULTS "))


@pytest.mark.parametrize("call", ["Hyperspace", "enable"])
def test_a_session_without_the_extension_is_refused_with_the_fix(without_hsbloom, call):
    message = without_hsbloom[f"no_extension.{call}"]
    assert message.startswith("HsbloomSessionError: This SparkSession was started without hsbloom's SQL extension")
    assert "hsbloom.configure(SparkSession.builder" in message
    assert "spark.stop()" in message
    assert "--jars" in message and "--conf spark.sql.extensions=hsbloom.HsbloomExtension" in message


def test_enable_on_a_session_without_hsbloom_changes_nothing(without_hsbloom):
    assert without_hsbloom["no_extension.enabled_conf"] == "unset"


@pytest.mark.parametrize("call", ["Hyperspace", "enable"])
def test_an_extension_without_its_jar_is_refused_with_the_fix(without_hsbloom, call):
    message = without_hsbloom[f"no_jar.{call}"]
    assert message.startswith("HsbloomSessionError: spark.sql.extensions names hsbloom.HsbloomExtension")
    assert "jar is not on the driver's classpath" in message
    assert "hsbloom.configure(SparkSession.builder" in message and "--jars" in message


def test_the_suite_session_and_its_new_sessions_pass_the_check(spark):
    hsbloom.Hyperspace(spark)
    other = spark.newSession()
    hsbloom.Hyperspace(other)
    hsbloom.enable(other)
    assert hsbloom.is_enabled(other)


@pytest.mark.parametrize(
    "connect_builder",
    [
        lambda: SparkSession.builder.remote("sc://cluster.example:15002"),
        lambda: SparkSession.builder.config("spark.api.mode", "connect"),
    ],
    ids=["remote", "api_mode"],
)
def test_configure_refuses_a_connect_builder_pointing_at_the_server_command(connect_builder):
    with pytest.raises(hsbloom.HsbloomSessionError, match="Spark Connect builder") as raised:
        hsbloom.configure(connect_builder(), delta=True)
    message = str(raised.value)
    assert "configure cannot set it up" in message
    assert "`hsbloom.connect_server_command(delta=...)` returns its command" in message
    assert "--class org.apache.spark.sql.connect.service.SparkConnectServer" in message
    assert f"--driver-class-path {hs_session.default_jar_path()}" in message
    assert "--conf spark.sql.extensions=hsbloom.HsbloomExtension" in message
    assert "hsbloom.start_connect_server(...)" in message


def test_configure_refuses_a_builder_that_spark_remote_makes_remote(monkeypatch):
    monkeypatch.setenv("SPARK_REMOTE", "sc://cluster.example:15002")
    with pytest.raises(hsbloom.HsbloomSessionError, match=r"Spark Connect builder \(sc://cluster.example:15002\)"):
        hsbloom.configure(SparkSession.builder)


def test_configure_points_python_workers_at_this_interpreter_unless_set(monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", "unset-below")  # so monkeypatch restores the original
    monkeypatch.delenv("PYSPARK_PYTHON")
    hsbloom.configure(SparkSession.builder)
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/cluster-python/bin/python3")
    hsbloom.configure(SparkSession.builder)
    assert os.environ["PYSPARK_PYTHON"] == "/opt/cluster-python/bin/python3"


def test_configure_puts_the_jar_on_the_driver_classpath_not_in_spark_jars():
    """A builder's spark.jars would replace the jar list spark-submit makes from spark.jars.packages (Delta)."""
    builder = SparkSession.builder.config("spark.driver.extraClassPath", "/opt/other.jar")
    options = jar.builder_options(hsbloom.configure(builder, delta=True))
    assert "spark.jars" not in options
    jar_path = str(hs_session.default_jar_path().resolve())
    assert options["spark.driver.extraClassPath"] == os.pathsep.join(["/opt/other.jar", jar_path])
    assert options["spark.jars.packages"] == hs_session.delta_maven_coordinate()


def test_an_installed_package_without_its_jar_does_not_send_users_to_dev_sh(tmp_path):
    """As a wheel built without the jar installs it: the package alone, outside the source tree."""
    site = tmp_path / "site-packages"
    shutil.copytree(ROOT / "hsbloom", site / "hsbloom", ignore=shutil.ignore_patterns("jars", "__pycache__"))
    script = "from pyspark.sql import SparkSession; import hsbloom; hsbloom.configure(SparkSession.builder)"
    env = {k: v for k, v in os.environ.items() if k != "HSBLOOM_JAR"}
    env["PYTHONPATH"] = str(site)
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
    )
    assert result.returncode != 0
    assert f"hsbloom.errors.HsbloomJarError: hsbloom jar not found at {site}" in result.stderr
    assert "this installed hsbloom carries no usable jar" in result.stderr
    assert "HSBLOOM_JAR" in result.stderr
    assert "dev.sh" not in result.stderr


def test_the_session_errors_are_hsbloom_errors_importable_where_they_were():
    """Defined once, in hsbloom.errors, with the others; still importable from the modules that raise them."""
    from hsbloom import connect, errors, session, session_checks

    assert hsbloom.HsbloomJarError is session.HsbloomJarError is errors.HsbloomJarError
    assert hsbloom.HsbloomSessionError is session_checks.HsbloomSessionError is connect.HsbloomSessionError
    assert hsbloom.HsbloomSessionError is errors.HsbloomSessionError
    for kind in (errors.HsbloomJarError, errors.HsbloomSessionError):
        assert issubclass(kind, errors.HsbloomError) and issubclass(kind, RuntimeError)
    assert issubclass(errors.InvalidArgumentError, errors.HsbloomError)
    assert issubclass(errors.InvalidArgumentError, ValueError)
