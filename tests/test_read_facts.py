"""An index is used only for scans that read the values it hashed (issue: read facts).

Each case builds an index, then changes something besides the files that
changes the values a scan produces for the indexed column: a CSV or JSON schema
given by the user, the session time zone, the INT96 conversion, the calendar
rebase mode, case sensitivity. (Delta column mapping, renames, swaps, drop and
re-add, and type widening: the jar's DeltaReadFactsSuite.) The literals of every query are taken from the
rows Spark reads with hsbloom off in the changed setting, so a stale index
would drop exactly the rows asked for. Each case asserts: the same rows with
hsbloom on and off, `hs.explain` naming the fact that differs, and where the
source itself changed, that a full refresh makes the index usable again
(pruning files) while quick and incremental refreshes refuse with the fix.
"""

from __future__ import annotations

import datetime
from contextlib import contextmanager
from typing import Callable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import hsbloom
from pruning_support import files_read, outcomes

NUM_FILES = 4
ROWS_PER_FILE = 25


@contextmanager
def settings(spark, **values: str) -> Iterator[None]:
    """Session settings for the block (keys with '.' written as '__'), restored afterwards."""
    keys = {k.replace("__", "."): v for k, v in values.items()}
    saved = {k: spark.conf.get(k, None) for k in keys}
    for k, v in keys.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def literal(value) -> str:
    """`value` as a Spark SQL literal."""
    if isinstance(value, datetime.datetime):
        return f"timestamp'{value.strftime('%Y-%m-%d %H:%M:%S.%f')}'"
    if isinstance(value, datetime.date):
        return f"date'{value.isoformat()}'"
    if isinstance(value, str):
        return "'" + value.replace("'", "\\'") + "'"
    return repr(value)


def predicates_for(column: str, values: list) -> list[str]:
    """`=`, `IN`, `<=>`, `IS NULL` and `<=> NULL` on `column`, with values it holds as read now."""
    present = [v for v in values if v is not None][:3]
    found = [f"{column} = {literal(v)}" for v in present]
    found += [f"{column} <=> {literal(v)}" for v in present[:1]]
    if present:
        found.append(f"{column} IN ({', '.join(literal(v) for v in present)})")
    found += [f"{column} IS NULL", f"{column} <=> NULL", f"{column} IS NOT NULL"]
    return found


def assert_same_rows(spark, read: Callable[[], object], column: str) -> list[str]:
    """hsbloom on and off select the same ids for the column's predicates; returns the predicates."""
    hsbloom.disable(spark)
    df = read()
    values = [r[0] for r in df.select(column).distinct().orderBy(column).collect()]
    predicates = predicates_for(column, values)
    off = outcomes(spark, read(), predicates, enabled=False)
    on = outcomes(spark, read(), predicates, enabled=True)
    hsbloom.disable(spark)
    for p, a, b in zip(predicates, off, on):
        assert a == b, f"{p}: hsbloom off selects {a}, on {b}"
    assert any(off), "the case selects no rows at all: it would prove nothing"
    return predicates


def explain(spark, df) -> str:
    lines: list[str] = []
    hsbloom.Hyperspace(spark).explain(df, lines.append)
    return "\n".join(lines)


def assert_not_used(spark, df, index: str, fact: str) -> None:
    text = explain(spark, df)
    not_used = text.split("Indexes not used:")[1]
    assert index in not_used and fact in not_used, text


def assert_prunes(spark, df, predicate: str) -> None:
    """The index is used again: a lookup reads fewer files than the table has, with the same rows."""
    hsbloom.enable(spark)
    try:
        assert files_read(df.where(predicate)) < NUM_FILES
    finally:
        hsbloom.disable(spark)


def ids_and(column_values: Callable[[int], object]) -> list[tuple]:
    return [(i, column_values(i)) for i in range(NUM_FILES * ROWS_PER_FILE)]


# --- Text formats: the schema a reader is given ---------------------------------------------


@pytest.fixture
def csv_files(spark, tmp_path) -> str:
    """CSV files with a header `id,a,b`: a small numbers with gaps, b large numbers."""
    path = str(tmp_path / "csv")
    spark.range(NUM_FILES * ROWS_PER_FILE).selectExpr("id", "id * 2 + 1 AS a", "id + 1000000 AS b").repartition(
        NUM_FILES, "id"
    ).write.option("header", True).csv(path)
    return path


def test_csv_user_schema_in_another_order(spark, system_path, csv_files):
    built = lambda: spark.read.option("header", True).schema("id BIGINT, a BIGINT, b BIGINT").csv(csv_files)  # noqa
    hs = hsbloom.Hyperspace(spark)
    hs.create_index(built(), hsbloom.BFIndexConfig("csv_order", ["a"]))
    assert_prunes(spark, built(), "a = 7")
    # The same options, another schema: with enforceSchema (the default) columns are taken by position.
    for schema in ("id BIGINT, b BIGINT, a BIGINT", "id BIGINT, x BIGINT, a BIGINT"):
        swapped = lambda: spark.read.option("header", True).schema(schema).csv(csv_files)  # noqa: E731
        assert_same_rows(spark, swapped, "a")
        assert_not_used(spark, swapped().where("a = 7"), "csv_order", "data_schema differs")
    # A refresh reads with the schema the index was built with: nothing changed.
    assert not hs.refresh_index("csv_order", "full").refreshed
    assert_same_rows(spark, built, "a")


def test_csv_user_schema_through_joins(spark, system_path, csv_files, tmp_path):
    """Both join features: the CSV side's global filter, and pruning the CSV side's files by join keys."""
    built = lambda: spark.read.option("header", True).schema("id BIGINT, a BIGINT, b BIGINT").csv(csv_files)  # noqa
    swapped = lambda: spark.read.option("header", True).schema("id BIGINT, b BIGINT, a BIGINT").csv(csv_files)  # noqa
    hs = hsbloom.Hyperspace(spark)
    hs.create_index(built(), hsbloom.BFIndexConfig("csv_join", ["a"], global_filter=True))
    facts = str(tmp_path / "facts")
    # The fact table holds b's values under `a`: they join the swapped CSV read, not the built one.
    spark.range(NUM_FILES * ROWS_PER_FILE * 4).selectExpr("id AS fid", "id % 100 + 1000000 AS a").repartition(
        NUM_FILES
    ).write.parquet(facts)
    queries = {
        "global filter": lambda: spark.read.parquet(facts).join(swapped(), "a").select("fid", "id"),
        "file pruning": lambda: swapped().join(spark.read.parquet(facts).where("fid < 3"), "a").select("fid", "id"),
    }
    with settings(spark, spark__sql__autoBroadcastJoinThreshold="-1"):
        for name, query in queries.items():
            hsbloom.disable(spark)
            off = sorted(query().collect())
            hsbloom.enable(spark)
            on = sorted(query().collect())
            hsbloom.disable(spark)
            assert off and on == off, name


def test_json_user_schema_with_other_case(spark, system_path, tmp_path):
    path = str(tmp_path / "json")
    spark.range(NUM_FILES * ROWS_PER_FILE).selectExpr("id", "id * 2 + 1 AS k").repartition(NUM_FILES).write.json(path)
    hs = hsbloom.Hyperspace(spark)
    hs.create_index(spark.read.json(path), hsbloom.BFIndexConfig("json_case", ["k"]))
    upper = lambda: spark.read.schema("id BIGINT, K BIGINT").json(path)  # noqa: E731  (K is read as all null)
    predicates = assert_same_rows(spark, upper, "K")
    assert "K IS NULL" in predicates
    assert_not_used(spark, upper().where("K IS NULL"), "json_case", "column.k differs")


# --- Session settings -----------------------------------------------------------------------


def test_csv_timestamps_in_another_time_zone(spark, system_path, tmp_path):
    path = str(tmp_path / "ts_csv")
    spark.range(NUM_FILES * ROWS_PER_FILE).selectExpr(
        "id", "date_format(timestamp'2024-03-10 00:00:00' + make_interval(0, 0, 0, 0, id, 7, 0), "
        "'yyyy-MM-dd HH:mm:ss') AS ts"
    ).repartition(NUM_FILES, "id").write.csv(path)
    read = lambda: spark.read.schema("id BIGINT, ts TIMESTAMP").csv(path)  # noqa: E731
    hs = hsbloom.Hyperspace(spark)
    with settings(spark, spark__sql__session__timeZone="UTC"):
        hs.create_index(read(), hsbloom.BFIndexConfig("ts_csv", ["ts"]))
        assert_prunes(spark, read(), "ts = timestamp'2024-03-10 05:07:00'")
    for zone in ("America/Los_Angeles", "Asia/Tokyo"):
        with settings(spark, spark__sql__session__timeZone=zone):
            assert_same_rows(spark, read, "ts")
            assert_not_used(spark, read().where("ts IS NULL"), "ts_csv", "spark.sql.session.timeZone differs")
    with settings(spark, spark__sql__session__timeZone="UTC"), \
            settings(spark, spark__sql__legacy__timeParserPolicy="LEGACY"):
        assert_same_rows(spark, read, "ts")
        assert_not_used(spark, read().where("ts IS NULL"), "ts_csv", "timeParserPolicy differs")


def pyarrow_files(directory, columns: dict[str, pa.Array], **write_options) -> str:
    """NUM_FILES Parquet files written by pyarrow (no Spark metadata), rows split evenly."""
    directory.mkdir()
    table = pa.table(columns)
    for n in range(NUM_FILES):
        part = table.slice(n * ROWS_PER_FILE, ROWS_PER_FILE)
        pq.write_table(part, str(directory / f"part-{n}.parquet"), **write_options)
    return str(directory)


def test_parquet_int96_conversion_in_another_time_zone(spark, system_path, tmp_path):
    n = NUM_FILES * ROWS_PER_FILE
    start = datetime.datetime(2024, 1, 1, 12, 0, 0)
    path = pyarrow_files(
        tmp_path / "int96",
        {"id": pa.array(range(n), pa.int64()),
         "ts": pa.array([start + datetime.timedelta(hours=7 * i) for i in range(n)], pa.timestamp("us"))},
        use_deprecated_int96_timestamps=True,
    )
    read = lambda: spark.read.parquet(path)  # noqa: E731
    hs = hsbloom.Hyperspace(spark)
    with settings(spark, spark__sql__session__timeZone="UTC", spark__sql__parquet__int96TimestampConversion="true"):
        hs.create_index(read(), hsbloom.BFIndexConfig("int96", ["ts"]))
        assert_prunes(spark, read(), "ts = timestamp'2024-01-01 19:00:00'")
    with settings(spark, spark__sql__session__timeZone="America/New_York",
                  spark__sql__parquet__int96TimestampConversion="true"):
        assert_same_rows(spark, read, "ts")
        assert_not_used(spark, read().where("ts IS NULL"), "int96", "spark.sql.session.timeZone differs")
    # Without the conversion the time zone does not change INT96 values: the index is used in any zone.
    with settings(spark, spark__sql__session__timeZone="UTC", spark__sql__parquet__int96TimestampConversion="false"):
        assert_same_rows(spark, read, "ts")
        assert_not_used(spark, read().where("ts IS NULL"), "int96", "int96TimestampConversion differs")


def test_parquet_calendar_rebase_mode(spark, system_path, tmp_path):
    n = NUM_FILES * ROWS_PER_FILE
    path = pyarrow_files(
        tmp_path / "dates",
        {"id": pa.array(range(n), pa.int64()),
         "d": pa.array([datetime.date(1000 + 3 * i, 1, 1 + i % 28) for i in range(n)], pa.date32())},
    )
    read = lambda: spark.read.parquet(path)  # noqa: E731
    hs = hsbloom.Hyperspace(spark)
    with settings(spark, spark__sql__parquet__datetimeRebaseModeInRead="CORRECTED"):
        hs.create_index(read(), hsbloom.BFIndexConfig("dates", ["d"]))
        assert_prunes(spark, read(), "d = date'1003-01-02'")
    with settings(spark, spark__sql__parquet__datetimeRebaseModeInRead="LEGACY"):
        assert_same_rows(spark, read, "d")
        assert_not_used(spark, read().where("d IS NULL"), "dates", "datetimeRebaseModeInRead differs")


def test_parquet_case_sensitivity(spark, system_path, tmp_path):
    n = NUM_FILES * ROWS_PER_FILE
    path = pyarrow_files(tmp_path / "case", {"id": pa.array(range(n), pa.int64()),
                                             "Key": pa.array([i * 5 for i in range(n)], pa.int64())})
    lower = lambda: spark.read.schema("id BIGINT, key BIGINT").parquet(path)  # noqa: E731
    hs = hsbloom.Hyperspace(spark)
    with settings(spark, spark__sql__caseSensitive="true"):  # `key` matches no file column: all null
        hs.create_index(lower(), hsbloom.BFIndexConfig("case", ["key"]))
    with settings(spark, spark__sql__caseSensitive="false"):  # `key` reads `Key`
        assert_same_rows(spark, lower, "key")
        assert_not_used(spark, lower().where("key = 5"), "case", "spark.sql.caseSensitive differs")


# --- Families that keep the index usable ------------------------------------------------------


def test_columns_missing_in_some_files_with_merged_schema(spark, system_path, tmp_path):
    """Files without the column hold nulls there; the index was built from the same reads, so it prunes."""
    path = tmp_path / "merged"
    for n in range(NUM_FILES):
        rows = spark.range(n * ROWS_PER_FILE, (n + 1) * ROWS_PER_FILE)
        if n % 2:
            rows = rows.selectExpr("id", "id * 7 AS extra")
        rows.coalesce(1).write.parquet(str(path / f"part={n}"))
    read = lambda: spark.read.option("mergeSchema", True).parquet(str(path))  # noqa: E731
    hsbloom.Hyperspace(spark).create_index(read(), hsbloom.BFIndexConfig("merged", ["extra"]))
    assert_same_rows(spark, read, "extra")
    assert_prunes(spark, read(), "extra = 7 * 30")
    # Read without mergeSchema (other options, another schema): not used, same rows.
    plain = lambda: spark.read.parquet(str(path))  # noqa: E731
    hsbloom.disable(spark)
    if "extra" in plain().columns:
        assert_same_rows(spark, plain, "extra")


def test_partition_column_of_timestamps(spark, system_path, tmp_path):
    """Timestamp partition values are parsed from paths in the session time zone."""
    path = str(tmp_path / "parted")
    with settings(spark, spark__sql__session__timeZone="UTC"):
        spark.range(NUM_FILES * ROWS_PER_FILE).selectExpr(
            "id", "timestamp'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, CAST(id % 4 AS INT), 0, 0) AS p"
        ).write.partitionBy("p").parquet(path)
        read = lambda: spark.read.parquet(path)  # noqa: E731
        hsbloom.Hyperspace(spark).create_index(read(), hsbloom.BFIndexConfig("parted", ["p"]))
        assert_same_rows(spark, read, "p")
    with settings(spark, spark__sql__session__timeZone="Asia/Tokyo"):
        assert_same_rows(spark, read, "p")
        assert_not_used(spark, read().where("p IS NULL"), "parted", "spark.sql.session.timeZone differs")


def test_index_log_records_the_read_facts(spark, system_path, csv_files):
    with settings(spark, spark__sql__session__timeZone="UTC"):
        df = spark.read.option("header", True).schema("id BIGINT, a BIGINT, b TIMESTAMP").csv(csv_files)
        hs = hsbloom.Hyperspace(spark)
        hs.create_index(df, hsbloom.BFIndexConfig("facts", ["a", "b"]))
    source = hs.index("facts").source
    assert source.read_facts["column.a"] == "name=a type=bigint partition=false"
    assert source.read_facts["data_schema"] == "id bigint, a bigint, b timestamp"
    assert source.read_facts["spark.sql.session.timeZone"] == "UTC"
    assert source.read_facts["spark.sql.caseSensitive"] == "false"
    assert '"name":"a"' in source.user_schema
