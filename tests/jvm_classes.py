"""The JVM classes tests drive through py4j, by role: the jar's internals (read and written directly to set up or
check what the SQL statements cannot show) and the test KMS client.

The package's own classes and PySpark's private handles are hsbloom.jar's, the one door into the JVM; this module
only adds the classes the package never calls, so the shipped module names none of them.
"""

from __future__ import annotations

from typing import Any

from hsbloom import jar

# The classes by role. Each is named here once; the tests call `jvm_class(spark, role)`.
CLASSES = {
    "build_info": "hsbloom.BuildInfo",
    "index_damage": "hsbloom.index.IndexDamage",
    "index_tables": "hsbloom.index.IndexTables",
    "layout": "hsbloom.format.Layout",
    "log_json": "hsbloom.format.LogJson",
    "log_steps": "hsbloom.log.LogSteps",
    "operation_log": "hsbloom.log.OperationLog",
    "sbbf": "hsbloom.sbbf.Sbbf",
    "settings": "hsbloom.conf.HsbloomConf",
    "source_listing": "hsbloom.index.SourceListing",
    "sources": "hsbloom.catalog.Sources",
    "writer": "hsbloom.format.Writer",
    # Not in the shipped jar: jvm/testkit and jvm/testkms, on the test sessions' classpath (tests/conftest.py).
    "json_build": "hsbloom.testkit.JsonBuild",
    "test_kms": "hsbloom.testkms.TestKmsClient",
}


def jvm_class(spark: Any, role: str) -> Any:
    """The py4j JavaClass of the class of `role` (a JavaPackage when it is not on the session's classpath)."""
    return jar.java_class(spark, CLASSES[role])


def hadoop_conf(spark: Any) -> Any:
    """A fresh Hadoop Configuration with the session's settings (what Spark's own file sources read with)."""
    return jar.java_session(spark).sessionState().newHadoopConf()


def hadoop_path(spark: Any, *parts: Any) -> Any:
    """An org.apache.hadoop.fs.Path."""
    return jar.jvm(spark).org.apache.hadoop.fs.Path(*parts)
