"""Wiring hsbloom into a SparkSession: the jar, the SQL extension, Delta, enable/disable.

The jar is checked here, before Spark starts, because a missing jar would
otherwise only be a warning in Spark's log (Spark skips extensions whose class
it cannot load) and a jar built for another Spark would fail deep inside the JVM.
"""

from __future__ import annotations

import os
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

EXTENSION_CLASS = "hsbloom.HsbloomExtension"
DELTA_EXTENSION_CLASS = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG_CLASS = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
ENABLED_CONF = "spark.hsbloom.enabled"
JAR_ENV = "HSBLOOM_JAR"


class HsbloomJarError(RuntimeError):
    """The hsbloom jar is missing, unreadable, or built for another Spark."""


def default_jar_path() -> Path:
    """Where the jar is: $HSBLOOM_JAR if set, else inside the installed package."""
    override = os.environ.get(JAR_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parent / "jars" / "hsbloom.jar"


def running_spark_version() -> str:
    import pyspark

    return pyspark.__version__


def jar_build_info(jar: Path) -> dict[str, str]:
    """The `hsbloom-build.properties` that sbt writes into the jar (versions it was built for)."""
    if not jar.is_file():
        raise HsbloomJarError(
            f"hsbloom jar not found at {jar}; build it with ./dev.sh build "
            f"(or point {JAR_ENV} at a built jar)"
        )
    try:
        with zipfile.ZipFile(jar) as zf:
            text = zf.read("hsbloom-build.properties").decode("utf-8")
    except (zipfile.BadZipFile, KeyError) as exc:
        raise HsbloomJarError(f"{jar} is not an hsbloom jar ({exc}); rebuild it with ./dev.sh build") from exc
    info = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            info[key.strip()] = value.strip()
    return info


def check_jar(jar: Path, spark_version: str | None = None) -> dict[str, str]:
    """Raise HsbloomJarError unless `jar` is an hsbloom jar built for `spark_version` (default: pyspark's)."""
    spark_version = spark_version or running_spark_version()
    info = jar_build_info(jar)
    built_for = info.get("spark.version")
    if built_for != spark_version:
        raise HsbloomJarError(
            f"hsbloom jar {jar} was built for Spark {built_for} but this session runs Spark {spark_version}; "
            f"rebuild it against Spark {spark_version} with ./dev.sh build, or install the matching pyspark"
        )
    return info


def delta_maven_coordinate() -> str:
    """The Delta jar that matches the installed delta-spark package and Spark 4.2 / Scala 2.13."""
    try:
        delta_version = metadata.version("delta-spark")
    except metadata.PackageNotFoundError as exc:
        raise RuntimeError("delta=True needs the delta extra: pip install 'hsbloom[delta]'") from exc
    spark_minor = ".".join(running_spark_version().split(".")[:2])
    return f"io.delta:delta-spark_{spark_minor}_2.13:{delta_version}"


def _merged(existing: str | None, *values: str) -> str:
    items = [v.strip() for v in (existing or "").split(",") if v.strip()]
    for value in values:
        if value not in items:
            items.append(value)
    return ",".join(items)


def configure(builder: Any, delta: bool = False, jar: str | os.PathLike[str] | None = None) -> Any:
    """Return `builder` (a `SparkSession.Builder`) set up for hsbloom.

    Adds the jar to `spark.jars`, hsbloom's extension to `spark.sql.extensions`
    (with Delta's extension, catalog and package when `delta=True`), and points
    `spark.pyspark.python` at this interpreter so Python workers match the driver.
    Settings already on the builder are kept and extended, not replaced.
    """
    jar_path = Path(jar) if jar is not None else default_jar_path()
    check_jar(jar_path)
    options: dict[str, str] = dict(getattr(builder, "_options", {}))
    extensions = [EXTENSION_CLASS] + ([DELTA_EXTENSION_CLASS] if delta else [])
    builder = builder.config("spark.jars", _merged(options.get("spark.jars"), str(jar_path.resolve())))
    builder = builder.config("spark.sql.extensions", _merged(options.get("spark.sql.extensions"), *extensions))
    builder = builder.config("spark.pyspark.python", sys.executable)
    builder = builder.config("spark.pyspark.driver.python", sys.executable)
    if delta:
        builder = builder.config(
            "spark.jars.packages", _merged(options.get("spark.jars.packages"), delta_maven_coordinate())
        )
        builder = builder.config("spark.sql.catalog.spark_catalog", DELTA_CATALOG_CLASS)
    return builder


def enable(spark: Any) -> None:
    """Turn hsbloom's query acceleration on for this session."""
    spark.conf.set(ENABLED_CONF, "true")


def disable(spark: Any) -> None:
    """Turn hsbloom's query acceleration off for this session (queries run as plain Spark)."""
    spark.conf.set(ENABLED_CONF, "false")


def is_enabled(spark: Any) -> bool:
    return spark.conf.get(ENABLED_CONF, "false").lower() == "true"


def fast_jvm_replies(spark: Any) -> bool:
    """Turn Nagle's algorithm off on this Python thread's py4j socket (True if done).

    The py4j that PySpark 4.2 ships stalls about 40 ms on every reply longer than 8 KiB (a log entry, a file
    listing), which made most of an incremental refresh's fixed cost; see `hsbloom.Py4jSocket` in the jar.
    """
    return bool(spark._jvm.hsbloom.Py4jSocket.disableNagle())
