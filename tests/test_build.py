"""The distributed build (hsbloom.indexing / IndexBuild.scala) on real Parquet files, through the test kit's JSON
entry (tests/build_support.py).

Filters are checked inside Spark with the jar's `hsbloom_might_contain`, so
every value of every file is probed without collecting the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

import jvm_classes
import stored_filters
from build_support import build_index_data

FPP = 0.01
COLUMNS = ["id", "uuid", "small", "score", "amount", "day", "ts", "raw"]


@dataclass(frozen=True)
class Listed:
    file_id: int
    path: str
    size: int
    mtime: int


def list_files(spark, directory: str) -> list[Listed]:
    """The data files of a directory, through the Hadoop FileSystem (as a file index lists them)."""
    path = jvm_classes.hadoop_path(spark, directory)
    fs = path.getFileSystem(jvm_classes.hadoop_conf(spark))
    statuses = sorted(
        (s for s in fs.listStatus(path) if s.getPath().getName().endswith(".parquet")),
        key=lambda s: s.getPath().getName(),
    )
    return [Listed(i, s.getPath().toString(), s.getLen(), s.getModificationTime()) for i, s in enumerate(statuses)]


def make_source(spark, directory: str, rows: int = 60_000, files: int = 12) -> None:
    """Several types, nulls, NaN, -0.0, empty strings and unicode, spread over `files` files."""
    (
        spark.range(rows, numPartitions=files)
        .select(
            (F.col("id") * 7919 + 13).alias("id"),
            F.when(F.col("id") % 11 == 0, F.lit("")).otherwise(F.concat(F.lit("ü-"), F.expr("uuid()"))).alias("uuid"),
            F.when(F.col("id") % 5 == 0, None).otherwise((F.col("id") % 1000).cast("int")).alias("small"),
            F.when(F.col("id") % 97 == 0, F.lit(float("nan")))
            .when(F.col("id") % 89 == 0, F.lit(-0.0))
            .otherwise(F.col("id") / 3.0)
            .alias("score"),
            (F.col("id") / 100).cast("decimal(20,2)").alias("amount"),
            F.date_add(F.lit("2020-01-01").cast("date"), (F.col("id") % 3000).cast("int")).alias("day"),
            F.timestamp_micros(F.col("id") * 1_000_003).alias("ts"),
            F.when(F.col("id") % 3 == 0, None).otherwise(F.unhex(F.hex(F.col("id")))).alias("raw"),
        )
        .write.parquet(directory)
    )


def build(spark, source: str, data_path: str, columns=COLUMNS, **options):
    """Build an index version of `source` at `data_path`; `options` override the build defaults."""
    settings = {"expected_num_items": None, "fpp": FPP, "global_filter": True, **options}
    return build_index_data(
        spark, spark.read.parquet(source), list_files(spark, source), columns,
        description="test build", data_path=data_path, **settings,
    )


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("build")
    source = str(base / "source dir ü")  # a space and non-ASCII in the path on purpose
    make_source(spark, source)
    summary = build(spark, source, str(base / "index" / "v__=0"))
    return source, str(base / "index" / "v__=0"), summary


def with_file_name(df):
    return df.withColumn("file_name", F.col("_metadata.file_name"))


def file_table(spark, data_path):
    """The file table with each row's filter read back from its blocks (the one place it is stored)."""
    return stored_filters.file_table(spark, data_path).withColumn(
        "file_name", F.element_at(F.split("file_path", "/"), -1)
    )


def global_filter_bytes(spark, data_path, column) -> bytes:
    chunks = (
        spark.read.parquet(f"{data_path}/global").where(F.col("column") == column).orderBy("chunk_index").collect()
    )
    assert [c.chunk_index for c in chunks] == list(range(chunks[0].num_chunks))
    blob = b"".join(bytes(c.chunk) for c in chunks)
    assert len(blob) == chunks[0].filter_bytes
    return blob


def test_one_row_per_file_and_column_with_exact_counts(spark, built):
    source, data_path, summary = built
    index = file_table(spark, data_path)
    listed = list_files(spark, source)
    assert index.count() == len(listed) * len(COLUMNS)
    assert {(r.file_id, r.file_path, r.file_size, r.file_mtime) for r in index.collect()} == {
        (f.file_id, f.path, f.size, f.mtime) for f in listed
    }
    data = with_file_name(spark.read.parquet(source))
    for column in COLUMNS:
        expected = {
            r.file_name: (r.rows, r.nulls)
            for r in data.groupBy("file_name")
            .agg(F.count("*").alias("rows"), F.sum(F.col(column).isNull().cast("long")).alias("nulls"))
            .collect()
        }
        got = {r.file_name: (r.num_rows, r.num_nulls) for r in index.where(F.col("column") == column).collect()}
        assert got == expected, column
    assert summary["num_files"] == len(listed)
    assert summary["num_rows"] == 60_000
    assert summary["columns"]["small"]["num_nulls"] == 12_000
    assert summary["index_bytes"] > 0


def test_every_value_tests_positive_in_its_files_filter(spark, built):
    source, data_path, _ = built
    data = with_file_name(spark.read.parquet(source))
    index = file_table(spark, data_path)
    for column in COLUMNS:
        filters = index.where(F.col("column") == column).select("file_name", "filter")
        probed = data.where(F.col(column).isNotNull()).join(filters, "file_name").select(
            F.expr(f"hsbloom_might_contain(filter, `{column}`)").alias("hit")
        )
        misses = probed.where(~F.col("hit")).count()
        assert misses == 0, f"{misses} false negatives in column {column}"
        assert probed.count() == data.where(F.col(column).isNotNull()).count()


def test_global_filter_contains_every_value(spark, built):
    source, data_path, summary = built
    data = spark.read.parquet(source)
    for column in COLUMNS:
        blob = global_filter_bytes(spark, data_path, column)
        assert len(blob) == summary["columns"][column]["global_filter_bytes"]
        misses = data.where(F.col(column).isNotNull()).where(
            ~F.expr(f"hsbloom_might_contain(unhex('{blob.hex()}'), `{column}`)")
        ).count()
        assert misses == 0, column
    # The distinct estimate sizes the global filter: 60,000 distinct ids within 3 %.
    assert abs(summary["columns"]["id"]["ndv"] / 60_000 - 1) < 0.03


def test_false_positive_rate_of_file_filters_is_near_the_target(spark, built):
    _, data_path, _ = built
    filters = file_table(spark, data_path).where(F.col("column") == "id").select("filter")
    # The ids are 7919 * n + 13; these values are not among them.
    absent = spark.range(0, 20_000).select((F.col("id") * 7919 + 14).alias("probe"))
    rate = (
        absent.crossJoin(filters)
        .select(F.expr("hsbloom_might_contain(filter, probe)").cast("double").alias("hit"))
        .agg(F.avg("hit"))
        .first()[0]
    )
    assert rate <= 1.5 * FPP, rate


def test_small_files_get_small_filters(spark, built):
    _, data_path, _ = built
    sizes = {
        r.column: r.size
        for r in file_table(spark, data_path)
        .groupBy("column")
        .agg(F.max(F.length("filter")).alias("size"))
        .collect()
    }
    # 5,000 distinct ids per file need ~6 KiB at 1 %; 'small' has at most 1,000 distinct values.
    assert sizes["id"] <= 8192 + 19
    assert sizes["small"] < sizes["id"]


def test_split_files_merge_to_the_same_filters(spark, built, tmp_path):
    source, data_path, _ = built
    previous = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(64 * 1024))  # every file is read by several tasks
    try:
        assert spark.read.parquet(source).rdd.getNumPartitions() > len(list_files(spark, source))
        split_path = str(tmp_path / "split")
        build(spark, source, split_path)
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", previous)

    def rows(path):
        return sorted(
            (r.file_id, r.column, r.num_rows, r.num_nulls, r.ndv, bytes(r.filter))
            for r in file_table(spark, path).collect()
        )

    assert rows(split_path) == rows(data_path)
    for column in ("id", "uuid"):
        assert global_filter_bytes(spark, split_path, column) == global_filter_bytes(spark, data_path, column)


def test_files_beyond_the_hash_buffer_are_built_large_and_folded(spark, built, tmp_path):
    source, _, _ = built
    data_path = str(tmp_path / "large")
    build(spark, source, data_path, columns=["id"], max_buffered_hashes=100, global_filter=False)
    data = with_file_name(spark.read.parquet(source))
    filters = file_table(spark, data_path).select("file_name", "filter")
    assert data.join(filters, "file_name").where(~F.expr("hsbloom_might_contain(filter, id)")).count() == 0
    sizes = {r[0] for r in filters.select(F.length("filter")).collect()}
    assert max(sizes) < 64 * 1024, "the large build must be folded down to the data"


def test_global_filters_built_large_and_folded_equal_those_built_at_size(spark, built, tmp_path):
    """Past its hold limit a global-filter task inserts at the largest size and folds at the end: same bytes."""
    source, data_path, _ = built
    folded_path = str(tmp_path / "folded")
    build(spark, source, folded_path, global_held_hashes=100)
    for column in ("id", "uuid"):
        folded = global_filter_bytes(spark, folded_path, column)
        assert len(folded) < 1024 * 1024, "the largest size must be folded down to the data"
        assert folded == global_filter_bytes(spark, data_path, column)


def test_expected_num_items_fixes_every_filter_size(spark, built, tmp_path):
    source, _, _ = built
    data_path = str(tmp_path / "fixed")
    summary = build(spark, source, data_path, columns=["id", "small"], expected_num_items=100_000)
    # floor(-8 n / ln(1 - p^(1/8))) = 968,152 bits -> 121,019 bytes -> 131,072; its header is 17 bytes.
    sizes = [r[0] for r in file_table(spark, data_path).select(F.length("filter")).collect()]
    assert set(sizes) == {131_072 + 17}
    assert summary["columns"]["id"]["file_filter_bytes"] == 12 * (131_072 + 17)


def test_empty_and_all_null_files_get_rows_that_match_nothing(spark, tmp_path):
    source = str(tmp_path / "src")
    schema = T.StructType([T.StructField("k", T.LongType()), T.StructField("s", T.StringType())])
    spark.createDataFrame([(1, "a"), (2, None)], schema).coalesce(1).write.parquet(source)
    spark.createDataFrame([], schema).coalesce(1).write.mode("append").parquet(source)
    spark.createDataFrame([(None, None)], schema).coalesce(1).write.mode("append").parquet(source)
    listed = list_files(spark, source)
    assert len(listed) == 3
    data_path = str(tmp_path / "index")
    summary = build_index_data(
        spark, spark.read.parquet(source), listed, ["k", "s"], None, FPP, True, data_path, "empty files"
    )
    rows = file_table(spark, data_path).collect()
    assert len(rows) == 6
    by_file = {}
    for r in rows:
        by_file.setdefault(r.file_id, {})[r.column] = (r.num_rows, r.num_nulls, r.ndv, len(r.filter))
    counts = sorted(tuple(sorted(v.items())) for v in by_file.values())
    assert (("k", (0, 0, 0, 47)), ("s", (0, 0, 0, 47))) in counts  # the empty file: a 32-byte filter + header
    assert (("k", (1, 1, 0, 47)), ("s", (1, 1, 0, 47))) in counts  # all nulls
    assert summary["columns"]["k"] == {
        "num_rows": 3, "num_nulls": 1, "ndv": summary["columns"]["k"]["ndv"],
        # A global filter has at least one block per bucket: 64 blocks, 2 KiB, and a 16-byte header.
        "file_filter_bytes": 3 * 47, "global_filter_bytes": 2048 + 16,
        # The files' distinct values summed (the join cost model's spread of a key): 2, 0 and 0.
        "file_ndv_sum": 2,
        "ndv_scope": "column",  # the global filter's estimate counts each value once
    }
    assert sum(r.ndv for r in rows if r.column == "k") == 2
    empty_filters = file_table(spark, data_path).where("num_rows - num_nulls = 0")
    assert empty_filters.where("hsbloom_might_contain(filter, 1L) OR hsbloom_might_contain(filter, 2L)").count() == 0


def test_without_global_filter_ndv_counts_each_value_once(spark, tmp_path):
    """The map tasks' distinct counters are merged on the driver: the same keys in two files count once (ndv), twice
    in the files' sum (file_ndv_sum), so the join cost model measures in how many files a key is without a global
    filter too."""
    source = str(tmp_path / "src")
    keys = spark.range(0, 3000).selectExpr("id AS k", "CAST(id AS STRING) AS s")
    keys.coalesce(1).write.parquet(source)
    keys.where("k < 1500").coalesce(1).write.mode("append").parquet(source)
    listed = list_files(spark, source)
    summary = build_index_data(
        spark, spark.read.parquet(source), listed, ["k", "s"], None, FPP, False, str(tmp_path / "index"), "no global"
    )
    for column in ("k", "s"):
        counted = summary["columns"][column]
        assert counted["global_filter_bytes"] == 0 and counted["ndv_scope"] == "column"
        assert abs(counted["ndv"] - 3000) <= 30, counted  # HyperLogLog, 2^14 registers: linear counting here
        assert abs(counted["file_ndv_sum"] - 4500) <= 45, counted  # each file's filter's estimate
