"""The one door from Python into the JVM: the hsbloom jar's entry points and PySpark's private handles.

Python drives hsbloom's Scala side through py4j. Every class of the jar that Python calls is named here
once, and so is every private attribute of PySpark hsbloom relies on (`_jvm`, `_jdf`, `_jsparkSession`, a
builder's `_options`). When the jar's packages move or PySpark renames an internal, this is the only
Python file to change.
"""

from __future__ import annotations

from typing import Any

# The jar's classes Python calls, by role. The SQL extension's name is user-facing (spark.sql.extensions).
EXTENSION_CLASS = "hsbloom.HsbloomExtension"
_CLASSES = {
    "build_input": "hsbloom.build.BuildInput",
    "index_build": "hsbloom.build.IndexBuild",
    "index_refresh": "hsbloom.build.IndexRefresh",
    "sources": "hsbloom.catalog.Sources",
    "encrypted_columns": "hsbloom.build.EncryptedColumns",
    "index_catalog": "hsbloom.catalog.IndexCatalog",
    "index_damage": "hsbloom.index.IndexDamage",
    "index_verify": "hsbloom.index.IndexVerify",
    "index_log": "hsbloom.index.IndexLog",
    "index_tables": "hsbloom.index.IndexTables",
    "source_listing": "hsbloom.index.SourceListing",
    "log_store": "hsbloom.index.LogStore",
    "index_directories": "hsbloom.index.IndexDirectories",
    "index_permissions": "hsbloom.index.IndexPermissions",
    "global_filter": "hsbloom.index.GlobalFilter",
    "global_filter_ref": "hsbloom.index.GlobalFilterRef",
    "sbbf": "hsbloom.sbbf.Sbbf",
    "pruning_explain": "hsbloom.explain.PruningExplain",
    "statement_explain": "hsbloom.explain.StatementExplain",
    "py4j_socket": "hsbloom.shim.Py4jSocket",
    "layout": "hsbloom.index.Layout",
    "settings": "hsbloom.conf.HsbloomConf",
    # Only on the classpath of bench/sbbf.py and bench/scale.py (jvm/bench, not in the shipped jar).
    "sbbf_bench": "hsbloom.bench.SbbfBench",
    "scale_bench": "hsbloom.bench.ScaleBench",  # bench/scale.py
    "extension": EXTENSION_CLASS,
}


def jvm(spark: Any) -> Any:
    """The py4j view of the session's JVM (PySpark-private `_jvm`)."""
    return spark._jvm


def java_session(spark: Any) -> Any:
    """The JVM SparkSession behind a PySpark session (PySpark-private `_jsparkSession`)."""
    return spark._jsparkSession


def java_dataframe(df: Any) -> Any:
    """The JVM Dataset behind a PySpark DataFrame (PySpark-private `_jdf`)."""
    return df._jdf


def builder_options(builder: Any) -> dict[str, str]:
    """The settings given to a SparkSession.Builder so far (PySpark-private `_options`; empty if renamed)."""
    return dict(getattr(builder, "_options", {}))


def hadoop_conf(spark: Any) -> Any:
    """A fresh Hadoop Configuration with the session's settings (what Spark's own file sources read with)."""
    return java_session(spark).sessionState().newHadoopConf()


def hadoop_path(spark: Any, *parts: Any) -> Any:
    """An org.apache.hadoop.fs.Path (public Hadoop API, reached through py4j)."""
    return jvm(spark).org.apache.hadoop.fs.Path(*parts)


def jar_class(spark: Any, role: str) -> Any:
    """The py4j JavaClass (or JavaPackage, when the jar is missing) of one of the jar's classes by role."""
    target = jvm(spark)
    for part in _CLASSES[role].split("."):
        target = getattr(target, part)
    return target


def fast_jvm_replies(spark: Any) -> bool:
    """Turn Nagle's algorithm off on this Python thread's py4j socket (True if done).

    The py4j that PySpark 4.2 ships stalls about 40 ms on every reply longer than 8 KiB (a log entry, a file
    listing), which made most of an incremental refresh's fixed cost; see `Py4jSocket` in the jar.
    """
    return bool(jar_class(spark, "py4j_socket").disableNagle())
