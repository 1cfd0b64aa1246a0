"""Delta Lake: DELETE, UPDATE and MERGE by key read only the target files that may hold the keys and leave the table
exactly as they leave it with hsbloom off; an index built at one version prunes reads of that version after the
table moved on (time travel), and an incremental refresh follows the table's commits.

Collected only where a delta-spark release serves the running Spark (`running_line().delta`; none serves 4.3
yet), and there a missing delta-spark fails these tests: it never skips them.
"""

from __future__ import annotations

import re

import pytest

import hsbloom
from compare import row_texts, rows_off_and_on
from conftest import installed_delta
from hsbloom.explain import file_counts, run_explained_string

FILES = 8
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
KEYS = 4000


def after_delete(rows: dict) -> None:
    del rows[17], rows[2042]


def after_update(rows: dict) -> None:
    rows[100] = (100, "s100", 1)
    rows[3333] = (3333, "s3333", 1)


def after_merge(rows: dict) -> None:
    rows[1500] = (1500, "s1500", 7)
    rows[99_999] = (99_999, "merged", 8)


# Statements by key on the table ({t}), each with what it does to the rows (key, s, v) by key. The MERGE's source
# is local rows, which Delta materializes (docs/upserts.md).
STATEMENTS = [
    ("DELETE FROM {t} WHERE key IN (17, 2042)", after_delete),
    ("UPDATE {t} SET v = v + 1 WHERE key IN (100, 3333)", after_update),
    ("MERGE INTO {t} t USING updates u ON t.key = u.key WHEN MATCHED THEN UPDATE SET v = u.v "
     "WHEN NOT MATCHED THEN INSERT (id, key, s, v) VALUES (u.key, u.key, 'merged', u.v)", after_merge),
]


@pytest.fixture(scope="module")
def delta_session(spark, line):
    """The session, which has Delta: the line has a delta-spark, and configure(delta=True) adds its jar (the Python
    package is optional: delta-spark 4.4 pins pyspark 4.2.0 at most, so a 4.2.1 environment goes without it)."""
    assert DELTA_EXTENSION in spark.conf.get("spark.sql.extensions")
    return spark


def test_the_session_resolves_the_delta_jar_that_serves_this_spark(line, delta_session):
    """Delta 4 publishes a jar per Spark minor, Delta 3 (Spark 3.5's) one per Scala version: the session has the
    line's, of the installed delta-spark's release if there is one, else of the release the line names."""
    packages = delta_session.sparkContext.getConf().get("spark.jars.packages")
    release = installed_delta() or line.delta
    artifact = f"delta-spark_{line.scala_binary}" if line.minor == "3.5" else f"delta-spark_{line.minor}_{line.scala_binary}"
    assert f"io.delta:{artifact}:{release}" in packages.split(",")
    assert release.split(".")[:2] == line.delta.split(".")[:2]


def original_rows() -> dict:
    return {key: (key, f"s{key}", 0) for key in range(KEYS)}


@pytest.fixture(scope="module")
def lake(delta_session, tmp_path_factory) -> str:
    """A Delta table with deletion vectors, indexed on its key at version 0: 4,000 distinct keys in 8 files, each
    file's keys spread over the whole range, so that Delta's own min/max statistics cannot skip a file (what is
    skipped, hsbloom skipped)."""
    spark = delta_session
    path = str(tmp_path_factory.mktemp("delta") / "lake")
    spark.range(0, KEYS, 1, FILES).selectExpr(
        "id", f"(id * 7919) % {KEYS} AS key", f"concat('s', (id * 7919) % {KEYS}) AS s", "0 AS v"
    ).write.format("delta").option("delta.enableDeletionVectors", "true").save(path)
    hsbloom.Hyperspace(spark).create_index(spark.read.format("delta").load(path),
                                           hsbloom.BFIndexConfig("lake_keys", ["key"]))  # fmt: skip
    return path


def contents(spark, path: str) -> list[str]:
    return row_texts(spark.read.format("delta").load(path).select("key", "s", "v"))


@pytest.fixture(scope="module")
def changed(delta_session, lake):
    """Each statement run with hsbloom on; per statement, what hsbloom reported pruning, the table's rows after it
    and the rows it should hold."""
    spark = delta_session
    spark.createDataFrame([(1500, 7), (99_999, 8)], "key long, v int").createOrReplaceTempView("updates")
    expected = original_rows()
    steps = []
    for statement, change in STATEMENTS:
        hsbloom.enable(spark)
        report = run_explained_string(spark, statement.format(t=f"delta.`{lake}`"))
        hsbloom.disable(spark)
        change(expected)
        steps.append((statement, report, contents(spark, lake), sorted(repr(row) for row in expected.values())))
    return steps


def test_dml_by_key_prunes_the_target_and_changes_exactly_the_rows_it_names(changed):
    for statement, report, rows, expected in changed:
        scans = [(int(before), int(after)) for before, after in re.findall(r"(\d+) files -> (\d+)", report)]
        assert any(before >= FILES and after < before for before, after in scans), (statement, report)
        assert rows == expected, statement


def test_time_travel_to_the_indexed_version_prunes(delta_session, lake, changed):
    """After the statements, version 0 reads the rows it held, through its index; the latest version its own."""
    spark = delta_session
    at_version_0 = lambda: spark.read.format("delta").option("versionAsOf", 0).load(lake)  # noqa: E731
    lookups = lambda: at_version_0().where("key IN (17, 1500, 3333)").select("key", "s", "v")  # noqa: E731
    off, on = rows_off_and_on(spark, lookups)
    assert on == off == sorted(repr((key, f"s{key}", 0)) for key in (17, 1500, 3333))
    read, before, _ = file_counts(at_version_0().where("key = 17"))
    assert read == 1 and before == FILES
    latest = lambda: spark.read.format("delta").load(lake).where("key IN (17, 1500, 3333, 99999)")  # noqa: E731
    off, on = rows_off_and_on(spark, lambda: latest().select("key", "s", "v"))
    assert on == off == sorted(repr(row) for row in [(1500, "s1500", 7), (3333, "s3333", 1), (99_999, "merged", 8)])


def test_an_incremental_refresh_indexes_the_files_the_statements_wrote(delta_session, lake, changed):
    """The UPDATE wrote a file of keys 100 and 3333, which Delta's statistics cannot skip for key 2042 (between them)
    and which the index does not hold until the refresh: then it is pruned too."""
    spark = delta_session
    hs = hsbloom.Hyperspace(spark)
    deleted_key = lambda: spark.read.format("delta").load(lake).where("key = 2042")  # noqa: E731
    hsbloom.enable(spark)
    read_before_refresh = file_counts(deleted_key())[0]
    assert read_before_refresh == 2  # the file that held 2042 (its filter still does) and the UPDATE's
    refreshed = hs.refresh_index("lake_keys", "incremental")
    assert refreshed.refreshed and refreshed.appended_files >= 2  # the UPDATE's file and the MERGE's
    latest_version = spark.sql(f"DESCRIBE HISTORY delta.`{lake}`").agg({"version": "max"}).first()[0]
    assert hs.index("lake_keys").source.delta_version == latest_version
    off, on = rows_off_and_on(spark, deleted_key)
    assert on == off == []
    assert file_counts(deleted_key())[0] == 1
