"""hsbloom's SQL statements through the `spark-sql` shell (pyspark's bin/spark-sql -f script.sql): every statement
of docs/sql.md, with Delta, as a SQL user runs them; and their errors, named by their error classes.

One shell process runs the whole script (a JVM start costs 10-60 s); `SELECT 'MARK', '<step>'` lines split its
output into the answers of each step. A shell keeps going after an error only with hive.cli.errors.ignore, which
the second script sets to collect every error in one run.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

import hsbloom
from conftest import ROOT, TEST_SETTINGS


def run_script(tmp_path: Path, script: str, ignore_errors: bool = False) -> tuple[dict[str, list[list[str]]], str]:
    """Run `script` in one spark-sql shell with hsbloom and Delta; (output rows by step, stderr)."""
    path = tmp_path / "script.sql"
    path.write_text(script)
    conf = {
        **TEST_SETTINGS,
        "spark.sql.warehouse.dir": str(tmp_path / "warehouse"),
        "spark.hsbloom.system.path": str(tmp_path / "indexes"),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={tmp_path / 'derby'}",
    }
    command = hsbloom.spark_sql_command(delta=True, master="local[2]", conf=conf) + ["-S"]
    command += (["--hiveconf", "hive.cli.errors.ignore=true"] if ignore_errors else []) + ["-f", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    if not ignore_errors:
        assert done.returncode == 0, done.stderr[-4000:]
    steps: dict[str, list[list[str]]] = {}
    current = "start"
    for line in done.stdout.splitlines():
        fields = line.split("\t")
        if fields[0] == "MARK":
            current = fields[1]
            steps[current] = []
        else:
            steps.setdefault(current, []).append(fields)
    return steps, done.stderr


def stuck_create(system: Path, name: str) -> None:
    """A CREATING entry of a writer on another host (which no operation can prove dead): an index to cancel."""
    entry = {
        "log_format": 1, "id": 0, "state": "CREATING", "operation": "create", "timestamp_ms": int(time.time() * 1000),
        "hsbloom_version": "0.1.0", "writer": {"host": "another-host", "pid": 4242, "operation_id": "elsewhere"},
        "config": {"index_name": name, "indexed_columns": ["id"], "expected_num_items": None, "fpp": None,
                   "global_filter": True},
        "source": {"format": "parquet", "root_paths": ["file:/nowhere"], "options": {}, "table": None,
                   "delta_version": None, "schema": {"id": "bigint"}, "partition_columns": []},
        "data_version": 0, "data_path": None, "data_parts": None, "dropped_file_ids": [], "data_layout": 4,
        "summary": None, "message": None, "pending": None,
    }
    log = system / name / "_hsbloom_log"
    log.mkdir(parents=True)
    (log / f"{0:020d}.json").write_text(json.dumps(entry))


STATEMENTS = """
SET spark.hsbloom.enabled = true;
CREATE TABLE events USING parquet AS SELECT id, cast(id AS string) AS s FROM range(0, 4000, 1, 8);
SELECT 'MARK', 'create';
CREATE BLOOMFILTER INDEX events_ids ON events (id, `s`) OPTIONS (fpp = 0.01, GLOBAL_FILTER = false);
CREATE BLOOMFILTER INDEX IF NOT EXISTS events_ids ON events (id);
SELECT 'MARK', 'show';
SHOW BLOOMFILTER INDEXES;
SELECT 'MARK', 'show on';
SHOW BLOOMFILTER INDEXES ON events;
SELECT 'MARK', 'describe';
DESCRIBE BLOOMFILTER INDEX events_ids;
SELECT 'MARK', 'explain';
EXPLAIN BLOOMFILTER SELECT * FROM events WHERE id = 42;
SELECT 'MARK', 'lookup';
SELECT * FROM events WHERE id = 42;
INSERT INTO events SELECT id, cast(id AS string) FROM range(5000, 5010, 1, 2);
SELECT 'MARK', 'quick';
REFRESH BLOOMFILTER INDEX events_ids QUICK;
SELECT 'MARK', 'incremental';
REFRESH BLOOMFILTER INDEX events_ids INCREMENTAL;
SELECT 'MARK', 'full';
REFRESH BLOOMFILTER INDEX events_ids;
SELECT 'MARK', 'verify';
VERIFY BLOOMFILTER INDEX events_ids;
SELECT 'MARK', 'files';
SHOW FILES IN BLOOMFILTER INDEX events_ids;
SELECT 'MARK', 'analyze';
EXPLAIN BLOOMFILTER ANALYZE SELECT count(*) FROM events WHERE id = 5005;
DROP BLOOMFILTER INDEX events_ids;
SELECT 'MARK', 'dropped';
SHOW BLOOMFILTER INDEXES;
RESTORE BLOOMFILTER INDEX events_ids;
SELECT 'MARK', 'restored';
SHOW BLOOMFILTER INDEXES;
DROP BLOOMFILTER INDEX events_ids;
VACUUM BLOOMFILTER INDEX events_ids;
DROP BLOOMFILTER INDEX IF EXISTS events_ids;
CANCEL BLOOMFILTER INDEX stuck;
SELECT 'MARK', 'vacuumed';
SHOW BLOOMFILTER INDEXES;
CREATE TABLE dt USING delta AS SELECT id FROM range(0, 100, 1, 2);
INSERT INTO dt SELECT id FROM range(100, 200, 1, 2);
CREATE BLOOMFILTER INDEX dt_v0 ON dt VERSION AS OF 0 (id);
CREATE BLOOMFILTER INDEX `paths.ids` ON parquet.`{events}` (id) OPTIONS (granularity = 'row_group');
SELECT 'MARK', 'delta';
SHOW BLOOMFILTER INDEXES;
"""


def test_the_sql_quickstart_runs_as_written(tmp_path):
    steps, _ = run_script(tmp_path, (ROOT / "examples" / "sql_quickstart.sql").read_text())
    output = "\n".join("\t".join(row) for row in steps["start"])
    assert "quickstart_ids\t[\"user_id\"]\tACTIVE" in output
    assert "16 files -> 1" in output and "18 files -> 1" in output  # the lookup; after the refreshes


def test_every_statement_through_the_spark_sql_shell(tmp_path):
    stuck_create(tmp_path / "indexes", "stuck")
    events = tmp_path / "warehouse" / "events"
    steps, _ = run_script(tmp_path, STATEMENTS.format(events=f"file:{events}"))

    assert steps["create"] == []  # a statement that changes an index returns no rows
    shown = {row[0]: row for row in steps["show"]}
    assert shown["stuck"][2] == "CREATING"  # an operation in progress is listed, so a stuck one is visible
    listed = shown["events_ids"]
    assert listed[:4] == ["events_ids", '["id","s"]', "ACTIVE", "parquet spark_catalog.default.events"]
    assert listed[4] == "8" and listed[6] == "0.01"  # num_files, fpp as configured
    assert steps["show on"] == [listed]  # the stuck index's source is another directory
    [describe] = steps["describe"]
    assert describe[:3] == ["events_ids", "ACTIVE", '["id","s"]'] and "false" in describe[5]  # no global filter

    plan = "\n".join("\t".join(row) for row in steps["explain"])
    assert "index events_ids" in plan and "8 files -> 1" in plan
    assert steps["lookup"] == [["42", "42"]]

    [quick] = steps["quick"]
    assert quick[:5] == ["events_ids", "quick", "true", "2", "0"]
    [incremental] = steps["incremental"]
    assert incremental[:6] == ["events_ids", "incremental", "true", "2", "0", "1"]
    [full] = steps["full"]
    assert full[:3] == ["events_ids", "full", "false"] and "nothing to refresh" in full[6]
    [verify] = steps["verify"]
    assert verify[:3] == ["events_ids", "ACTIVE", "true"] and verify[5] == "[]"
    assert len(steps["files"]) == 10 and {row[4] for row in steps["files"]} == {"hashed"}
    analyzed = "\n".join("\t".join(row) for row in steps["analyze"])
    assert "index events_ids" in analyzed and "10 files -> 1" in analyzed, analyzed

    assert [row[:3] for row in steps["dropped"]][0] == ["events_ids", '["id","s"]', "DELETED"]
    assert [row[:3] for row in steps["restored"]][0] == ["events_ids", '["id","s"]', "ACTIVE"]
    assert steps["vacuumed"] == []  # vacuumed, and the stuck create cancelled: nothing left
    names = {row[0]: row for row in steps["delta"]}
    assert names["dt_v0"][3] == "delta spark_catalog.default.dt @ version 0" and names["dt_v0"][4] == "2"
    assert names["paths.ids"][3] == f"parquet file:{events}"


ERRORS = """
CREATE TABLE t USING parquet AS SELECT id, map('k', id) AS m FROM range(10);
CREATE BLOOMFILTER INDEX t_ids ON t (id);
CREATE BLOOMFILTER INDEX t_ids ON t (id);
CREATE BLOOMFILTER INDEX t_x ON t (nope);
CREATE BLOOMFILTER INDEX t_m ON t (m);
CREATE BLOOMFILTER INDEX t_y ON t (id) OPTIONS (fpp = 2);
CREATE BLOOMFILTER INDEX t_z ON t (id) OPTIONS (colour = 'red');
RESTORE BLOOMFILTER INDEX t_ids;
DESCRIBE BLOOMFILTER INDEX absent;
DROP BLOOMFILTER INDEX ids please;
SELECT 'MARK', 'end';
SHOW BLOOMFILTER INDEXES;
"""


def test_errors_name_the_problem_with_hsbloom_error_classes(tmp_path):
    steps, stderr = run_script(tmp_path, ERRORS, ignore_errors=True)
    expected = [
        ("HSBLOOM_INDEX_EXISTS", "index 't_ids' already exists (ACTIVE)"),
        ("HSBLOOM_UNSUPPORTED_SOURCE", "unknown column 'nope'"),
        ("HSBLOOM_UNSUPPORTED_SOURCE", "column 'm' has type map<string,bigint>, which hsbloom cannot index"),
        ("HSBLOOM_INVALID_CONFIG", "fpp must be strictly between 0 and 1"),
        ("HSBLOOM_INVALID_CONFIG", "colour"),
        ("HSBLOOM_INDEX_STATE", "cannot restore index 't_ids': it is ACTIVE"),
        ("HSBLOOM_INDEX_NOT_FOUND", "index 'absent' does not exist"),
        ("PARSE_SYNTAX_ERROR", "DROP BLOOMFILTER INDEX [IF EXISTS] name [FORCE]"),
    ]
    position = 0
    for condition, text in expected:
        at = stderr.find(f"[{condition}]", position)
        assert at >= 0 and text in stderr[at:at + 2000], (condition, text, stderr[position:position + 3000])
        position = at + 1
    assert [row[:3] for row in steps["end"]] == [["t_ids", '["id"]', "ACTIVE"]]  # nothing else was written
