"""The reader over an index of boundary values (#50): each reader's rows over the files kept equal its rows over
every file, the files kept are the Spark rule's (or, where the golden file says why they differ, the
documented superset or subset), absent keys give every reader no rows with the table's columns, and an index
whose log cannot be read still answers with every file and a warning.

The table holds, per indexed type, the values of tests/vectors/exact_literals.json's cases and their
neighbours (2^53 and 2^53 + 1, the float edges, decimals one unit either side, the ends of the date and
timestamp ranges, NaN, -0.0, '' and unicode ...), in eight files written by pyarrow and by Spark.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from exact_literals import (KEEP, arrow_type, case_id, cases, literal, neighbours, spark_literal, to_arrow_value,
                            verdict)
from pruning_support import files_listed, outcomes

import hsbloom
from hsbloom import jar
from hsbloom.errors import InvalidArgumentError
from hsbloom.readers import Pruned, UnusableIndexWarning, eq, open_index
from hsbloom.readers.adapters import duckdb_relation, polars_frame, pyarrow_dataset

COLUMNS = {"tinyint": "c_tinyint", "smallint": "c_smallint", "int": "c_int", "bigint": "c_bigint",
           "float": "c_float", "double": "c_double", "decimal(10,2)": "c_dec10", "decimal(38,1)": "c_dec38",
           "string": "c_string", "binary": "c_binary", "date": "c_date", "timestamp": "c_ts",
           "timestamp_ntz": "c_ntz"}
CASES = cases()
FILES = 8
# Keys no file holds, one per column: the lookups the readers must answer with no rows (none of them is a value
# of the golden file's neighbours).
ABSENT = {"c_bigint": 123456789012345, "c_int": 987654321, "c_string": "no such key", "c_binary": b"\x01absent",
          "c_date": dt.date(2222, 2, 22), "c_double": 2.718281828, "c_dec10": decimal.Decimal("4242.42"),
          "c_ts": dt.datetime(2222, 2, 22, 2, 22, tzinfo=dt.timezone.utc)}


def _schema() -> pa.Schema:
    return pa.schema([("id", pa.int64())] + [(name, arrow_type(t)) for t, name in COLUMNS.items()])


@pytest.fixture(scope="module")
def boundary(spark, module_system_path, tmp_path_factory):
    """(table root, index path): the neighbours of every case as rows (one column set a row), in FILES files:
    the first six written by pyarrow, the last two by Spark; one index of every column."""
    rows = []
    for case in CASES:
        name = COLUMNS[case["column"]]
        for v in neighbours(case):
            rows.append({"id": len(rows), name: to_arrow_value(v, case["column"])})
    random.Random(50).shuffle(rows)
    root = tmp_path_factory.mktemp("boundaries")
    schema = _schema()
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    try:
        for n in range(FILES):
            part = pa.Table.from_pylist(rows[n::FILES], schema)
            if n < FILES - 2:
                pq.write_table(part, f"{root}/pyarrow-{n}.parquet")
            else:
                ddl = ", ".join(f"{f.name} {t}" for f, t in zip(schema, ["bigint"] + list(COLUMNS)))
                written = tmp_path_factory.mktemp("spark-written")
                spark.createDataFrame([tuple(r.values()) for r in part.to_pylist()], ddl).coalesce(1) \
                    .write.mode("overwrite").parquet(str(written))
                for f in written.glob("part-*.parquet"):  # beside the others: the table has no subdirectories
                    shutil.move(str(f), f"{root}/spark-{n}-{f.name}")
    finally:
        spark.conf.unset("spark.sql.parquet.outputTimestampType")
    hsbloom.Hyperspace(spark).create_index(
        spark.read.parquet(str(root)), hsbloom.BFIndexConfig("boundaries", list(COLUMNS.values()), global_filter=False))
    return str(root), str(module_system_path / "boundaries")


def _ids(pruned: Pruned, column: str, value) -> dict:
    """Per reader, the ids its own `column = value` selects from the kept files (None where it refuses)."""
    out = {}
    connection = duckdb.connect()
    try:
        duckdb_relation(pruned, connection).create_view("t")
        out["duckdb"] = sorted(r[0] for r in connection.execute(f"SELECT id FROM t WHERE {column} = ?", [value]).fetchall())
    except duckdb.Error:  # DuckDB takes no numpy scalar as a parameter, and refuses some comparisons
        out["duckdb"] = None
    finally:
        connection.close()
    try:
        out["polars"] = sorted(polars_frame(pruned).filter(pl.col(column) == value).select("id").collect()["id"].to_list())
    except (pl.exceptions.PolarsError, TypeError):  # Polars refuses some mixed comparisons and literals
        out["polars"] = None
    try:
        out["pyarrow"] = sorted(pyarrow_dataset(pruned).to_table(filter=pc.field(column) == value,
                                                                 columns=["id"])["id"].to_pylist())
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        out["pyarrow"] = None  # pyarrow's safe casts refuse the comparison
    return out


def _everything(pruned: Pruned) -> Pruned:
    return Pruned(pruned.predicate, pruned.files + pruned.skipped, [], pruned.total, root=pruned.root,
                  filesystem=pruned.filesystem, schema=pruned.schema)


def test_every_reader_reads_the_rows_of_a_full_read_for_every_boundary_literal(boundary):
    _, index_path = boundary
    index = open_index(index_path)
    assert index.unusable is None and index.damage == []
    pruned_some = 0
    for case in CASES:
        column, value = COLUMNS[case["column"]], literal(case)
        pruned = index.prune(eq(column, value))
        on, off = _ids(pruned, column, value), _ids(_everything(pruned), column, value)
        for reader in on:
            if off[reader] is not None:  # a reader that refuses the full read shows nothing
                assert on[reader] == off[reader], (case_id(case), reader)
        if case["reader"] == KEEP:
            assert pruned.skipped == [], case_id(case)
        pruned_some += bool(pruned.skipped)
    assert pruned_some > len(CASES) // 2


def _spark_verdict_relation(case: dict) -> str:
    """How the reader's files must compare with the Spark rule's for a case: `=`, `>=` or `<=`."""
    reader, spark = case["reader"], case["spark"]
    if reader == spark:
        return "="
    if reader == KEEP or spark == []:
        return ">="
    if spark == KEEP or reader == []:
        return "<="
    raise AssertionError(f"{case_id(case)}: the golden file's answers differ in values: {reader} and {spark}")


def test_the_files_kept_are_the_spark_rules_and_spark_answers_the_same_on_and_off(spark, boundary):
    """Spark's file lists per predicate (each scan's own listing) against the reader's, as the golden file's
    two answers say; and hsbloom on and off give Spark the same rows for every case."""
    root, index_path = boundary
    index = open_index(index_path)
    df = spark.read.parquet(root)
    checked = [c for c in CASES if c["spark"] not in ("-", "error")]
    predicates = [f"{COLUMNS[c['column']]} = {spark_literal(c)}" for c in checked]
    on = outcomes(spark, df, predicates, enabled=True)
    assert on == outcomes(spark, df, predicates, enabled=False)
    # A predicate Spark proves false has no scan left: it reads no file. One that fails at run time (ANSI:
    # `c_string = 1` casts every string to a number) lists files nobody reads: left out.
    failing = {p for p, rows in zip(predicates, on) if isinstance(rows, tuple)}
    scanned = [p for p in predicates if p not in failing and "] parquet" in jar.java_dataframe(df.where(p))
               .queryExecution().optimizedPlan().toString()]
    union = None
    for p in scanned:
        part = df.where(p).select("id")
        union = part if union is None else union.unionAll(part)
    hsbloom.enable(spark)
    try:
        listed, _ = files_listed(union)
    finally:
        hsbloom.disable(spark)
    assert len(listed) == len(scanned)
    spark_files = dict(zip(scanned, listed))
    relations = set()
    for case, predicate in zip(checked, predicates):
        if predicate in failing:
            continue
        theirs = spark_files.get(predicate, set())
        ours = set(index.prune(eq(COLUMNS[case["column"]], literal(case))).files)
        relation = _spark_verdict_relation(case)
        relations.add(relation)
        assert {"=": ours == theirs, ">=": ours >= theirs, "<=": ours <= theirs}[relation], \
            (case_id(case), relation, len(ours), len(theirs))
    assert relations == {"=", ">=", "<="} and len(scanned) < len(predicates) - len(failing) and len(failing) < 5


def test_an_absent_key_gives_every_reader_no_rows_with_the_tables_columns(boundary):
    _, index_path = boundary
    index = open_index(index_path)
    empty = 0
    for column, value in ABSENT.items():
        pruned = index.prune(eq(column, value))
        empty += not pruned.files
        for reader, ids in _ids(pruned, column, value).items():
            assert ids == [], (column, reader)
        if not pruned.files:
            assert duckdb_relation(pruned).columns == _schema().names
            assert polars_frame(pruned).collect_schema().names() == _schema().names
            assert pyarrow_dataset(pruned).to_table().schema.names == _schema().names
    assert empty >= len(ABSENT) - 1  # a Bloom filter's false positive may keep a file of one


def _break(entry: Path) -> None:
    data = bytearray(entry.read_bytes())
    data[0] = ord("x")  # one byte: no longer JSON
    entry.write_bytes(bytes(data))


def test_an_index_whose_log_cannot_be_read_answers_with_every_file_and_warns(boundary, tmp_path):
    """A damaged newest entry, a damaged older one below a newer unstable one, a log gone: every reader answers
    with every file (the log's table, or root= when no entry names it) and the full read's rows."""
    root, index_path = boundary
    key = ABSENT["c_bigint"]
    healthy = open_index(index_path).prune(eq("c_bigint", key))
    assert healthy.skipped

    def answers(index) -> None:
        with pytest.warns(UnusableIndexWarning, match="every file is read"):
            pruned = index.prune(eq("c_bigint", key))
        assert pruned.skipped == [] and sorted(pruned.files) == sorted(healthy.files + healthy.skipped)
        assert _ids(pruned, "c_bigint", key) == _ids(_everything(healthy), "c_bigint", key)

    newest = tmp_path / "newest"
    shutil.copytree(index_path, newest)
    entries = sorted((newest / "_hsbloom_log").glob("*.json"))
    _break(entries[-1])  # the ACTIVE entry: the one below is CREATING, not stable
    with pytest.warns(UnusableIndexWarning, match="no stable entry"):
        answers(open_index(str(newest)))

    older = tmp_path / "older"
    shutil.copytree(index_path, older)
    entries = sorted((older / "_hsbloom_log").glob("*.json"))
    refreshing = json.loads(entries[-1].read_text())
    refreshing["state"], refreshing["id"] = "REFRESHING", refreshing["id"] + 1
    (older / "_hsbloom_log" / f"{refreshing['id']:020d}.json").write_text(json.dumps(refreshing))
    _break(entries[-1])  # below a newer entry that is not stable: the index's state is unknown
    with pytest.warns(UnusableIndexWarning, match="cannot be read"):
        answers(open_index(str(older)))

    gone = tmp_path / "gone"
    shutil.copytree(index_path, gone)
    shutil.rmtree(gone / "_hsbloom_log")
    with pytest.raises(InvalidArgumentError, match="pass root="):
        open_index(str(gone))  # once, at open: not at every query
    with pytest.warns(UnusableIndexWarning, match="no index log"):
        index = open_index(str(gone), root=root)
    answers(index)


def test_a_delta_table_without_an_index_log_is_read_as_its_snapshot(tmp_path):
    """root= of a Delta table whose index log is gone: the snapshot's files, not every Parquet file in its
    directory (an overwrite leaves the replaced files there)."""
    from deltalake import write_deltalake

    table = str(tmp_path / "delta")
    write_deltalake(table, pa.table({"id": [1, 2]}))
    write_deltalake(table, pa.table({"id": [3]}), mode="overwrite")
    (tmp_path / "index").mkdir()
    with pytest.warns(UnusableIndexWarning):
        index = open_index(str(tmp_path / "index"), root=table)
        pruned = index.prune(eq("id", 3))
    assert len(pruned.files) == 1 and len(list(Path(table).glob("*.parquet"))) == 2
    assert polars_frame(pruned).collect()["id"].to_list() == [3]


def test_the_example_prints_no_rows_for_an_absent_key_in_every_reader(spark, module_system_path, tmp_path):
    """examples/other_readers.py, as docs/readers.md shows it, over a table like the quickstart's: a key no file
    holds gives 0 rows (no file kept) in DuckDB, Polars and pyarrow; a key one file holds gives its row."""
    events = tmp_path / "events"
    events.mkdir()
    for n in range(4):
        pq.write_table(pa.table({"user_id": pa.array(range(100 * n, 100 * n + 100), pa.int64()),
                                 "trace_id": [f"t{i}" for i in range(100 * n, 100 * n + 100)]}),
                       events / f"part-{n}.parquet")
    hsbloom.Hyperspace(spark).create_index(spark.read.parquet(str(events)),
                                           hsbloom.BFIndexConfig("example_keys", ["user_id"], global_filter=False))
    script = Path(__file__).resolve().parent.parent / "examples" / "other_readers.py"
    for reader in ("duckdb", "polars", "pyarrow"):
        for key, rows in ((123456789, 0), (217, 1)):
            done = subprocess.run([sys.executable, str(script), "--reader", reader, "--index",
                                   str(module_system_path / "example_keys"), "--user-id", str(key)],
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            assert f"{reader}: {rows} row(s) for user_id = {key}" in done.stdout, done.stdout
            if rows == 0:
                assert "read 0 of 4 files" in done.stdout, done.stdout
