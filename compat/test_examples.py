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


LOOKUP = re.compile(r"^(?P<label>.+?): (?P<rows>\d+) row\(s\); files read (?P<off>\d+) -> (?P<on>\d+) "
                    r"\(files holding it: (?P<holding>\d+)\);", re.MULTILINE)


def test_the_quickstart_runs_and_its_lookups_read_the_files_holding_the_key(runs):
    run = runs["python"]
    assert run.returncode == 0, run.stderr[-4000:]
    assert f"on Spark {pyspark.__version__}" in run.stdout  # this environment's Spark
    assert "built index events_keys" in run.stdout
    lookups = {"absent" if m["label"].endswith("(absent)") else m["label"].split(" = ")[0]: m
               for m in LOOKUP.finditer(run.stdout)}
    assert set(lookups) == {"user_id", "trace_id", "absent"}, run.stdout[-4000:]
    for name, rows, holding in (("user_id", 1, 1), ("trace_id", 1, 1), ("absent", 0, 0)):
        found = lookups[name]
        assert (int(found["rows"]), int(found["off"]), int(found["holding"])) == (rows, 8, holding), found[0]
        # The index reads every file that holds the key, and a false positive at most (fpp 0.01, 7 other files).
        assert holding <= int(found["on"]) <= holding + 1, found[0]


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
