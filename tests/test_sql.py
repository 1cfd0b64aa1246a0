"""hsbloom's SQL statements through the `spark-sql` shell (pyspark's bin/spark-sql -f script.sql): every statement
of docs/sql.md, with Delta, as a SQL user runs them; and their errors, named by their error classes.

One shell process runs one script for the whole module (a JVM start costs 10-60 s): the SQL quickstart as written,
then every statement, then the statements that fail. `SELECT 'MARK', '<step>'` lines split its output into the
answers of each step. A shell keeps going after an error only with hive.cli.errors.ignore, which the script needs
for its last part; so the tests check that the errors it printed are exactly those of that part, in order.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

import pytest

import hsbloom
from conftest import ROOT, TEST_SETTINGS
from jvm_options import SHORT_LIVED_JVM


def run_script(tmp_path: Path, script: str) -> tuple[dict[str, list[list[str]]], str]:
    """Run `script` in one spark-sql shell with hsbloom and Delta, going on after errors; (output rows by step,
    stderr)."""
    path = tmp_path / "script.sql"
    path.write_text(script)
    conf = {
        **TEST_SETTINGS,
        "spark.sql.warehouse.dir": str(tmp_path / "warehouse"),
        "spark.hsbloom.system.path": str(tmp_path / "indexes"),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={tmp_path / 'derby'} {SHORT_LIVED_JVM}",
    }
    command = hsbloom.spark_sql_command(delta=True, master="local[2]", conf=conf) + ["-S"]
    command += ["--hiveconf", "hive.cli.errors.ignore=true", "-f", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
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
# The errors ERRORS makes, in order: (error class, what its message says).
EXPECTED_ERRORS = [
    ("HSBLOOM_INDEX_EXISTS", "index 't_ids' already exists (ACTIVE)"),
    ("HSBLOOM_UNSUPPORTED_SOURCE", "unknown column 'nope'"),
    ("HSBLOOM_UNSUPPORTED_SOURCE", "column 'm' has type map<string,bigint>, which hsbloom cannot index"),
    ("HSBLOOM_INVALID_CONFIG", "fpp must be strictly between 0 and 1"),
    ("HSBLOOM_INVALID_CONFIG", "colour"),
    ("HSBLOOM_INDEX_STATE", "cannot restore index 't_ids': it is ACTIVE"),
    ("HSBLOOM_INDEX_NOT_FOUND", "index 'absent' does not exist"),
    ("PARSE_SYNTAX_ERROR", "DROP BLOOMFILTER INDEX [IF EXISTS] name [FORCE]"),
]


class ShellRun(NamedTuple):
    steps: dict[str, list[list[str]]]  # the output rows of each step
    stderr: str
    folder: Path  # its warehouse, index system path and script
    statements: int  # how many statements the script holds


@pytest.fixture(scope="module")
def shell(tmp_path_factory) -> ShellRun:
    """The one shell run of the module: the SQL quickstart, STATEMENTS, then ERRORS."""
    folder = tmp_path_factory.mktemp("sql")
    stuck_create(folder / "indexes", "stuck")
    events = folder / "warehouse" / "events"
    script = "\n".join([
        "SELECT 'MARK', 'quickstart';",
        (ROOT / "examples" / "sql_quickstart.sql").read_text(),
        "SELECT 'MARK', 'statements';",
        STATEMENTS.format(events=f"file:{events}"),
        "SELECT 'MARK', 'errors';",
        ERRORS,
    ])  # fmt: skip
    # Every statement of these scripts ends a line with its semicolon.
    statements = sum(1 for line in script.splitlines() if line.rstrip().endswith(";") and not line.startswith("--"))
    steps, stderr = run_script(folder, script)
    return ShellRun(steps, stderr, folder, statements)


# How the shell reports each statement: a line `Time taken: ...` when it succeeded, else its error's class in
# brackets starting a line, then the message.
SUCCEEDED = re.compile(r"^Time taken: ", re.MULTILINE)
ERROR_LINE = re.compile(r"^\[([A-Z][A-Z0-9_]+)\] ", re.MULTILINE)


def printed_errors(stderr: str) -> list[tuple[str, int]]:
    """The error classes of the statements that failed, as the shell printed them, with where each starts."""
    return [(found.group(1), found.start()) for found in ERROR_LINE.finditer(stderr)]


def assert_only_the_errors_of_ERRORS_failed(run: ShellRun) -> None:
    """Every statement succeeded but the EXPECTED_ERRORS of ERRORS, which failed in that order."""
    printed = [name for name, _ in printed_errors(run.stderr)]
    assert printed == [name for name, _ in EXPECTED_ERRORS], run.stderr[-6000:]
    assert len(SUCCEEDED.findall(run.stderr)) == run.statements - len(EXPECTED_ERRORS), run.stderr[-6000:]


def test_the_sql_quickstart_runs_as_written(shell):
    assert_only_the_errors_of_ERRORS_failed(shell)
    output = "\n".join("\t".join(row) for row in shell.steps["quickstart"])
    assert "quickstart_ids\t[\"user_id\"]\tACTIVE" in output
    assert "16 files -> 1" in output and "18 files -> 1" in output  # the lookup; after the refreshes


def test_every_statement_through_the_spark_sql_shell(shell):
    assert_only_the_errors_of_ERRORS_failed(shell)
    steps, events = shell.steps, shell.folder / "warehouse" / "events"
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


def test_errors_name_the_problem_with_hsbloom_error_classes(shell):
    assert_only_the_errors_of_ERRORS_failed(shell)
    steps, stderr = shell.steps, shell.stderr
    for (condition, text), (_, at) in zip(EXPECTED_ERRORS, printed_errors(stderr)):
        assert text in stderr[at:at + 2000], (condition, text, stderr[at:at + 3000])
    # nothing else was written: the indexes listed before ERRORS, and t_ids
    assert [row[:3] for row in steps["end"]] == [row[:3] for row in steps["delta"]] + [["t_ids", '["id"]', "ACTIVE"]]
