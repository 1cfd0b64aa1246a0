"""Delta DELETE, UPDATE and MERGE with hsbloom on read fewer target files and change the table exactly as off.

Every test runs the same statements on two byte-identical copies of a small Delta table (16 files, keys spread
over all of them, so Delta's min/max statistics skip nothing): one with hsbloom off, one indexed with hsbloom
on. The final tables (sorted rows) and each commit's row counts in the Delta history must be the same; and the
run with hsbloom must have read fewer target files (`hs.run_explained`), so a test cannot pass by not pruning.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

import hsbloom
from hsbloom import explain
from pruning_support import create_index

ROWS = 640
FILES = 16
SOURCE = T.StructType([
    T.StructField("id", T.LongType()),
    T.StructField("k", T.IntegerType()),
    T.StructField("v", T.IntegerType()),
])
# The row counts of a commit's operationMetrics (times and byte counts differ from run to run).
COUNTED = re.compile(r"(?i)rows|files|deletionvectors")


@pytest.fixture(autouse=True)
def hsbloom_off_afterwards(spark, module_system_path):
    yield
    hsbloom.disable(spark)


def write_table(spark, path: Path, dv: bool, partitioned: bool) -> None:
    """ids 0..639 spread over 16 files (seven of them null), k = id as an int, one value column."""
    n = F.col("id")
    spread = (n * 37) % ROWS
    df = spark.range(ROWS).select(
        F.when(n % 97 == 5, None).otherwise(spread).alias("id"),
        spread.cast("int").alias("k"),
        F.concat(F.lit("s"), n.cast("string")).alias("s"),
        (n % 2).alias("part"),
        F.lit(0).alias("v"),
    )
    writer = df.repartition(FILES).write.format("delta").option("delta.enableDeletionVectors", str(dv).lower())
    (writer.partitionBy("part") if partitioned else writer).save(str(path))


class Pair:
    """Two copies of one Delta table: `off` is changed with hsbloom off, `on` (indexed) with hsbloom on."""

    def __init__(self, spark, tmp_path: Path, name: str, dv: bool, partitioned: bool) -> None:
        self.spark = spark
        base = tmp_path / "base"
        write_table(spark, base, dv, partitioned)
        self.off, self.on = tmp_path / "off", tmp_path / "on"
        shutil.copytree(base, self.off)
        shutil.copytree(base, self.on)
        self.index = name
        # A small fpp: the tests count the files read exactly, without false positives.
        create_index(spark, str(self.on), name, ["id", "k"], fpp=0.0001, fmt="delta")
        self.reports: list[str] = []

    def run(self, statement: str) -> str:
        """Runs `statement` ({t}: the table) on both copies; returns what hsbloom reported for the `on` run."""
        hsbloom.disable(self.spark)
        self.spark.sql(statement.format(t=f"delta.`{self.off}`")).collect()
        hsbloom.enable(self.spark)
        report = explain.run_explained_string(self.spark, statement.format(t=f"delta.`{self.on}`"))
        hsbloom.disable(self.spark)
        self.reports.append(report)
        return report

    def assert_same(self) -> None:
        def rows(path: Path) -> list[tuple]:
            found = [tuple(r) for r in self.spark.read.format("delta").load(str(path)).collect()]
            return sorted(found, key=lambda r: tuple((x is None, x) for x in r))

        assert rows(self.on) == rows(self.off)
        assert history(self.spark, self.on) == history(self.spark, self.off)


def history(spark, path: Path) -> list[tuple]:
    """Per commit: the operation and its counted metrics."""
    found = spark.sql(f"DESCRIBE HISTORY delta.`{path}`").select("version", "operation", "operationMetrics")
    return sorted((r.version, r.operation, {k: v for k, v in (r.operationMetrics or {}).items() if COUNTED.search(k)})
                  for r in found.collect())


def pruned(report: str) -> list[tuple[int, int]]:
    """(files before, files after) of each scan the report says hsbloom pruned."""
    return [(int(a), int(b)) for a, b in re.findall(r"(\d+) files -> (\d+)", report)]


def assert_pruned(report: str) -> None:
    scans = pruned(report)
    assert scans and any(after < before for before, after in scans), report


def source_view(spark, name: str, rows: list[tuple], schema: T.StructType = SOURCE) -> None:
    spark.createDataFrame(rows, schema).createOrReplaceTempView(name)


MERGE_UPSERT = """MERGE INTO {t} t USING src s ON t.id = s.id
    WHEN MATCHED THEN UPDATE SET v = s.v
    WHEN NOT MATCHED THEN INSERT (id, k, s, part, v) VALUES (s.id, s.k, 'new', 0, s.v)"""


@pytest.mark.parametrize("dv,partitioned", [(True, False), (False, True)], ids=["dv", "no-dv-partitioned"])
def test_delete_update_merge_change_the_table_as_without_hsbloom(spark, tmp_path, dv, partitioned):
    pair = Pair(spark, tmp_path, f"dml_{int(dv)}{int(partitioned)}", dv, partitioned)

    assert_pruned(pair.run("DELETE FROM {t} WHERE id IN (37, 74, 72)"))  # two present, one absent
    assert_pruned(pair.run("UPDATE {t} SET v = v + 1 WHERE id = 111 OR id <=> 148 OR id = 210"))
    # Keys present, absent (inserted twice: duplicated absent keys are both inserted), and a null (never matches).
    source_view(spark, "src", [(185, 1, 10), (222, 2, 20), (5000, 3, 30), (5000, 4, 31), (None, 5, 50)])
    report = pair.run(MERGE_UPSERT)
    assert "from the source's keys: applied" in report, report
    assert_pruned(report)
    pair.assert_same()


def test_merge_key_types_nulls_and_clauses(spark, tmp_path):
    pair = Pair(spark, tmp_path, "dml_merge", dv=True, partitioned=False)
    # An int source key against the bigint target column (Spark casts the source side); with <=>, the null
    # source key matches the target's null ids.
    source_view(spark, "src_int", [(259, 9), (None, 8)], T.StructType([T.StructField("id", T.IntegerType()),
                                                                         T.StructField("v", T.IntegerType())]))
    assert_pruned(pair.run("MERGE INTO {t} t USING src_int s ON t.id <=> s.id WHEN MATCHED THEN UPDATE SET v = s.v"))
    # A bigint source key against the int column k, one beyond the int range (no target value equals it).
    source_view(spark, "src_long", [(333, 11), (5_000_000_000 + 333, 12)],
                T.StructType([T.StructField("k", T.LongType()), T.StructField("v", T.IntegerType())]))
    assert_pruned(pair.run("MERGE INTO {t} t USING src_long s ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = s.v"))
    # Duplicated source keys are allowed for a delete-only MERGE.
    source_view(spark, "src", [(370, 0, 0), (370, 0, 1), (407, 0, 0)])
    assert_pruned(pair.run("MERGE INTO {t} t USING src s ON t.id = s.id WHEN MATCHED THEN DELETE"))
    # Insert-only MERGE: Delta's left anti join of the source (not materialized: local rows here) with the target.
    assert_pruned(pair.run("MERGE INTO {t} t USING (SELECT * FROM VALUES (444L, 0, 1), (6000L, 6, 2) AS v(id, k, v)) s "
                           "ON t.id = s.id "
                           "WHEN NOT MATCHED THEN INSERT (id, k, s, part, v) VALUES (s.id, s.k, 'ins', 1, s.v)"))
    # NOT MATCHED BY SOURCE needs every target row: nothing may be pruned by the source's keys.
    source_view(spark, "src", [(481, 0, 3)])
    report = pair.run("MERGE INTO {t} t USING src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v "
                      "WHEN NOT MATCHED BY SOURCE AND t.v = 2 THEN UPDATE SET v = 99")
    assert "from the source's keys: applied" not in report, report
    pair.assert_same()


def test_merge_pruning_is_skipped_where_it_would_not_pay_or_be_safe(spark, tmp_path):
    pair = Pair(spark, tmp_path, "dml_skips", dv=False, partitioned=False)
    # More keys than worth waiting for (a key is in 1 of 16 files): the cost model skips, with its reason.
    source_view(spark, "src", [(37 * n % ROWS, 0, n) for n in range(1, 40)])
    report = pair.run(MERGE_UPSERT)
    assert "from the source's keys: skipped" in report or "keys; not pruned" in report, report
    # A Delta table as the source is not materialized by Delta, so a second read could see another version.
    source_path = tmp_path / "delta_source"
    spark.createDataFrame([(518, 1, 5)], SOURCE).write.format("delta").save(str(source_path))
    report = pair.run(f"MERGE INTO {{t}} t USING delta.`{source_path}` s ON t.id = s.id "
                      "WHEN MATCHED THEN UPDATE SET v = s.v")
    assert "the source reads a Delta table" in report, report
    pair.assert_same()
    # A query's scan below a nondeterministic operator is read whole: rand(5) is seeded per partition (one per file
    # here), so skipping files would change its values.
    spark.conf.set("spark.sql.files.openCostInBytes", str(256 << 20))
    try:
        query = f"SELECT id, rand(5) AS r FROM delta.`{pair.on}` WHERE id IN (37, 74, 111)"
        hsbloom.disable(spark)
        off = sorted(spark.sql(query).collect())
        hsbloom.enable(spark)
        assert sorted(spark.sql(query).collect()) == off and len(off) == 3
        assert "below nondeterministic rand(5): not pruned" in explain.explain_string(spark.sql(query))
    finally:
        spark.conf.unset("spark.sql.files.openCostInBytes")


def test_appended_and_rewritten_files_are_read_until_an_incremental_refresh_indexes_them(spark, tmp_path):
    pair = Pair(spark, tmp_path, "dml_stale", dv=False, partitioned=False)
    appended = spark.createDataFrame([(7000, 1, "a", 0, 0), (7001, 2, "a", 0, 0)],
                                     "id long, k int, s string, part long, v int").coalesce(1)
    for path in (pair.off, pair.on):
        appended.write.format("delta").mode("append").save(str(path))
    # The appended file is not in the index: it is read (with the one indexed file that holds 111).
    report = pair.run("DELETE FROM {t} WHERE id IN (7000, 111)")
    assert (FILES + 1, 2) in pruned(report), report
    # Without deletion vectors the DELETE rewrote both files, and the UPDATE rewrites another: the new files
    # are not in the index, so a key no file holds still reads each of them, and only them, until a refresh.
    assert_pruned(pair.run("UPDATE {t} SET v = 3 WHERE id = 148"))
    files = len(spark.read.format("delta").load(str(pair.on)).inputFiles())
    # 72 is in no file (its row's id is null) but within the min/max of every original file: what hsbloom reads
    # is what its index lacks. (A rewritten file holding only 7001 is skipped by min/max already.)
    absent = "DELETE FROM {t} WHERE id = 72"
    (before, after), = set(pruned(pair.run(absent)))
    assert before in (files - 1, files) and 1 <= after < before
    hs = hsbloom.Hyperspace(spark)
    result = hs.refresh_index(pair.index, "incremental")
    assert result.appended_files == after + (files - before), result
    assert hs.index(pair.index).num_files == files
    assert set(pruned(pair.run(absent))) == {(before, 0)}
    pair.assert_same()


# Statements Delta (or Spark) refuses, and the error class each is refused with.
REFUSED = {
    "MERGE INTO {t} t USING dup s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v":
        "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE",
    "DELETE FROM {t} WHERE id IN (SELECT id FROM dup)": "DELTA_UNSUPPORTED_SUBQUERY",
    "UPDATE {t} SET nope = 1": "UNRESOLVED_COLUMN.WITH_SUGGESTION",
    "MERGE {t}": "PARSE_SYNTAX_ERROR",
}


def message(error: Exception) -> str:
    """An error's message, but the ids Spark numbers a plan's attributes with afresh at every analysis."""
    return re.sub(r"#\d+", "#", str(error))


def refusal(run, statement: str) -> Exception:
    """The exception `run()` raises."""
    try:
        run()
    except Exception as exc:  # noqa: BLE001 - the exception is the result
        return exc
    raise AssertionError(f"{statement} ran")


def test_run_explained_raises_the_statements_own_error_as_spark_does(spark, tmp_path):
    """A statement that fails fails through run_explained exactly as through spark.sql: the same exception class,
    error class and message (Delta's, Spark's), not an hsbloom error; the table is unchanged. An hsbloom statement's
    own failure is still raised as its hsbloom error."""
    path = tmp_path / "t"
    write_table(spark, path, dv=False, partitioned=False)
    create_index(spark, str(path), "refused_statements", ["id"], fpp=0.0001, fmt="delta")
    source_view(spark, "dup", [(222, 1, 10), (222, 2, 20)])  # two source rows match the target row of id 222
    table = f"delta.`{path}`"
    rows = sorted(spark.read.format("delta").load(str(path)).collect(), key=str)
    hs = hsbloom.Hyperspace(spark)
    hsbloom.enable(spark)
    for statement, condition in REFUSED.items():
        sql = statement.format(t=table)
        alone = refusal(lambda: spark.sql(sql).collect(), f"alone: {sql}")
        explained = refusal(lambda: hs.run_explained(sql, redirect_func=lambda _: None), f"run_explained: {sql}")
        assert alone.getCondition() == condition, (statement, alone)
        assert type(explained) is type(alone) and explained.getCondition() == condition
        assert message(explained) == message(alone)
        assert not isinstance(explained, hsbloom.errors.HsbloomError)
    assert sorted(spark.read.format("delta").load(str(path)).collect(), key=str) == rows
    with pytest.raises(hsbloom.errors.IndexNotFoundError, match="index 'absent' does not exist"):
        hs.run_explained("DESCRIBE BLOOMFILTER INDEX absent")
