"""Wiring hsbloom into a SparkSession: the jar, the SQL extension, Delta, enable/disable.

The jar is checked here, before Spark starts, because a missing jar would
otherwise only be a warning in Spark's log (Spark skips extensions whose class
it cannot load) and a jar built for another Spark would fail deep inside the JVM.

Version contract: hsbloom supports the Spark lines of hsbloom/spark_lines.tsv (a Spark minor with one Scala
version, every patch release of it), and the package carries a jar for each. `configure` picks the one of the
running pyspark (`hsbloom.spark_lines`) and refuses any other Spark naming the supported ones; a jar runs only on
its own line (`check_jar` here, `BuildInfo.checkSparkVersion` in the jar), because the jar uses Spark-internal
Catalyst API whose classes differ between minors.
"""

from __future__ import annotations

import os
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Any

from hsbloom import settings
from hsbloom.errors import HsbloomJarError, HsbloomSessionError, UnsupportedSparkError
from hsbloom.jar import builder_options
from hsbloom.session_checks import EXTENSION_CLASS, refuse_connect_builder, require_hsbloom_session
from hsbloom.spark_lines import SparkLine, minor_of, running_line, running_spark_release

DELTA_EXTENSION_CLASS = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG_CLASS = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
ENABLED_CONF = settings.ENABLED
JAR_ENV = "HSBLOOM_JAR"
SOURCE_ROOT = Path(__file__).resolve().parent.parent


def default_jar_path() -> Path:
    """Where the jar is: $HSBLOOM_JAR if set, else the running Spark line's inside the installed package
    (UnsupportedSparkError when no line serves the running pyspark)."""
    override = os.environ.get(JAR_ENV)
    if override:
        return Path(override)
    return running_line().jar


def _how_to_get_a_jar() -> str:
    """Build it in a source checkout; an installed package cannot build, so say what can be done there."""
    if (SOURCE_ROOT / "dev.sh").is_file() and (SOURCE_ROOT / "jvm" / "build.sbt").is_file():
        return f"build it with ./dev.sh build in {SOURCE_ROOT} (or point {JAR_ENV} at a built jar)"
    return (
        "this installed hsbloom carries no usable jar: reinstall it with pip from an hsbloom clone or git URL, "
        f"which builds the jar into the package (docs/deploy.md), or point {JAR_ENV} at a built jar"
    )


def jar_build_info(jar: Path) -> dict[str, str]:
    """The `hsbloom-build.properties` that sbt writes into the jar (versions it was built for)."""
    if not jar.is_file():
        raise HsbloomJarError(f"hsbloom jar not found at {jar}; {_how_to_get_a_jar()}")
    try:
        with zipfile.ZipFile(jar) as zf:
            text = zf.read("hsbloom-build.properties").decode("utf-8")
    except (zipfile.BadZipFile, KeyError) as exc:
        raise HsbloomJarError(f"{jar} is not an hsbloom jar ({exc}); {_how_to_get_a_jar()}") from exc
    info = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            info[key.strip()] = value.strip()
    return info


def check_jar(jar: Path, spark_version: str | None = None) -> dict[str, str]:
    """Raise HsbloomJarError unless `jar` is an hsbloom jar built for the line of `spark_version` (default:
    pyspark's): a jar serves every patch release of its Spark minor."""
    spark_version = spark_version or running_spark_release()
    info = jar_build_info(jar)
    built_for = info.get("spark.line")
    running = minor_of(spark_version)
    if built_for != running:
        raise HsbloomJarError(
            f"hsbloom jar {jar} was built for Spark {built_for or info.get('spark.version')} but this session runs "
            f"Spark {spark_version}; use hsbloom's jar for Spark {running} (leave {JAR_ENV} unset and configure "
            f"picks it), or get one: {_how_to_get_a_jar()}"
        )
    return info


def delta_maven_coordinate(line: SparkLine | None = None) -> str:
    """The Delta jar for `line` (default: the running Spark's), of the installed delta-spark package's release, else
    the one the line's row names; UnsupportedSparkError on a line no delta-spark serves."""
    line = line or running_line()
    if line.delta is None:
        raise UnsupportedSparkError(
            f"delta=True: no delta-spark release serves Spark {line.name} yet, so hsbloom runs there on Parquet "
            "tables and catalog tables only; Delta tables need a line Delta serves (docs/deploy.md, Versions)"
        )
    try:
        delta_version = metadata.version("delta-spark")
    except metadata.PackageNotFoundError:
        # Delta's jar is all a session needs; its Python package (delta.tables) is the user's choice, and pins
        # pyspark releases of its own (delta-spark 4.4 refuses pyspark 4.2.1).
        delta_version = line.delta
    return line.delta_maven_coordinate(delta_version)


def _merged(existing: str | None, *values: str, separator: str = ",") -> str:
    items = [v.strip() for v in (existing or "").split(separator) if v.strip()]
    for value in values:
        if value not in items:
            items.append(value)
    return separator.join(items)


def configure(builder: Any, delta: bool = False, jar: str | os.PathLike[str] | None = None) -> Any:
    """Return `builder` (a classic `SparkSession.Builder`) set up for hsbloom.

    Puts the jar on the driver's classpath (`spark.driver.extraClassPath`; the extension ships it to the
    executors itself), adds hsbloom's extension to `spark.sql.extensions` (with Delta's extension, catalog
    and package when `delta=True`), and makes Python workers run this interpreter by setting the
    PYSPARK_PYTHON environment variable, which PySpark reads when the session starts, unless it is set.
    Settings already on the builder are kept and extended, not replaced. A Spark Connect builder is
    refused with HsbloomSessionError: a Connect server gets hsbloom from `connect_server_command`.

    The jar does not go into `spark.jars`: a builder's `spark.jars` replaces the list spark-submit makes
    from `spark.jars.packages`, which left Delta's jars off a cluster's executor classpath.
    """
    jar_path = Path(jar) if jar is not None else default_jar_path()
    refuse_connect_builder(builder, jar_hint=str(jar_path))
    check_jar(jar_path)
    options: dict[str, str] = builder_options(builder)
    extensions = [EXTENSION_CLASS] + ([DELTA_EXTENSION_CLASS] if delta else [])
    classpath = _merged(options.get("spark.driver.extraClassPath"), str(jar_path.resolve()), separator=os.pathsep)
    builder = builder.config("spark.driver.extraClassPath", classpath)
    builder = builder.config("spark.sql.extensions", _merged(options.get("spark.sql.extensions"), *extensions))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if delta:
        builder = builder.config(
            "spark.jars.packages", _merged(options.get("spark.jars.packages"), delta_maven_coordinate())
        )
        builder = builder.config("spark.sql.catalog.spark_catalog", DELTA_CATALOG_CLASS)
    return builder


def enable(spark: Any) -> None:
    """Turn hsbloom's query acceleration on for this session (HsbloomSessionError if it has no hsbloom).

    A session setting, so it works the same on a Spark Connect session, whose server is checked for hsbloom.
    """
    require_hsbloom_session(spark, jar_hint=str(default_jar_path()))
    spark.conf.set(ENABLED_CONF, "true")


def disable(spark: Any) -> None:
    """Turn hsbloom's query acceleration off for this session (queries run as plain Spark)."""
    spark.conf.set(ENABLED_CONF, "false")


def is_enabled(spark: Any) -> bool:
    """Whether this session's queries use hsbloom's indexes (its spark.hsbloom.enabled; classic or Connect)."""
    return spark.conf.get(ENABLED_CONF, "false").lower() == "true"
