"""Another writer process for the concurrency tests (run as a script, with its own SparkSession and JVM).

    index_writer.py serve
        starts Spark, prints READY, then runs the commands it reads from stdin, one a line, so that the tests
        of a module share one writer JVM:
    race SYSTEM_PATH DATA_PATH NAME GO_FILE
        prints ARMED once DATA_PATH is read, waits for GO_FILE to exist, calls create_index under SYSTEM_PATH and
        prints one JSON line: {"outcome": "done"} or {"outcome": "error", "type": ..., "message": ...}
    stall SYSTEM_PATH DATA_PATH NAME
        occupies the only task slot with a long JVM-side sleep, then calls create_index, whose build job
        therefore waits; prints "BUILD_JOB_SUBMITTED <jvm pid> <pid>" once that job exists, and waits to be
        killed (its JVM by the test; this process then exits with status 9).
    stop-refresh SYSTEM_PATH NAME STEP
        runs an incremental refresh of NAME that the jar's test seam stops at STEP (`LogSteps.stopAt`: nothing more
        is written and no rollback runs, as after a kill), and prints one JSON line as race does; the entries it
        wrote name this JVM as their writer, alive until the test kills it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from pyspark.sql import SparkSession

import hsbloom
from hsbloom import BFIndexConfig, Hyperspace, jar
from jar_log import writer_stopped_at
from jvm_options import SHORT_LIVED_JVM


def start_spark() -> SparkSession:
    builder = (
        SparkSession.builder.master("local[1]")
        .appName("hsbloom-test-writer")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.driver.extraJavaOptions", SHORT_LIVED_JVM)
        .config("spark.sql.shuffle.partitions", "2")
    )
    spark = hsbloom.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def race(spark: SparkSession, system_path: str, data_path: str, name: str, go_file: str) -> None:
    spark.conf.set("spark.hsbloom.system.path", system_path)
    df = spark.read.parquet(data_path)
    print("ARMED", flush=True)
    while not Path(go_file).exists():
        time.sleep(0.005)
    report(lambda: Hyperspace(spark).create_index(df, BFIndexConfig(name, ["id"])))


def report(call) -> None:
    try:
        call()
        print(json.dumps({"outcome": "done"}), flush=True)
    except Exception as exc:  # report every failure to the test, which judges it
        print(json.dumps({"outcome": "error", "type": type(exc).__name__, "message": str(exc)}), flush=True)


def stop_refresh(spark: SparkSession, system_path: str, name: str, step: str) -> None:
    spark.conf.set("spark.hsbloom.system.path", system_path)
    with writer_stopped_at(spark, step):
        report(lambda: Hyperspace(spark).refresh_index(name, "incremental"))


def jvm_process(spark: SparkSession) -> subprocess.Popen:
    """The JVM process PySpark started for this session (its py4j gateway's process): the writer of the log entries,
    whose pid is `ProcessHandle.current().pid()` there."""
    proc = jar.gateway(spark).proc
    assert proc.pid == jar.jvm(spark).java.lang.ProcessHandle.current().pid(), "the JVM is not the gateway's process"
    return proc


def stall(spark: SparkSession, system_path: str, data_path: str, name: str) -> None:
    spark.conf.set("spark.hsbloom.system.path", system_path)
    sc = spark.sparkContext
    jvm = jvm_process(spark)
    df = spark.read.parquet(data_path)  # schema read before the slot is taken

    def occupy_the_only_slot() -> None:
        spark.range(1, numPartitions=1).selectExpr("reflect('java.lang.Thread', 'sleep', 3600000L)").collect()

    threading.Thread(target=occupy_the_only_slot, daemon=True).start()
    while not sc.statusTracker().getActiveStageIds():
        time.sleep(0.05)
    threading.Thread(
        target=lambda: Hyperspace(spark).create_index(df, BFIndexConfig(name, ["id"])), daemon=True
    ).start()
    while len(sc.statusTracker().getActiveJobsIds()) < 2:  # the sleeper and the build's first job
        time.sleep(0.05)
    print(f"BUILD_JOB_SUBMITTED {jvm.pid} {os.getpid()}", flush=True)
    jvm.wait()  # until the test kills it
    os._exit(9)


def serve() -> None:
    spark = start_spark()  # every command names its system path
    print("READY", flush=True)
    for line in sys.stdin:
        command, *args = line.split()
        {"race": race, "stall": stall, "stop-refresh": stop_refresh}[command](spark, *args)


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    {"serve": serve}[mode](*args)
