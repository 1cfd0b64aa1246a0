"""The quickstarts as a user runs them, each in its own JVM: examples/quickstart.py with this environment's python,
and examples/sql_quickstart.sql in pyspark's spark-sql shell with hsbloom (`hsbloom.spark_sql_command`). Both run
at once, in folders under pytest's tmp dir (the Python quickstart writes its data beside the script: it runs from a
copy).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pyspark
import pytest

import hsbloom
from conftest import ROOT

EXAMPLES = ROOT / "examples"
TIMEOUT = 900  # seconds, for a loaded 2-core machine


class Run(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def start(command: list[str], folder: Path) -> subprocess.Popen:
    return subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen) -> Run:
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
    return Run(process.returncode, stdout, stderr)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Run]:
    python_folder = tmp_path_factory.mktemp("quickstart")
    shutil.copy2(EXAMPLES / "quickstart.py", python_folder)
    sql_folder = tmp_path_factory.mktemp("sql_quickstart")
    conf = {
        "spark.sql.warehouse.dir": str(sql_folder / "warehouse"),
        "spark.hsbloom.system.path": str(sql_folder / "indexes"),
        "spark.local.dir": str(sql_folder / "local"),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={sql_folder / 'derby'}",
        "spark.ui.enabled": "false",
    }
    sql = hsbloom.spark_sql_command(master="local[2]", conf=conf) + ["-S", "-f", str(EXAMPLES / "sql_quickstart.sql")]
    processes = {
        "python": start([sys.executable, "quickstart.py", "--rows", "20000", "--files", "8"], python_folder),
        "sql": start(sql, sql_folder),
    }
    return {name: finish(process) for name, process in processes.items()}


def test_the_quickstart_runs_and_a_lookup_reads_one_file_of_eight(runs):
    run = runs["python"]
    assert run.returncode == 0, run.stderr[-4000:]
    assert f"on Spark {pyspark.__version__}" in run.stdout  # this environment's Spark
    assert "built index events_keys" in run.stdout
    assert re.search(r"user_id = -?\d+: 1 row\(s\); files read 8 -> 1;", run.stdout), run.stdout[-4000:]
    assert re.search(r"trace_id = '[0-9a-f-]+': 1 row\(s\); files read 8 -> 1;", run.stdout), run.stdout[-4000:]
    assert "user_id = 42 (absent): 0 row(s); files read 8 -> 0" in run.stdout


def test_the_sql_quickstart_runs_every_statement(runs):
    run = runs["sql"]
    assert run.returncode == 0, run.stderr[-4000:]
    lines = run.stdout.splitlines()
    assert any(line.startswith('quickstart_ids\t["user_id"]\tACTIVE\t') for line in lines), run.stdout[-4000:]
    assert "16 files -> 1" in run.stdout  # EXPLAIN BLOOMFILTER of the lookup
    assert any(line.startswith("quickstart_ids\tquick\ttrue\t2\t0\t") for line in lines)
    assert any(line.startswith("quickstart_ids\tincremental\ttrue\t2\t0\t1\t") for line in lines)
    assert "18 files -> 1" in run.stdout  # EXPLAIN BLOOMFILTER ANALYZE after the refreshes
    assert any(line.startswith("quickstart_ids\tACTIVE\ttrue\t") for line in lines)  # VERIFY: healthy
