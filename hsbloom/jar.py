"""The one door from Python into a classic session's JVM: PySpark's private handles, and the jar's classes the
package itself calls.

Index management goes through SQL (hsbloom.statements), which works on Spark Connect too; the package calls into
the JVM only for the session check and for the run metrics and caches of `hsbloom.explain`. Every private attribute
of PySpark that anything in this repository relies on (`_jvm`, `_jsparkSession`, `_jdf`, `_gateway`, a builder's
`_options`) is read here and nowhere else (tests/test_jvm_door.py holds that), so a PySpark upgrade that renames one
changes this file alone. The jar's classes that only tests and benchmarks drive are named beside them
(tests/jvm_classes.py, bench/common.py), not here.
"""

from __future__ import annotations

from typing import Any

# The SQL extension's name is user-facing (spark.sql.extensions); the session check looks its class up.
EXTENSION_CLASS = "hsbloom.HsbloomExtension"
# The jar's classes the package calls through py4j, by role.
_CLASSES = {
    "extension": EXTENSION_CLASS,
    "index_catalog": "hsbloom.catalog.IndexCatalog",
    "pruning_explain": "hsbloom.explain.PruningExplain",
}


def jvm(spark: Any) -> Any:
    """The py4j view of the session's JVM (PySpark-private `_jvm`)."""
    return spark._jvm


def gateway(spark: Any) -> Any:
    """The py4j gateway of the session's JVM (PySpark-private `SparkContext._gateway`): its process, its arrays."""
    return spark.sparkContext._gateway


def java_session(spark: Any) -> Any:
    """The JVM SparkSession behind a PySpark session (PySpark-private `_jsparkSession`)."""
    return spark._jsparkSession


def java_dataframe(df: Any) -> Any:
    """The JVM Dataset behind a PySpark DataFrame (PySpark-private `_jdf`)."""
    return df._jdf


def builder_options(builder: Any) -> dict[str, str]:
    """The settings given to a SparkSession.Builder so far (PySpark-private `_options`; empty if renamed)."""
    return dict(getattr(builder, "_options", {}))


def java_class(spark: Any, name: str) -> Any:
    """The py4j JavaClass of the class with the fully qualified `name` (a JavaPackage when it is not on the
    classpath, as when the jar is missing)."""
    target = jvm(spark)
    for part in name.split("."):
        target = getattr(target, part)
    return target


def jar_class(spark: Any, role: str) -> Any:
    """One of the jar's classes the package calls, by role (`_CLASSES`)."""
    return java_class(spark, _CLASSES[role])
