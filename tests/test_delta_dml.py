"""run_explained on Delta's DELETE, UPDATE and MERGE, as Python calls it: a statement Delta or Spark refuses fails
through run_explained exactly as through spark.sql.

What the statements do with hsbloom on (fewer target files read, the table changed exactly as with hsbloom off, the
rules' decisions and their reports) is tested where the rules live: jvm/src/test/scala/hsbloom/dml/DeltaDmlSuite.scala.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

import hsbloom
from pruning_support import create_index

ROWS = 640
FILES = 16
SOURCE = T.StructType([
    T.StructField("id", T.LongType()),
    T.StructField("k", T.IntegerType()),
    T.StructField("v", T.IntegerType()),
])


@pytest.fixture(autouse=True)
def hsbloom_off_afterwards(spark, module_system_path):
    yield
    hsbloom.disable(spark)


def write_table(spark, path: Path, dv: bool, partitioned: bool, files: int = FILES) -> None:
    """ids 0..639 spread over `files` files (seven of them null), k = id as an int, one value column."""
    n = F.col("id")
    spread = (n * 37) % ROWS
    df = spark.range(ROWS).select(
        F.when(n % 97 == 5, None).otherwise(spread).alias("id"),
        spread.cast("int").alias("k"),
        F.concat(F.lit("s"), n.cast("string")).alias("s"),
        (n % 2).alias("part"),
        F.lit(0).alias("v"),
    )
    writer = df.repartition(files).write.format("delta").option("delta.enableDeletionVectors", str(dv).lower())
    (writer.partitionBy("part") if partitioned else writer).save(str(path))


def source_view(spark, name: str, rows: list[tuple], schema: T.StructType = SOURCE) -> None:
    spark.createDataFrame(rows, schema).createOrReplaceTempView(name)


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
    write_table(spark, path, dv=False, partitioned=False, files=2)  # a small table: the statements fail
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
