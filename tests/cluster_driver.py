"""The driver program of tests/test_cluster.py: hsbloom on a real standalone cluster, as a user runs it.

    python tests/cluster_driver.py MASTER_URL WORK_DIR EXECUTORS

Starts its session with `hsbloom.configure(builder, delta=True)` only (no PYSPARK_PYTHON, no spark.jars),
waits until EXECUTORS executors have registered (the cluster's workers may still be starting), runs each
scenario with hsbloom on and off, and prints one line `RESULTS <json>` for the tests to judge.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from hsbloom import jar
import hsbloom
from hsbloom.explain import explain_string
from jvm_options import SHORT_LIVED_JVM


def start(master: str, work: Path) -> Any:
    builder = (
        SparkSession.builder.master(master)
        .appName("hsbloom-cluster-test")
        .config("spark.executor.memory", "512m")
        .config("spark.executor.cores", "1")
        .config("spark.driver.memory", "1g")
        .config("spark.driver.extraJavaOptions", SHORT_LIVED_JVM)
        .config("spark.executor.extraJavaOptions", SHORT_LIVED_JVM)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.databricks.delta.snapshotPartitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(work / "warehouse"))
        .config("spark.hsbloom.system.path", str(work / "indexes"))
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")  # shuffle joins, where hsbloom injects
    )
    spark = hsbloom.configure(builder, delta=True).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def rows_and_files(df: Any) -> tuple[list[tuple], int]:
    """The sorted rows of `df` and how many files its scans read, from one run (as explain.file_counts)."""
    fresh = df.select("*")
    rows = sorted(tuple(row) for row in fresh.collect())
    plan = jar.java_dataframe(fresh).queryExecution().executedPlan()
    return rows, int(jar.jar_class(df.sparkSession, "pruning_explain").filesRead(plan))


def on_and_off(spark: Any, query: Callable[[], Any]) -> dict[str, Any]:
    """The sorted rows and files read of `query()` with hsbloom on, then off."""
    result = {}
    for state, switch in (("on", hsbloom.enable), ("off", hsbloom.disable)):
        switch(spark)
        result[state], result[f"files_{state}"] = rows_and_files(query())
    hsbloom.disable(spark)
    return result


def parquet_scenarios(spark: Any, work: Path, out: dict[str, Any]) -> None:
    events, dim = str(work / "events"), str(work / "dim")
    # 8 files of 500 consecutive ids each; s and k derive from the id.
    (spark.range(0, 4000, numPartitions=8).withColumn("s", F.concat(F.lit("u-"), F.col("id").cast("string")))
     .withColumn("k", (F.col("id") % 7).cast("int")).write.parquet(events))  # fmt: skip
    (spark.createDataFrame([(100, "u-100"), (2100, "u-2100"), (9000, "u-9000")], "id long, s string")
     .repartition(2).write.parquet(dim))  # fmt: skip
    hs = hsbloom.Hyperspace(spark)
    hs.create_index(spark.read.parquet(events), hsbloom.BFIndexConfig("events", ["id", "s"]))
    hs.create_index(spark.read.parquet(dim), hsbloom.BFIndexConfig("dim", ["s"]))
    out["indexes"] = sorted(row.name for row in hs.indexes().collect())  # runs a Python worker on an executor
    read = lambda: spark.read.parquet(events)  # noqa: E731
    out["lookup"] = on_and_off(spark, lambda: read().where("id = 1234 OR s IN ('u-10', 'u-2010', 'u-99999')"))

    def join() -> Any:
        small = spark.read.parquet(dim).where("id < 5000").alias("d")
        return read().alias("e").join(small, F.col("e.s") == F.col("d.s")).select("e.id", "e.k", "d.id")

    out["join"] = on_and_off(spark, join)
    hsbloom.enable(spark)
    out["join_explain"] = explain_string(join())
    hsbloom.disable(spark)
    spark.range(4000, 5000, numPartitions=2).withColumn("s", F.concat(F.lit("u-"), F.col("id").cast("string"))) \
        .withColumn("k", (F.col("id") % 7).cast("int")).write.mode("append").parquet(events)
    result = hs.refresh_index("events", "incremental")
    out["refresh"] = {"refreshed": result.refreshed, "appended_files": result.appended_files}
    out["lookup_appended"] = on_and_off(spark, lambda: read().where("id = 4321 OR s = 'u-17'"))


def delta_scenarios(spark: Any, work: Path, out: dict[str, Any]) -> None:
    table = str(work / "lake")
    (spark.range(0, 2000, numPartitions=4).withColumn("name", F.concat(F.lit("n-"), F.col("id").cast("string")))
     .write.format("delta").option("delta.enableDeletionVectors", "true").save(table))  # fmt: skip
    hs = hsbloom.Hyperspace(spark)
    hs.create_index(spark.read.format("delta").load(table), hsbloom.BFIndexConfig("lake", ["id", "name"]))
    spark.sql(f"DELETE FROM delta.`{table}` WHERE id % 3 = 0")
    history = spark.sql(f"DESCRIBE HISTORY delta.`{table}`").orderBy("version").collect()
    out["delta_operations"] = [row.operation for row in history]
    out["delta_deletion_vectors"] = int(history[-1].operationMetrics.get("numDeletionVectorsAdded", "0"))
    latest = lambda: spark.read.format("delta").load(table)  # noqa: E731
    out["delta_lookup"] = on_and_off(spark, lambda: latest().where("id IN (3, 4, 1501)"))


def phase(name: str, began: list[float]) -> None:
    """How long each phase took, to the driver's log (for whoever looks into a slow run)."""
    now = time.monotonic()
    print(f"cluster_driver: {name} took {now - began[0]:.1f} s", file=sys.stderr, flush=True)
    began[0] = now


def wait_for_executors(spark: Any, count: int, timeout: float = 300.0) -> None:
    """Until `count` executors have registered, so that every one of them runs the scenarios' tasks."""
    deadline = time.monotonic() + timeout
    while jar.java_session(spark).sparkContext().getExecutorMemoryStatus().size() - 1 < count:  # minus the driver
        if time.monotonic() > deadline:
            raise RuntimeError(f"fewer than {count} executors registered within {timeout:.0f} s")
        time.sleep(0.5)


def main(master: str, work_dir: str, executors: int) -> None:
    work = Path(work_dir)
    began = [time.monotonic()]
    spark = start(master, work)
    phase("session start", began)
    wait_for_executors(spark, executors)
    phase("executors", began)
    sc = spark.sparkContext
    out: dict[str, Any] = {
        "master": sc.master,
        "driver_python": sys.executable,
        "worker_pythons": sorted(set(sc.parallelize(range(4), 2).map(lambda _: sys.executable).collect())),
    }
    phase("python workers", began)
    parquet_scenarios(spark, work, out)
    phase("parquet scenarios", began)
    delta_scenarios(spark, work, out)
    phase("delta scenarios", began)
    out["executors"] = jar.java_session(spark).sparkContext().getExecutorMemoryStatus().size() - 1  # minus the driver
    print("RESULTS " + json.dumps(out), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
