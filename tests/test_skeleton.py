"""The walking skeleton: package, jar, extension, Delta, and the jar checks."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import hsbloom
from hsbloom import jar
from hsbloom import session as hs_session
from hsbloom import spark_lines

ROOT = Path(__file__).resolve().parent.parent


def test_version_is_exposed_and_matches_the_jar():
    assert hsbloom.__version__.count(".") == 2
    info = hs_session.jar_build_info(hs_session.default_jar_path())
    assert info["hsbloom.version"] == hsbloom.__version__
    assert info["spark.line"] == spark_lines.running_line().minor
    assert spark_lines.running_spark_release().startswith(info["spark.line"] + ".")


def test_extension_sql_function_answers(spark):
    assert spark.sql("SELECT hsbloom_version() AS v").first()["v"] == hsbloom.__version__


def test_configure_sets_extension_delta_and_python(spark):
    conf = spark.sparkContext.getConf()
    extensions = conf.get("spark.sql.extensions").split(",")
    assert hs_session.EXTENSION_CLASS in extensions
    assert hs_session.DELTA_EXTENSION_CLASS in extensions
    assert conf.get("spark.sql.catalog.spark_catalog") == hs_session.DELTA_CATALOG_CLASS
    assert spark.sparkContext.pythonExec == sys.executable
    assert conf.get("spark.driver.extraClassPath").endswith(spark_lines.running_line().jar_name)


def test_configure_keeps_existing_settings():
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.config("spark.sql.extensions", "com.example.Ext").config("spark.jars", "/x.jar")
    options = jar.builder_options(hsbloom.configure(builder))
    assert options["spark.sql.extensions"] == f"com.example.Ext,{hs_session.EXTENSION_CLASS}"
    assert options["spark.jars"] == "/x.jar"


def test_enable_and_disable_toggle_the_conf(spark):
    hsbloom.enable(spark)
    assert hsbloom.is_enabled(spark)
    hsbloom.disable(spark)
    assert not hsbloom.is_enabled(spark)
    assert spark.conf.get("spark.hsbloom.enabled") == "false"


def test_delta_table_round_trip(spark, tmp_path):
    path = str(tmp_path / "delta_table")
    spark.range(0, 100).write.format("delta").save(path)
    spark.range(100, 150).write.format("delta").mode("append").save(path)
    assert spark.read.format("delta").load(path).count() == 150
    assert spark.read.format("delta").option("versionAsOf", 0).load(path).count() == 100
    from delta.tables import DeltaTable

    assert DeltaTable.forPath(spark, path).history().count() == 2


def _jar_built_for(tmp_path: Path, spark_line: str) -> Path:
    """A copy of the real jar whose build information claims another Spark line."""
    original = hs_session.default_jar_path()
    fake = tmp_path / "hsbloom-other-spark.jar"
    with zipfile.ZipFile(original) as src, zipfile.ZipFile(fake, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "hsbloom-build.properties":
                text = data.decode()
                current = spark_lines.running_line().minor
                data = text.replace(f"spark.line={current}", f"spark.line={spark_line}").encode()
                assert f"spark.line={spark_line}".encode() in data
            dst.writestr(item, data)
    return fake


def test_missing_jar_is_a_clear_error(tmp_path):
    from pyspark.sql import SparkSession

    missing = tmp_path / "nowhere" / "hsbloom.jar"
    with pytest.raises(hsbloom.HsbloomJarError, match="hsbloom jar not found at .*nowhere.*dev.sh build"):
        hsbloom.configure(SparkSession.builder, jar=missing)


def test_not_an_hsbloom_jar_is_a_clear_error(tmp_path):
    from pyspark.sql import SparkSession

    other = tmp_path / "other.jar"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    with pytest.raises(hsbloom.HsbloomJarError, match="is not an hsbloom jar"):
        hsbloom.configure(SparkSession.builder, jar=other)


def test_jar_for_another_spark_is_refused_before_start(tmp_path):
    from pyspark.sql import SparkSession

    fake = _jar_built_for(tmp_path, "3.4")
    with pytest.raises(hsbloom.HsbloomJarError, match=r"built for Spark 3\.4 but this session runs Spark 4\."):
        hsbloom.configure(SparkSession.builder, jar=fake)


def test_jar_for_another_spark_fails_session_start_in_the_jvm(tmp_path):
    """Even when the Python check is bypassed, the extension itself refuses to start."""
    fake = _jar_built_for(tmp_path, "3.4")
    script = textwrap.dedent(
        f"""
        import sys
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]")
                 .config("spark.ui.enabled", "false")
                 .config("spark.jars", {str(fake)!r})
                 .config("spark.sql.extensions", "hsbloom.HsbloomExtension")
                 .getOrCreate())
        spark.sql("SELECT 1").collect()
        print("SESSION STARTED")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert "SESSION STARTED" not in output
    assert result.returncode != 0
    assert "was built for Spark 3.4 (compiled against" in output
    assert "but this session runs Spark 4." in output
