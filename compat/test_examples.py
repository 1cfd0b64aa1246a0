"""The quickstarts run to the end, and their lookups read one file. They run in JVMs of their own, started with the
test session (compat/quickstarts.py); these tests, run last, wait for them.
"""

from __future__ import annotations

import re

import pyspark
import pytest

from quickstarts import Output


@pytest.fixture(scope="module")
def runs(example_runs) -> dict[str, Output]:
    return {name: example.output() for name, example in example_runs.items()}


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
