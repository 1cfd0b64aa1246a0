"""Resolving a DataFrame to the files it scans: accepted sources, listings, refusals.

Accepted sources are described by the jar's `Sources.describe` (what create and refresh record of a source, the
indexed columns as the DataFrame spells them, and the listing: tests/source_support.py). Refusals are seen where
users see them, from `Hyperspace.create_index`, which refuses before it writes anything."""

from __future__ import annotations

import datetime
import decimal
import os
import re
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from hsbloom import BFIndexConfig, Hyperspace
from hsbloom.errors import UnsupportedSourceError
from source_support import describe

ALL_TYPES_SCHEMA = (
    "id long, i int, sh short, by byte, f float, d double, name string, bin binary, day date, "
    "ts timestamp, ts_ntz timestamp_ntz, amount decimal(12,2), "
    "flag boolean, point struct<x:int,y:int>, tags array<string>, attrs map<string,string>"
)


@pytest.fixture(scope="module")
def tables(spark, tmp_path_factory):
    """Small sources of every accepted kind (module-scoped: written once)."""
    root = tmp_path_factory.mktemp("sources")
    row = (
        1, 2, 3, 4, 1.5, 2.5, "a", b"\x01", datetime.date(2024, 1, 2),
        datetime.datetime(2024, 1, 2, 3, 4, 5), datetime.datetime(2024, 1, 2, 3, 4, 5), decimal.Decimal("1.25"),
        True, (1, 2), ["t"], {"k": "v"},
    )
    typed = spark.createDataFrame([row] * 6, ALL_TYPES_SCHEMA).repartition(3)
    typed.write.parquet(str(root / "typed"))
    simple = spark.range(0, 30, numPartitions=3).select(F.col("id"), F.col("id").cast("string").alias("name"))
    simple.write.parquet(str(root / "simple"))
    simple.write.orc(str(root / "orc"))
    simple.write.option("header", "true").csv(str(root / "csv"))
    simple.write.json(str(root / "json"))
    simple.write.format("delta").save(str(root / "delta"))
    simple.limit(5).write.format("delta").mode("append").save(str(root / "delta"))
    spark.sql("DROP TABLE IF EXISTS hsbloom_sources_parquet")
    spark.sql("DROP TABLE IF EXISTS hsbloom_sources_delta")
    simple.write.saveAsTable("hsbloom_sources_parquet")
    simple.write.format("delta").saveAsTable("hsbloom_sources_delta")
    yield root
    spark.sql("DROP TABLE IF EXISTS hsbloom_sources_parquet")
    spark.sql("DROP TABLE IF EXISTS hsbloom_sources_delta")


def data_files(directory: Path, suffix: str) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.name.endswith(suffix) and not p.name.startswith("."))


def create_refused(spark, system_path: Path, df, columns: list[str]) -> UnsupportedSourceError:
    """The error create_index raises for `df`; nothing of the index was written."""
    with pytest.raises(UnsupportedSourceError) as error:
        Hyperspace(spark).create_index(df, BFIndexConfig("refused", columns))
    assert not (system_path / "refused").exists()
    return error.value


def test_parquet_path_lists_every_file_with_its_fingerprint(spark, tables):
    described = describe(spark, spark.read.parquet(str(tables / "typed")), ["id", "name"])
    source, files = described.source, described.files
    assert described.columns == ("id", "name")
    assert source.format == "parquet"
    assert source.root_paths == (f"file:{tables / 'typed'}",)
    assert (source.table, source.delta_version) == (None, None)
    on_disk = data_files(tables / "typed", ".parquet")
    assert len(on_disk) == 3
    assert [f.path for f in files] == [f"file:{p}" for p in on_disk]
    assert [f.file_id for f in files] == [0, 1, 2]
    for listed, path in zip(files, on_disk):
        stat = os.stat(path)
        assert listed.size == stat.st_size
        assert listed.mtime == int(stat.st_mtime * 1000)
    assert source.schema["amount"] == "decimal(12,2)"
    assert source.schema["ts_ntz"] == "timestamp_ntz"


def test_every_indexable_type_is_accepted(spark, tables):
    indexable = ["id", "i", "sh", "by", "f", "d", "name", "bin", "day", "ts", "ts_ntz", "amount"]
    assert describe(spark, spark.read.parquet(str(tables / "typed")), indexable).columns == tuple(indexable)


@pytest.mark.parametrize(
    "column, type_name",
    [("flag", "boolean"), ("point", r"struct<x:int,y:int>"), ("tags", r"array<string>"), ("attrs", r"map<string,string>")],
)
def test_unsupported_types_are_refused_naming_column_and_type(spark, system_path, tables, column, type_name):
    df = spark.read.parquet(str(tables / "typed"))
    error = create_refused(spark, system_path, df, ["id", column])
    assert re.search(rf"column '{column}' has type {type_name}, which hsbloom cannot index", str(error))


def test_a_string_with_a_non_binary_collation_is_refused(spark, system_path, tables):
    df = spark.read.schema("id long, name string collate UTF8_LCASE").parquet(str(tables / "typed"))
    error = create_refused(spark, system_path, df, ["name"])
    assert re.search(r"column 'name' has type string collate UTF8_LCASE", str(error))


def test_unknown_column_is_named_with_the_available_ones(spark, system_path, tables):
    df = spark.read.parquet(str(tables / "typed")).select("id", "name", "flag")
    error = create_refused(spark, system_path, df, ["id", "user_id"])
    assert re.search(r"unknown column 'user_id'; the DataFrame's columns are: id, name, flag", str(error))


def test_nested_field_is_not_a_column(spark, system_path, tables):
    df = spark.read.parquet(str(tables / "typed"))
    error = create_refused(spark, system_path, df, ["point.x"])
    assert re.search(r"unknown column 'point.x' \(only top-level columns", str(error))


def test_projection_is_accepted_and_names_resolve_like_spark(spark, tables):
    df = spark.read.parquet(str(tables / "typed")).select("name", "id")
    described = describe(spark, df, ["ID", "Name"])
    assert described.columns == ("id", "name")  # the DataFrame's own spelling
    assert list(described.source.schema) == ["name", "id"]
    assert len(described.files) == 3


def test_case_variants_of_one_column_are_a_duplicate(spark, system_path, tables):
    error = create_refused(spark, system_path, spark.read.parquet(str(tables / "typed")), ["id", "ID"])
    assert "column 'id' is listed more than once" in str(error)


@pytest.mark.parametrize("fmt, suffix", [("orc", ".orc"), ("json", ".json")])
def test_orc_and_json_paths(spark, tables, fmt, suffix):
    described = describe(spark, spark.read.format(fmt).load(str(tables / fmt)), ["id"])
    assert described.source.format == fmt
    assert [f.path for f in described.files] == [f"file:{p}" for p in data_files(tables / fmt, suffix)]


def test_csv_records_its_read_options(spark, tables):
    """Options that decide values are recorded as they are (keys in lower case, as Spark compares them), others
    only as a keyed hash, credentials not at all (docs/security.md)."""
    df = (spark.read.option("header", "true").option("inferSchema", "true").option("fs.s3a.access.key", "AKIA")
          .option("someLibraryOption", "v").csv(str(tables / "csv")))
    described = describe(spark, df, ["name"])
    source = described.source
    assert source.format == "csv"
    assert source.options == {"header": "true", "inferschema": "true"}
    assert list(source.hashed_options) == ["somelibraryoption"] and source.hashed_options["somelibraryoption"] != "v"
    assert len(source.options_salt or "") == 32
    assert len(described.files) == len(data_files(tables / "csv", ".csv")) > 0


def test_catalog_table_over_files(spark, tables):
    described = describe(spark, spark.table("hsbloom_sources_parquet"), ["id"])
    source = described.source
    assert (source.format, source.table) == ("parquet", "spark_catalog.default.hsbloom_sources_parquet")
    assert len(described.files) >= 1


def test_delta_latest_time_travel_and_catalog_versions(spark, tables):
    """One test for all Delta reads: each snapshot load runs Spark jobs, so they are kept few."""
    from delta.tables import DeltaTable

    path = str(tables / "delta")
    latest = describe(spark, spark.read.format("delta").load(path), ["id"])
    first = describe(spark, spark.read.format("delta").option("versionAsOf", 0).load(path), ["id"])
    assert (latest.source.format, latest.source.delta_version, first.source.delta_version) == ("delta", 1, 0)
    assert latest.source.root_paths == first.source.root_paths == (f"file:{tables / 'delta'}",)
    assert set(f.path for f in first.files) < set(f.path for f in latest.files)
    assert len(latest.files) == len(first.files) + 1
    # Fingerprints come from Delta's log: the sizes it recorded are the files' sizes.
    for listed in latest.files:
        assert listed.size == os.stat(listed.path.removeprefix("file:")).st_size

    first_commit = DeltaTable.forPath(spark, path).history().where("version = 0").first()["timestamp"]
    by_time = spark.read.format("delta").option("timestampAsOf", first_commit.isoformat(sep=" ")).load(path)
    assert describe(spark, by_time, ["id"]).source.delta_version == 0

    table = describe(spark, spark.table("hsbloom_sources_delta").select("name"), ["name"]).source
    assert (table.format, table.delta_version, table.table) == ("delta", 0, "spark_catalog.default.hsbloom_sources_delta")


def refused_plans(spark, path):
    base = spark.read.parquet(path)
    return {
        r"a join \[Join\]": base.join(base, "id"),
        r"an aggregation \[Aggregate\]": base.groupBy("id").count(),
        r"spark.range \(generated rows, not files\) \[Range\]": spark.range(10),
        r"local data|an RDD or local data": spark.createDataFrame([(1,)], "id long"),
        r"a filter \(hsbloom indexes whole tables; filter when querying\) \[Filter\]": base.where("id > 1"),
        r"a union \[Union\]": base.union(base),
        r"a limit": base.limit(3),
        r"computes or renames columns \(id AS user_id\)": base.withColumnRenamed("id", "user_id"),
        r"computes or renames columns": base.select((F.col("id") + 1).alias("id")),
        r"a distinct": base.distinct(),
    }


@pytest.mark.parametrize("kind", range(10))
def test_non_file_dataframes_are_refused_saying_why_and_what_to_pass(spark, system_path, tables, kind):
    message, df = list(refused_plans(spark, str(tables / "simple")).items())[kind]
    error = create_refused(spark, system_path, df, ["id"])
    assert re.search(message, str(error))
    assert "spark.read.parquet(path)" in str(error)


def test_streaming_dataframe_is_refused(spark, system_path, tables):
    stream = spark.readStream.schema("id long, name string").parquet(str(tables / "typed"))
    assert "cannot index a streaming DataFrame" in str(create_refused(spark, system_path, stream, ["id"]))


def test_not_a_dataframe_is_refused(spark, system_path):
    assert "needs a pyspark DataFrame, got str" in str(create_refused(spark, system_path, "/some/path", ["id"]))
