"""hsbloom on a real Spark standalone cluster: a master and two workers on 127.0.0.1, a separate driver.

Local mode runs executors inside the driver's JVM, which hides how jars and the Python interpreter reach
a cluster's executors. Here the driver (tests/cluster_driver.py) is set up by `hsbloom.configure` alone,
with a broken `python3` first on every process's PATH, and runs Parquet and Delta scenarios with hsbloom
on and off; the tests judge its answers by the same expectations as the local-mode suites. All processes
share this machine's disk; a real cluster needs storage every node reads (docs/deploy.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from standalone_cluster import StandaloneCluster, cluster_env, stop_group

DRIVER = Path(__file__).resolve().parent / "cluster_driver.py"


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory) -> dict:
    """Start the cluster, run the driver on it once, and return what it reported; stop everything after."""
    root = tmp_path_factory.mktemp("cluster")
    fake_bin = root / "bin"
    fake_bin.mkdir()
    for name in ("python3", "python"):
        fake = fake_bin / name
        fake.write_text("#!/bin/sh\necho 'not the driver interpreter: PYSPARK_PYTHON was not honoured' >&2\nexit 97\n")
        fake.chmod(0o755)
    env = cluster_env(root, path_first=fake_bin)
    cluster = StandaloneCluster(root, env)
    driver = None
    try:
        # The driver starts while the workers register (each is a JVM start); it waits for their executors.
        cluster.launch()
        work = root / "work"
        work.mkdir()
        with open(root / "driver.log", "w") as log:
            driver = subprocess.Popen(
                [sys.executable, str(DRIVER), cluster.master_url, str(work), str(cluster.workers)],
                stdout=subprocess.PIPE, stderr=log, text=True, env=env, cwd=root, start_new_session=True,
            )  # fmt: skip
            cluster.wait_for_workers()
            stdout, _ = driver.communicate(timeout=600)
        lines = [line for line in stdout.splitlines() if line.startswith("RESULTS ")]
        assert lines, f"the driver failed (exit {driver.returncode}):\n{(root / 'driver.log').read_text()[-4000:]}"
        yield json.loads(lines[-1].removeprefix("RESULTS "))
    finally:
        if driver is not None:
            stop_group(driver)
        cluster.stop()


def test_the_driver_ran_on_the_cluster_with_two_executors(cluster_run):
    assert cluster_run["master"].startswith("spark://127.0.0.1:")
    assert cluster_run["executors"] == 2


def test_python_workers_run_the_drivers_interpreter(cluster_run):
    """configure set PYSPARK_PYTHON; the `python3` first on PATH would exit with an error."""
    assert cluster_run["worker_pythons"] == [cluster_run["driver_python"]]
    assert cluster_run["indexes"] == ["dim", "events"]


def test_lookup_reads_the_files_that_may_hold_a_value(cluster_run):
    """id = 1234 OR s IN (...): the three files of 1234, u-10 and u-2010 (u-99999 is in none)."""
    lookup = cluster_run["lookup"]
    assert lookup["on"] == lookup["off"] == [[10, "u-10", 3], [1234, "u-1234", 1234 % 7], [2010, "u-2010", 1]]
    assert (lookup["files_on"], lookup["files_off"]) == (3, 8)


def test_join_injects_the_build_side_keys_and_prunes_probe_files(cluster_run):
    join = cluster_run["join"]
    assert join["on"] == join["off"] == [[100, 2, 100], [2100, 0, 2100]]
    assert join["files_off"] == 8 + 2
    assert join["files_on"] == 2 + 2  # the two events files holding u-100 and u-2100, and the dimension's two
    assert "distinct key(s) from the build side" in cluster_run["join_explain"]


def test_incremental_refresh_indexes_appended_files(cluster_run):
    assert cluster_run["refresh"] == {"refreshed": True, "appended_files": 2}
    lookup = cluster_run["lookup_appended"]
    assert lookup["on"] == lookup["off"] == [[17, "u-17", 3], [4321, "u-4321", 2]]
    assert (lookup["files_on"], lookup["files_off"]) == (2, 10)


def test_delta_delete_writes_deletion_vectors(cluster_run):
    assert cluster_run["delta_operations"] == ["WRITE", "DELETE"]
    assert cluster_run["delta_deletion_vectors"] > 0


def test_delta_lookup_after_a_delete_answers_as_without_hsbloom(cluster_run):
    """The deleted row 3 is gone either way. Time travel and refreshes of Delta tables are DeltaRefreshSuite's
    (local mode): a refresh's jobs on executors are the Parquet scenario's incremental refresh here."""
    latest = cluster_run["delta_lookup"]
    assert latest["on"] == latest["off"] == [[4, "n-4"], [1501, "n-1501"]]
    assert latest["files_on"] == 2 < latest["files_off"]  # Delta's own statistics may skip files too

