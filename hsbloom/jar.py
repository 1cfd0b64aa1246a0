"""The one door from Python into a classic session's JVM: the hsbloom jar's classes and PySpark's private handles.

Index management goes through SQL (hsbloom.statements), which works on Spark Connect too; py4j is left for the
session check and for what tests and benchmarks read from a classic session's JVM. Every class of the jar reached
through py4j is named here once, and so is every private attribute of PySpark hsbloom relies on (`_jvm`, `_jdf`,
`_jsparkSession`, a builder's `_options`).
"""

from __future__ import annotations

from typing import Any

# The jar's classes Python reaches through py4j, by role. The SQL extension's name is user-facing
# (spark.sql.extensions). The package itself manages indexes through SQL only (hsbloom.statements); it calls the
# jar directly only for the session check, and for the run metrics and caches that tests and benchmarks read on a
# classic session. The other roles are the jar's internals that tests and benchmarks drive.
EXTENSION_CLASS = "hsbloom.HsbloomExtension"
_CLASSES = {
    "extension": EXTENSION_CLASS,
    "index_catalog": "hsbloom.catalog.IndexCatalog",
    "pruning_explain": "hsbloom.explain.PruningExplain",
    # Used by tests and benchmarks:
    "index_build": "hsbloom.indexing.IndexBuild",
    "encrypted_columns": "hsbloom.indexing.EncryptedColumns",
    "index_damage": "hsbloom.index.IndexDamage",
    "index_tables": "hsbloom.index.IndexTables",
    "index_directories": "hsbloom.index.IndexDirectories",
    "index_permissions": "hsbloom.index.IndexPermissions",
    "global_filter": "hsbloom.index.GlobalFilter",
    "global_filter_ref": "hsbloom.index.GlobalFilterRef",
    "layout": "hsbloom.format.Layout",
    "log_store": "hsbloom.log.LogStore",
    "sbbf": "hsbloom.sbbf.Sbbf",
    "settings": "hsbloom.conf.HsbloomConf",
    # Only on the classpath of bench/sbbf.py and bench/scale.py (jvm/bench, not in the shipped jar).
    "sbbf_bench": "hsbloom.bench.SbbfBench",
    "scale_bench": "hsbloom.bench.ScaleBench",
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
