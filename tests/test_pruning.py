"""File pruning end to end: how many files a lookup reads, staleness, broken indexes, Delta, tables, explain."""

from __future__ import annotations

import os
import random
import re
import shutil
import time
from pathlib import Path

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from hsbloom import jar
import hsbloom
from hsbloom.explain import explain_string, file_counts
from hsbloom.settings import SYSTEM_PATH as SYSTEM_PATH_CONF
from jvm_classes import jvm_class
from pruning_support import create_index, files_read, outcomes

FPP = 0.01


def ids(df) -> list[int]:
    return sorted(r[0] for r in df.collect())


def both(spark, make_df):
    """(rows with pruning off, rows with it on) of the DataFrame `make_df()` builds."""
    hsbloom.disable(spark)
    off = sorted(tuple(r) for r in make_df().collect())
    hsbloom.enable(spark)
    on = sorted(tuple(r) for r in make_df().collect())
    return off, on


@pytest.fixture(autouse=True)
def pruning_disabled_afterwards(spark):
    yield
    hsbloom.disable(spark)


@pytest.fixture(scope="module")
def wide(spark, tmp_path_factory):
    """200 files of 250 random, distinct long keys each, with an index at fpp 0.01."""
    directory = str(tmp_path_factory.mktemp("wide") / "data")
    (
        spark.range(0, 50_000, numPartitions=200)
        .select(F.xxhash64("id").alias("key"), F.col("id").alias("n"))
        .write.parquet(directory)
    )
    create_index(spark, directory, "wide_key", ["key"], fpp=FPP)
    return directory


def test_lookups_on_200_files_read_the_file_plus_about_fpp_times_files(spark, wide):
    df = spark.read.parquet(wide)
    rows = df.orderBy(F.xxhash64("n", F.lit(7))).limit(10).collect()
    assert len({f for f in spark.read.parquet(wide).inputFiles()}) == 200
    hsbloom.enable(spark)
    present_extra = 0
    for r in rows:
        lookup = df.where(F.col("key") == r.key)
        assert [x.n for x in lookup.collect()] == [r.n]
        read = files_read(lookup)
        assert read >= 1
        present_extra += read - 1
    rng = random.Random(3)
    missing_reads = 0
    for _ in range(10):
        key = rng.randint(-(2**63), 2**63 - 1)
        lookup = df.where(F.col("key") == key)
        assert lookup.count() == 0
        missing_reads += files_read(lookup)
    # Expected false positives per lookup: fpp x 199 = ~2. Allow 2.5x that on average.
    assert present_extra / 10 <= 2.5 * FPP * 199, present_extra
    assert missing_reads / 10 <= 2.5 * FPP * 200, missing_reads
    hsbloom.disable(spark)
    assert files_read(df.where(F.col("key") == rows[0].key)) == 200


def test_the_default_fpp_reads_about_one_false_positive_file_per_twenty_probes(spark, wide, tmp_path):
    """At the default fpp (0.05 / files for each file's filter) 200 absent values probe at most about 10
    false-positive files in all (fewer: filters round up to a power of two), and fewer than at fpp 0.01."""
    copy = copy_tree(wide, tmp_path / "wide_default")
    hs = hsbloom.Hyperspace(spark)
    hs.create_index(spark.read.parquet(copy), hsbloom.BFIndexConfig("wide_default", ["key"], global_filter=False))
    info, fixed = hs.index("wide_default"), hs.index("wide_key")
    assert info.file_fpp == pytest.approx(0.05 / 200) and info.shared_fpp == 0.01
    assert hs.indexes().where("name = 'wide_default'").first().fpp == pytest.approx(0.05 / 200)
    assert info.columns[0].file_filter_bytes > 1.5 * fixed.columns[0].file_filter_bytes
    rng = random.Random(11)
    probes = [[rng.randint(-(2**63), 2**63 - 1) for _ in range(20)] for _ in range(10)]
    hsbloom.enable(spark)
    read_default = sum(files_read(spark.read.parquet(copy).where(F.col("key").isin(p))) for p in probes)
    read_fixed = sum(files_read(spark.read.parquet(wide).where(F.col("key").isin(p))) for p in probes)
    assert read_default <= 2.5 * 200 * 0.05, read_default
    assert read_fixed >= 3 * max(read_default, 1), (read_fixed, read_default)


def copy_tree(source: str, target: Path) -> str:
    shutil.copytree(source, target)
    return str(target)


def test_stale_index_reads_new_and_changed_files_and_ignores_deleted_ones(spark, tmp_path):
    directory = str(tmp_path / "stale")
    spark.range(0, 2000, numPartitions=10).select(F.col("id").alias("key")).write.parquet(directory)
    create_index(spark, directory, "stale_key", ["key"])
    files = sorted(p for p in os.listdir(directory) if p.endswith(".parquet"))
    # Append a file with new keys; delete one file; rewrite another with other keys (new size and mtime).
    spark.range(5000, 5100, numPartitions=1).select(F.col("id").alias("key")).write.mode("append").parquet(directory)
    deleted = spark.read.parquet(f"{directory}/{files[0]}").agg(F.min("key")).first()[0]
    os.remove(f"{directory}/{files[0]}")
    rewritten_path = f"{directory}/{files[1]}"
    old_key = spark.read.parquet(rewritten_path).agg(F.min("key")).first()[0]
    replacement = tmp_path / "replacement"
    spark.range(7000, 7300, numPartitions=1).select(F.col("id").alias("key")).write.parquet(str(replacement))
    shutil.copy(next(replacement.glob("*.parquet")), rewritten_path)
    for crc in Path(directory).glob(".*.crc"):  # Hadoop's checksums of the old content
        crc.unlink()
    df = lambda: spark.read.parquet(directory)  # noqa: E731
    for key in [5050, deleted, old_key, 7100, 1500]:
        off, on = both(spark, lambda: df().where(F.col("key") == key))
        assert on == off, key
    hsbloom.enable(spark)
    assert ids(df().where(F.col("key") == 5050)) == [5050]  # appended file read
    assert ids(df().where(F.col("key") == 7100)) == [7100]  # rewritten file read
    assert ids(df().where(F.col("key") == old_key)) == []
    assert ids(df().where(F.col("key") == deleted)) == []
    # An unchanged key still prunes: only its file plus the two files the index does not know.
    assert files_read(df().where(F.col("key") == 1500)) <= 3


def test_corrupt_or_missing_index_data_means_no_pruning_and_a_warning(spark, tmp_path):
    directory = str(tmp_path / "corrupt")
    spark.range(0, 2000, numPartitions=10).select(F.col("id").alias("key")).write.parquet(directory)
    data_path = create_index(spark, directory, "corrupt_key", ["key"])
    df = spark.read.parquet(directory)
    lookup = lambda: df.where(F.col("key") == 42)  # noqa: E731
    hsbloom.enable(spark)
    assert files_read(lookup()) == 1

    local = Path(data_path.removeprefix("file:"))
    part = next((local / "files").glob("*.parquet"))
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    jar.jar_class(spark, "index_catalog").invalidateAll()
    assert ids(lookup()) == [42]
    assert 1 < files_read(lookup()) <= 10  # the files the damaged part covered are read, the others pruned
    assert any(part.name in damage for damage in hsbloom.Hyperspace(spark).index("corrupt_key").damage)

    shutil.rmtree(local)
    jar.jar_class(spark, "index_catalog").invalidateAll()
    assert ids(lookup()) == [42]
    assert files_read(lookup()) == 10
    assert "failed" in explain_string(lookup())


def test_a_corrupt_filter_keeps_only_its_own_file(spark, tmp_path):
    directory = str(tmp_path / "badfilter")
    spark.range(0, 2000, numPartitions=10).select(F.col("id").alias("key")).write.parquet(directory)
    data_path = create_index(spark, directory, "badfilter_key", ["key"])
    tables = jvm_class(spark, "index_tables")
    table = DataFrame(tables.readFileTable(jar.java_session(spark), data_path), spark)
    victim = table.orderBy("file_path").first().file_path
    broken = table.withColumn(
        "filter", F.when(F.col("file_path") == victim, F.lit(b"\x15\x80garbage")).otherwise(F.col("filter"))
    ).collect()
    for written in ("files", "blocks"):
        shutil.rmtree(data_path.removeprefix("file:") + "/" + written)
    # Written the way hsbloom writes it, so only the one filter is bad.
    rewritten = spark.createDataFrame(broken, table.schema).coalesce(1)
    tables.writeFileTable(jar.java_dataframe(rewritten), data_path, "errorifexists")
    jar.jar_class(spark, "index_catalog").invalidateAll()
    hsbloom.enable(spark)
    lookup = spark.read.parquet(directory).where(F.col("key") == 1999)
    assert ids(lookup) == [1999]
    assert files_read(lookup) == 2  # its own file and the one whose filter is unreadable


def test_several_indexes_on_one_relation_combine(spark, tmp_path):
    directory = str(tmp_path / "two")
    spark.range(0, 3000, numPartitions=12).select(
        F.col("id").alias("a"), F.concat(F.lit("s"), F.col("id")).alias("b"), (F.col("id") % 7).alias("c")
    ).write.parquet(directory)
    create_index(spark, directory, "two_a", ["a"])
    create_index(spark, directory, "two_b", ["b"])
    df = lambda: spark.read.parquet(directory)  # noqa: E731
    query = lambda: df().where((F.col("a") == 5) | (F.col("b") == "s2999"))  # noqa: E731
    off, on = both(spark, query)
    assert on == off and len(on) == 2
    assert files_read(query()) == 2
    mixed = lambda: df().where((F.col("a") == 5) & (F.col("c") > 2) | (F.col("b") == "s10"))  # noqa: E731
    off, on = both(spark, mixed)
    assert on == off
    assert files_read(mixed()) == 1
    negated = lambda: df().where(~(F.col("a") == 5))  # noqa: E731
    off, on = both(spark, negated)
    assert on == off
    assert files_read(negated()) == 12


def test_is_null_uses_null_counts(spark, tmp_path):
    directory = str(tmp_path / "nulls")
    spark.range(0, 1000, numPartitions=10).select(
        F.col("id"), F.when(F.col("id") == 555, None).otherwise(F.col("id")).alias("k")
    ).write.parquet(directory)
    create_index(spark, directory, "nulls_k", ["k"])
    for condition in ["k IS NULL", "k <=> NULL", "k <=> 555", "k = 5 OR k IS NULL"]:
        off, on = both(spark, lambda: spark.read.parquet(directory).where(condition))
        assert on == off, condition
    hsbloom.enable(spark)
    assert files_read(spark.read.parquet(directory).where("k IS NULL")) == 1
    assert files_read(spark.read.parquet(directory).where("k <=> NULL")) == 1


def test_partitioned_directory_prunes_partitions_first(spark, tmp_path):
    directory = str(tmp_path / "parts")
    spark.range(0, 4000, numPartitions=8).select(
        F.col("id").alias("key"), (F.col("id") % 4).alias("part")
    ).write.partitionBy("part").parquet(directory)
    create_index(spark, directory, "parts_key", ["key"])
    query = lambda: spark.read.parquet(directory).where((F.col("key") == 1001) & (F.col("part") == 1))  # noqa: E731
    off, on = both(spark, query)
    assert on == off and len(on) == 1
    hsbloom.disable(spark)
    unpruned = files_read(query())
    hsbloom.enable(spark)
    assert files_read(query()) == 1 < unpruned


def test_catalog_table_over_indexed_files_is_pruned(spark, tmp_path):
    spark.range(0, 2000, numPartitions=10).select(F.col("id").alias("key")).write.saveAsTable("pruning_tbl")
    try:
        location = spark.sql("DESCRIBE TABLE EXTENDED pruning_tbl").where("col_name = 'Location'").first().data_type
        create_index(spark, location, "tbl_key", ["key"], df=spark.table("pruning_tbl"))
        off, on = both(spark, lambda: spark.table("pruning_tbl").where("key = 77"))
        assert on == off == [(77,)]
        hsbloom.enable(spark)
        assert files_read(spark.table("pruning_tbl").where("key = 77")) == 1
        assert files_read(spark.sql("SELECT * FROM pruning_tbl WHERE key IN (77, 1999)")) == 2
        assert file_counts(spark.table("pruning_tbl").where("key = 77")) == (1, 10, 9)
    finally:
        spark.sql("DROP TABLE IF EXISTS pruning_tbl")


def test_char_columns_of_a_catalog_table(spark, tmp_path):
    """Spark pads a CHAR(n) column to n when it reads it (spark.sql.readSideCharPadding, on by default), and these
    files were written unpadded by another writer: indexing that column is refused naming the setting, the table's
    other columns index and prune as usual. With the padding off the CHAR column indexes too; that index is not used
    wrongly once the padding is on again. Same rows with hsbloom on and off throughout."""
    from hsbloom.errors import UnsupportedSourceError

    directory = str(tmp_path / "char_files")
    values = ["ab", "ab   ", "", "ü", "日本", "abcde", None, " a"]
    rows = [(n, values[n % 8], values[(n + 3) % 8]) for n in range(64)]
    spark.createDataFrame(rows, "id bigint, c string, v string").repartition(8, "id").write.parquet(directory)
    spark.sql("DROP TABLE IF EXISTS char_tbl")
    spark.sql(f"CREATE TABLE char_tbl (id BIGINT, c CHAR(5), v VARCHAR(6)) USING parquet LOCATION '{directory}'")
    predicates = ["c = 'ab'", "c = 'ab   '", "c = ''", "c IN ('ü', '日本')", "v = 'ab'", "v = 'ab   '", "v = ''",
                  "v = 'ü' AND c = 'ü'", "id = 5", "id IN (1, 2) OR c = 'ab'", "c = v", "v <=> NULL"]
    try:
        with pytest.raises(UnsupportedSourceError, match="spark.sql.readSideCharPadding"):
            create_index(spark, directory, "char_c_padded", ["id", "c"], df=spark.table("char_tbl"))
        create_index(spark, directory, "char_id_v", ["id", "v"], df=spark.table("char_tbl"))
        table = spark.table("char_tbl")
        assert outcomes(spark, table, predicates, enabled=True) == outcomes(spark, table, predicates, enabled=False)
        hsbloom.enable(spark)
        assert files_read(table.where("id = 5")) == 1
        spark.conf.set("spark.sql.readSideCharPadding", "false")
        create_index(spark, directory, "char_c", ["c"], df=spark.table("char_tbl"))
        table = spark.table("char_tbl")
        assert outcomes(spark, table, predicates, enabled=True) == outcomes(spark, table, predicates, enabled=False)
        spark.conf.unset("spark.sql.readSideCharPadding")
        table = spark.table("char_tbl")
        assert outcomes(spark, table, predicates, enabled=True) == outcomes(spark, table, predicates, enabled=False)
    finally:
        spark.conf.unset("spark.sql.readSideCharPadding")
        spark.sql("DROP TABLE IF EXISTS char_tbl")


def test_a_relation_read_with_another_type_is_not_pruned(spark, tmp_path):
    directory = str(tmp_path / "retyped")
    spark.range(0, 1000, numPartitions=5).select(F.col("id").cast("int").alias("k")).write.parquet(directory)
    create_index(spark, directory, "retyped_k", ["k"])
    hsbloom.enable(spark)
    as_long = spark.read.schema("k bigint").parquet(directory)
    assert ids(as_long.where("k = 7")) == [7]
    assert files_read(as_long.where("k = 7")) == 5
    assert files_read(spark.read.parquet(directory).where("k = 7")) < 5


def test_strings_compared_as_numbers_are_never_pruned(spark, tmp_path):
    directory = str(tmp_path / "numeric_strings")
    rows = [("5",), ("05",), (" 5",), ("+5",), ("005",), ("6",)]
    spark.createDataFrame(rows, "s string").repartition(6).write.parquet(directory)
    create_index(spark, directory, "numeric_strings_s", ["s"])
    for condition in ["s = 5", "try_cast(s as int) = 5", "s IN (5, 6)"]:
        query = lambda: spark.read.parquet(directory).where(condition)  # noqa: E731
        off, on = both(spark, query)
        assert on == off and len(on) >= 5, condition
        assert files_read(query()) >= 5, condition


def test_delta_with_deletion_vectors_gives_the_same_rows_with_and_without_pruning(spark, tmp_path):
    """End to end from Python, the differential of a Delta table with deletion vectors: deleted rows never come
    back and the rest are found. (Every version, time travel, RESTORE and the scans' file counts: the jar's
    DeltaScanSuite.)"""
    directory = str(tmp_path / "delta")
    # Keys scattered over the files (a permutation of 0..3000), so Delta's min/max skipping cannot prune alone.
    spark.range(0, 3000, numPartitions=4).select(
        F.expr("pmod(id * 7919, 3001)").alias("key"), (F.col("id") % 10).alias("v"), "id"
    ).write.format("delta").option("delta.enableDeletionVectors", "true").save(directory)
    spark.sql(f"DELETE FROM delta.`{directory}` WHERE key % 3 = 0")
    create_index(spark, directory, "delta_key", ["key"], fmt="delta")
    read = lambda: spark.read.format("delta").load(directory)  # noqa: E731
    # The keys each condition finds (key 3 and 6 deleted); None: not checked beyond on == off.
    conditions = {"key = 3": [], "key IN (3, 4, 5, 6)": [4, 5], "key = 4 OR v = 3": None, "key IS NULL": []}
    rng = random.Random(17)

    def leaf() -> str:
        k = lambda: rng.randint(-5, 3005)  # noqa: E731
        return rng.choice([f"key = {k()}", f"key IN ({k()}, {k()}, {k()})", f"key <=> {k()}", "key IS NULL",
                           f"v = {rng.randint(0, 9)}", f"NOT (key = {k()})", f"key > {k()}"])

    # Each predicate is one more Delta scan to plan (with a job of Delta's own): a few here, 16 in DeltaScanSuite.
    predicates = [rng.choice([leaf(), f"({leaf()}) OR ({leaf()})", f"({leaf()}) AND ({leaf()})"]) for _ in range(6)]
    on = outcomes(spark, read(), [*conditions, *predicates], enabled=True)
    assert on == outcomes(spark, read(), [*conditions, *predicates], enabled=False)
    for (condition, keys), found in zip(conditions.items(), on):
        assert keys is None or sorted(i * 7919 % 3001 for i in found) == keys, condition  # key of id i
    hsbloom.enable(spark)
    assert files_read(read().where("key = 4")) == 1


def test_explain_shows_both_plans_the_index_and_file_counts(spark, wide):
    df = spark.read.parquet(wide)
    key = df.first().key
    printed: list[str] = []
    hsbloom.Hyperspace(spark).explain(df.where(F.col("key") == key), redirect_func=printed.append)
    text = printed[0]
    assert "Plan with hsbloom" in text and "Plan without hsbloom" in text
    assert "PrunedFileIndex" in text and "InMemoryFileIndex" in text
    assert "wide_key" in text
    kept = re.search(r"200 files -> (\d+)", text)
    assert kept and 1 <= int(kept.group(1)) <= 6, text
    assert spark.conf.get("spark.hsbloom.enabled", "false") == "false"  # explain leaves the setting as it was


def plan_shape(df) -> str:
    """The executed plan's text without expression ids and file index names: what runs, node by node."""
    text = jar.java_dataframe(df).queryExecution().executedPlan().toString()
    return re.sub(r"#\d+L?|plan_id=\d+|Location: \w+|\[[^\]]*file:[^\]]*\]", "", text)


@pytest.mark.parametrize("adaptive", ["true", "false"])
def test_scan_metrics_show_files_before_and_pruned_and_change_nothing_else(spark, wide, adaptive):
    df = spark.read.parquet(wide)
    key = df.first().key
    spark.conf.set("spark.sql.adaptive.enabled", adaptive)
    try:
        hsbloom.enable(spark)
        read, before, pruned = file_counts(df.where(F.col("key") == key))
        assert before == 200 and 1 <= read <= 6 and pruned == before - read
        # Code generation, an exchange and a scan used twice (exchange reuse): same rows, same plan shape.
        query = lambda: (  # noqa: E731
            df.where(F.col("key") == key).union(df.where(F.col("key") == key)).groupBy("key").count()
        )
        off, on = both(spark, query)
        assert on == off == [(key, 2)]
        planned = {}
        for enabled in (False, True):
            (hsbloom.enable if enabled else hsbloom.disable)(spark)
            run = query()
            run.collect()
            planned[enabled] = plan_shape(run)
        assert planned[True] == planned[False]
        assert "WholeStageCodegen" in planned[True] or "*(" in planned[True]
        hsbloom.enable(spark)
        # the second scan may reuse the first one's exchange
        assert file_counts(query()) in ((2 * read, 2 * before, 2 * pruned), (read, before, pruned))
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")


def test_no_scan_metrics_when_nothing_is_pruned_or_hsbloom_is_off(spark, wide):
    df = spark.read.parquet(wide)
    one_key_per_file = [r[1] for r in df.groupBy(F.input_file_name()).agg(F.first("key")).collect()]
    assert len(one_key_per_file) == 200
    key = one_key_per_file[0]
    hsbloom.enable(spark)
    assert file_counts(df.where(F.col("key").isin(one_key_per_file))) == (200, None, None)  # checked, none pruned
    assert file_counts(df.where(F.col("n") == 5)) == (200, None, None)  # not an indexed column
    hsbloom.disable(spark)
    assert file_counts(df.where(F.col("key") == key)) == (200, None, None)
    off, on = both(spark, lambda: df.where(F.col("key").isin(one_key_per_file)).select("n"))
    assert on == off and len(on) == 200


def test_past_the_refresh_interval_queries_keep_the_index_list_and_a_background_read_brings_new_indexes(
    spark, system_path, tmp_path
):
    """An index another process made (here: built under another system path, then moved under this one) is used
    once the list of indexes is read again; that read happens in the background, past the interval, and every
    query meanwhile answers as with hsbloom off."""
    directory = str(tmp_path / "later")
    spark.range(0, 1200, numPartitions=12).write.parquet(directory)
    lookup = lambda: spark.read.parquet(directory).where(F.col("id") == 5)  # noqa: E731
    interval = "spark.hsbloom.catalog.refreshIntervalMs"
    try:
        spark.conf.set(interval, "1")
        spark.conf.set(SYSTEM_PATH_CONF, str(tmp_path / "elsewhere"))
        create_index(spark, directory, "later_id", ["id"])
        spark.conf.set(SYSTEM_PATH_CONF, str(system_path))
        hsbloom.enable(spark)
        assert files_read(lookup()) == 12  # no index under this system path
        shutil.move(str(tmp_path / "elsewhere" / "later_id"), str(system_path / "later_id"))
        seen = []
        for _ in range(100):
            assert [r.id for r in lookup().collect()] == [5]
            seen.append(files_read(lookup()))
            if seen[-1] == 1:
                break
            time.sleep(0.1)
        assert seen[-1] == 1 and set(seen) <= {1, 12}, seen
    finally:
        spark.conf.unset(interval)
        hsbloom.disable(spark)
