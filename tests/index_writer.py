"""Another writer process for the concurrency tests (run as a script, with its own SparkSession).

    index_writer.py race  SYSTEM_PATH DATA_PATH NAME GO_FILE
        prints READY once Spark is up, waits for GO_FILE to exist, calls create_index and
        prints one JSON line: {"outcome": "created"} or {"outcome": "error", "type": ..., "message": ...}
    index_writer.py stall SYSTEM_PATH DATA_PATH NAME
        occupies the only task slot with a long JVM-side sleep, then calls create_index, whose
        build job therefore waits; prints "BUILD_JOB_SUBMITTED <jvm pid> <pid>" once that job exists,
        and waits to be killed.
    index_writer.py halt-refresh SYSTEM_PATH NAME MODE
        prints "WRITER <jvm pid> <pid>", then calls refresh_index(NAME, MODE), whose JVM halts once the new
        version's data is written, before its completing log entry (the jar's LogSteps at "built": the JVM
        prints "DYING built" and exits at once, as if killed).
    index_writer.py die-at SYSTEM_PATH NAME OPERATION STEP [SOURCE]
        runs OPERATION (create over the Parquet directory SOURCE, refresh-full, refresh-incremental,
        refresh-quick, delete, restore, vacuum) on NAME and exits the process abruptly (os._exit, no cleanup,
        as a kill) at STEP: "transient" (its transient log entry written), "mid-build" (some files of the
        new data version written, its file table not complete), "built" (its data complete, its completing
        log entry not written) or "first-removal" (vacuum: right after it removed its first data directory).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from pyspark.sql import SparkSession

import hsbloom
from hsbloom import BFIndexConfig, Hyperspace


def start_spark(system_path: str) -> SparkSession:
    builder = (
        SparkSession.builder.master("local[1]")
        .appName("hsbloom-test-writer")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.hsbloom.system.path", system_path)
    )
    spark = hsbloom.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def race(system_path: str, data_path: str, name: str, go_file: str) -> None:
    spark = start_spark(system_path)
    df = spark.read.parquet(data_path)
    print("READY", flush=True)
    while not Path(go_file).exists():
        time.sleep(0.005)
    try:
        Hyperspace(spark).create_index(df, BFIndexConfig(name, ["id"]))
        print(json.dumps({"outcome": "created"}), flush=True)
    except Exception as exc:  # report every failure to the test, which judges it
        print(json.dumps({"outcome": "error", "type": type(exc).__name__, "message": str(exc)}), flush=True)


def stall(system_path: str, data_path: str, name: str) -> None:
    spark = start_spark(system_path)
    sc = spark.sparkContext
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
    jvm_pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    print(f"BUILD_JOB_SUBMITTED {jvm_pid} {os.getpid()}", flush=True)
    time.sleep(3600)


def halt_refresh(system_path: str, name: str, mode: str) -> None:
    spark = start_spark(system_path)
    print(f"WRITER {spark._jvm.java.lang.ProcessHandle.current().pid()} {os.getpid()}", flush=True)
    spark._jvm.hsbloom.log.LogSteps.stopAt("built", "halt")
    Hyperspace(spark).refresh_index(name, mode)


def stopping_append(step: str, stop: Callable[[], None]) -> Callable:
    """An OperationLog.append that calls `stop` at `step` ("transient": right after an operation's transient
    log entry is written; "built": right before its completing entry is written). It hooks the log itself, so
    it holds for every operation whichever module runs it."""
    from hsbloom.index.log import OperationLog

    append = OperationLog.append

    def append_then_stop(self, previous, entry):
        completing = previous is not None and not previous.state.is_stable and entry.state.is_stable
        if step == "built" and completing:
            stop()
        written = append(self, previous, entry)
        if step == "transient" and written and not entry.state.is_stable:
            stop()
        return written

    return append_then_stop


def operation_call(spark: SparkSession, name: str, operation: str, source: str | None) -> Callable[[], object]:
    hs = Hyperspace(spark)
    if operation == "create":
        return lambda: hs.create_index(spark.read.parquet(source), BFIndexConfig(name, ["id", "s"]))
    if operation.startswith("refresh-"):
        return lambda: hs.refresh_index(name, operation.split("-", 1)[1])
    return lambda: {"delete": hs.delete_index, "restore": hs.restore_index, "vacuum": hs.vacuum_index}[operation](name)


def new_data_files(index_dir: Path, before: set[str]) -> list[Path]:
    """Files (not directories) written so far under data versions that were not in `before`."""
    return [
        Path(root) / f
        for version in index_dir.glob("v__=*") if version.name not in before
        for root, _, files in os.walk(version) for f in files if not f.startswith(".")
    ]


def die_at(system_path: str, name: str, operation: str, step: str, source: str | None = None) -> None:
    from hsbloom.index.filesystem import HadoopFileSystem

    spark = start_spark(system_path)

    def die() -> None:
        print(f"DYING {step}", flush=True)
        os._exit(9)

    call = operation_call(spark, name, operation, source)
    if step in ("transient", "built"):
        from hsbloom.index.log import OperationLog

        OperationLog.append = stopping_append(step, die)
    elif step == "first-removal":
        remove = HadoopFileSystem.delete_data_version

        def remove_then_die(self, layout, version, child=None):
            remove(self, layout, version, child)
            die()

        HadoopFileSystem.delete_data_version = remove_then_die
    elif step == "mid-build":  # the operation runs on; this thread kills the process once data appears
        index_dir = Path(system_path) / name
        before = {v.name for v in index_dir.glob("v__=*")}
        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        while worker.is_alive():
            written = new_data_files(index_dir, before)
            if written:
                if any(p.name == "_SUCCESS" and p.parent.name == "files" for p in written):
                    print("TOO_LATE the file table was complete", flush=True)
                    os._exit(3)
                die()
            time.sleep(0.002)
        print("FINISHED", flush=True)  # no data was written
        return
    call()
    print("FINISHED", flush=True)  # the step was never reached


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    {"race": race, "stall": stall, "halt-refresh": halt_refresh, "die-at": die_at}[mode](*args)
