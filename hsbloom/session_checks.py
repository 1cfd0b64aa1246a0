"""Is this a session hsbloom can work with? Refusals that say what to do instead.

hsbloom drives Spark through the JVM of a classic PySpark session and needs its SQL extension registered
when the session starts. A session started without it (a notebook's session, returned as it is by a later
`getOrCreate`) would otherwise fail deep in py4j or, worse, run queries without acceleration in silence;
a Spark Connect session has no JVM on the client at all. Each check is a conf read and a class lookup.
"""

from __future__ import annotations

import os
from typing import Any

from hsbloom import jar, settings
from hsbloom.jar import EXTENSION_CLASS
from hsbloom.errors import HsbloomError



class HsbloomSessionError(HsbloomError, RuntimeError):
    """The SparkSession (or builder) cannot run hsbloom: no hsbloom extension or jar, or Spark Connect."""


def _start_it_right(jar_hint: str) -> str:
    return (
        "Start the session with `hsbloom.configure(SparkSession.builder, delta=...).getOrCreate()` before any "
        "other session in this process (getOrCreate returns a running session as it is: call spark.stop() "
        f"first), or launch spark-submit / pyspark with `--jars {jar_hint} "
        f"--conf spark.sql.extensions={EXTENSION_CLASS}` (docs/deploy.md)."
    )


CONNECT_EXPLANATION = (
    "hsbloom's management calls (Hyperspace(...), hsbloom.enable, explain) need a classic PySpark session: "
    "they call the JVM directly, which Spark Connect does not expose to clients. What works on Connect is "
    "transparent pruning, when the Connect server was started with the hsbloom jar and "
    f"spark.sql.extensions={EXTENSION_CLASS} and {settings.ENABLED}=true; create and refresh indexes "
    "from a classic session (a builder without .remote(), or spark-submit) on the same system path "
    "(docs/deploy.md)."
)


def is_connect_session(spark: Any) -> bool:
    """A Spark Connect session, told by its type (pyspark.sql.connect.*), with no server contacted."""
    return type(spark).__module__.startswith("pyspark.sql.connect.")


def refuse_connect_builder(builder: Any) -> None:
    """Raise HsbloomSessionError if `builder.getOrCreate()` would make a Spark Connect session."""
    options: dict[str, str] = jar.builder_options(builder)
    api_mode = options.get("spark.api.mode", os.environ.get("SPARK_API_MODE", "")).lower()
    remote = options.get("spark.remote") or os.environ.get("SPARK_REMOTE")
    if remote or api_mode == "connect" or "SPARK_CONNECT_MODE_ENABLED" in os.environ:
        where = f" ({remote})" if remote else ""
        raise HsbloomSessionError(
            f"hsbloom.configure was given a Spark Connect builder{where}; it cannot set up a remote session. "
            + CONNECT_EXPLANATION
        )


def require_hsbloom_session(spark: Any, jar_hint: str = "/path/to/hsbloom.jar") -> None:
    """Raise HsbloomSessionError unless `spark` is a classic session with hsbloom's extension and jar."""
    if is_connect_session(spark):
        raise HsbloomSessionError("This is a Spark Connect session. " + CONNECT_EXPLANATION)
    from py4j.java_gateway import JavaClass

    extensions = [name.strip() for name in (spark.conf.get("spark.sql.extensions", "") or "").split(",")]
    if EXTENSION_CLASS not in extensions:
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
