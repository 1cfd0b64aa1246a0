"""Is this a session hsbloom can work with? Refusals that say what to do instead.

hsbloom needs its SQL extension registered, and its jar loaded, when a session starts. A classic session
started without them (a notebook's session, returned as it is by a later `getOrCreate`) would otherwise fail
deep in py4j or, worse, run queries without acceleration in silence. A Spark Connect session runs in its
server, whose jar and extensions were fixed when the server started: it is asked over Connect (its conf and
`hsbloom_version()`), never through py4j, which a Connect client does not have. Each check is a conf read and
a class lookup, or on Connect two round trips.
"""

from __future__ import annotations

import os
from typing import Any

from hsbloom import jar
from hsbloom.jar import EXTENSION_CLASS
from hsbloom.errors import HsbloomSessionError, first_line


# The SQL function the extension registers in every session: on Connect, the proof that the server loaded it.
VERSION_FUNCTION = "hsbloom_version"
# Spark's Connect server, which hsbloom.connect starts and the refusals below tell how to start.
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"


def _start_it_right(jar_hint: str) -> str:
    return (
        "Start the session with `hsbloom.configure(SparkSession.builder, delta=...).getOrCreate()` before any "
        "other session in this process (getOrCreate returns a running session as it is: call spark.stop() "
        f"first), or launch spark-submit / pyspark with `--jars {jar_hint} "
        f"--conf spark.sql.extensions={EXTENSION_CLASS}` (docs/deploy.md)."
    )


def _start_the_server_right(jar_hint: str) -> str:
    return (
        "Start the Spark Connect server with hsbloom: `hsbloom.connect_server_command(delta=...)` returns its "
        f"command (spark-submit --class {SERVER_CLASS} --driver-class-path {jar_hint} "
        f"--conf spark.sql.extensions={EXTENSION_CLASS}), and `hsbloom.start_connect_server(...)` runs one on "
        "this machine (docs/deploy.md#spark-connect)."
    )


def is_connect_session(spark: Any) -> bool:
    """A Spark Connect session, told by its type (pyspark.sql.connect.*), with no server contacted."""
    return type(spark).__module__.startswith("pyspark.sql.connect.")


def refuse_connect_builder(builder: Any, jar_hint: str = "/path/to/hsbloom.jar") -> None:
    """Raise HsbloomSessionError if `builder.getOrCreate()` would make a Spark Connect session."""
    options: dict[str, str] = jar.builder_options(builder)
    api_mode = options.get("spark.api.mode", os.environ.get("SPARK_API_MODE", "")).lower()
    remote = options.get("spark.remote") or os.environ.get("SPARK_REMOTE")
    if remote or api_mode == "connect" or "SPARK_CONNECT_MODE_ENABLED" in os.environ:
        where = f" ({remote})" if remote else ""
        raise HsbloomSessionError(
            f"hsbloom.configure was given a Spark Connect builder{where}; a Connect session runs in its server, "
            "whose jar and extensions are fixed when the server starts, so configure cannot set it up. "
            + _start_the_server_right(jar_hint)
            + " Then connect with SparkSession.builder.remote(url).getOrCreate(), without configure."
        )


def _extensions(spark: Any) -> list[str]:
    return [name.strip() for name in (spark.conf.get("spark.sql.extensions", "") or "").split(",")]


def _require_connect_server_with_hsbloom(spark: Any, jar_hint: str) -> None:
    """The server's own answers: its spark.sql.extensions, and hsbloom_version(), which the extension registers."""
    from pyspark.errors import AnalysisException

    if EXTENSION_CLASS not in _extensions(spark):
        raise HsbloomSessionError(
            "This Spark Connect session's server was started without hsbloom's SQL extension (its "
            f"spark.sql.extensions does not name {EXTENSION_CLASS}), so queries through it cannot use hsbloom's "
            "indexes. " + _start_the_server_right(jar_hint)
        )
    try:
        spark.sql(f"SELECT {VERSION_FUNCTION}()").collect()
    except AnalysisException as exc:
        raise HsbloomSessionError(
            f"This Spark Connect session's server names {EXTENSION_CLASS} in spark.sql.extensions, but "
            f"{VERSION_FUNCTION}() does not answer ({first_line(exc, 200)}): the hsbloom jar is not on the server "
            "driver's classpath, so Spark skipped the extension (the server's log has a warning saying so). "
            + _start_the_server_right(jar_hint)
        ) from exc


def require_hsbloom_session(spark: Any, jar_hint: str = "/path/to/hsbloom.jar") -> None:
    """Raise HsbloomSessionError unless `spark` has hsbloom's extension and jar (on Spark Connect: its server)."""
    if is_connect_session(spark):
        _require_connect_server_with_hsbloom(spark, jar_hint)
        return
    from py4j.java_gateway import JavaClass

    if EXTENSION_CLASS not in _extensions(spark):
        raise HsbloomSessionError(
            "This SparkSession was started without hsbloom's SQL extension (spark.sql.extensions does not "
            f"name {EXTENSION_CLASS}), so hsbloom can neither manage indexes nor use them in queries. "
            + _start_it_right(jar_hint)
        )
    if not isinstance(jar.jar_class(spark, "extension"), JavaClass):
        raise HsbloomSessionError(
            f"spark.sql.extensions names {EXTENSION_CLASS} but the hsbloom jar is not on the driver's "
            "classpath, so Spark skipped the extension (its log has a warning saying so). "
            + _start_it_right(jar_hint)
        )
