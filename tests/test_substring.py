"""Substring filters from Python and SQL (docs/substring.md): `substring_columns` reaches the jar through the
facade and through SQL's OPTIONS, queries with LIKE, startswith, endswith and contains read only the files that may
hold a match (the same rows as hsbloom off), and DESCRIBE shows the filters. The fuzzing of patterns and values is
the jar's own (jvm/src/test/scala/hsbloom/pruning/SubstringPruningSuite.scala); here, the way in from Python."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

import hsbloom
from hsbloom.errors import InvalidConfigError
from pruning_support import files_read, outcomes

FILES = 6


@pytest.fixture(scope="module")
def logs(spark, tmp_path_factory) -> str:
    """`FILES` files of log-like rows: id, message (a trace id inside text; unicode, empty and null messages) and
    url; trace ids and urls are each in one file."""
    path = str(tmp_path_factory.mktemp("logs") / "t")
    for f in range(FILES):
        (spark.range(f * 200, (f + 1) * 200, 1, 1)
         .select("id",
                 F.expr("case when id % 50 = 7 then null when id % 50 = 8 then '' when id % 50 = 9 then "
                        "concat('données ', id, ' 日本語 🎉') else concat('request ', md5(cast(id as string)), "
                        "' failed: code E', id % 13) end").alias("message"),
                 F.concat(F.lit("/api/v2/orders/"), F.col("id")).alias("url"))
         .write.mode("append").parquet(path))
    return path


def test_substring_columns_prune_files_with_the_same_answers(spark, system_path, logs):
    hs = hsbloom.Hyperspace(spark)
    df = spark.read.parquet(logs)
    hs.create_index(df, hsbloom.BFIndexConfig("logs", ["id"], substring_columns=["message", "url"], ngram_size=4))
    trace = spark.sql("select md5(cast(321 as string)) as m").first().m
    needles = [f"message LIKE '%{trace}%'", f"contains(message, '{trace[5:20]}')", "url LIKE '/api/v2/orders/1099%'",
               "startswith(url, '/api/v2/orders/777')", "endswith(url, 'orders/1111')", "message ILIKE '%DONNÉES 59%'",
               "message LIKE '%données 509 日本語%'"]
    common = ["message LIKE '%code E1%'", "contains(url, 'orders')", "message LIKE '%e_%'"]
    predicates = needles + common + [f"({needles[0]}) OR id = 5", f"({needles[2]}) AND id > 1000"]
    off = outcomes(spark, df, predicates, enabled=False)
    assert outcomes(spark, df, predicates, enabled=True) == off
    assert all(off), off
    hsbloom.enable(spark)
    assert [files_read(df.where(p)) for p in needles] == [1, 1, 1, 1, 1, FILES, 1]  # ILIKE: no lower-case filter yet
    assert [files_read(df.where(p)) for p in common] == [FILES, FILES, FILES]
    info = hs.index("logs")
    assert info.config.substring_columns == ("message", "url") and info.config.ngram_size == 4
    assert [c.column for c in info.columns] == ["id", "ngram4(message)", "ngram4(url)"]


def test_sql_options_and_bad_values(spark, system_path, logs):
    spark.sql(f"CREATE BLOOMFILTER INDEX urls ON parquet.`{logs}` (id) OPTIONS (substring_columns = 'url', ngram_size = 5)")
    described = spark.sql("DESCRIBE BLOOMFILTER INDEX urls").first()
    assert (described.substring_columns, described.ngram_sizes) == (["url"], {"url": 5})
    df = spark.read.parquet(logs)
    hsbloom.enable(spark)
    # With 3-grams, file 0 ("/api/v2/orders/119", ".../199") would hold every gram of "/1199" too.
    assert files_read(df.where("url LIKE '%/orders/1199'")) == 1
    hs = hsbloom.Hyperspace(spark)
    with pytest.raises(InvalidConfigError, match="ngram_size must be from 2 to 8 bytes, got 12"):
        hs.create_index(df, hsbloom.BFIndexConfig("bad", ["id"], substring_columns=["url"], ngram_size=12))
    with pytest.raises(InvalidConfigError, match="substring_columns: column 'id' has type bigint"):
        hs.create_index(df, hsbloom.BFIndexConfig("bad", ["url"], substring_columns=["id"]))
    assert [r.name for r in hs.indexes().collect()] == ["urls"]
