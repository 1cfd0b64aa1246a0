"""Where indexes live: under the system path, by default `_hsbloom` in the session's warehouse (the jar's `Layout`),
whichever client creates them; each index a directory of its name, holding its log and its data versions."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import functions as F

from hsbloom import BFIndexConfig, Hyperspace
from hsbloom.settings import SYSTEM_PATH


def _layout(index_dir: Path) -> set[str]:
    return {p.name for p in index_dir.iterdir()}


def test_indexes_live_under_the_warehouse_by_default_and_trailing_slashes_do_not_matter(spark, tmp_path):
    data = str(tmp_path / "data")
    spark.range(0, 100, numPartitions=2).withColumn("s", F.col("id").cast("string")).write.parquet(data)
    configured = spark.conf.get(SYSTEM_PATH, None)
    hs = Hyperspace(spark)
    try:
        spark.conf.unset(SYSTEM_PATH)
        warehouse = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))
        hs.create_index(spark.read.parquet(data), BFIndexConfig("where_by_default", ["id"]))
        index_dir = warehouse / "_hsbloom" / "where_by_default"
        assert _layout(index_dir) == {"_hsbloom_log", "v__=0"}
        assert hs.index("where_by_default").data_path == f"file:{index_dir}/v__=0"
        hs.delete_index("where_by_default")
        hs.vacuum_index("where_by_default")

        spark.conf.set(SYSTEM_PATH, f"{tmp_path}/indexes//")
        hs.create_index(spark.read.parquet(data), BFIndexConfig("where_configured", ["id"]))
        assert _layout(tmp_path / "indexes" / "where_configured") == {"_hsbloom_log", "v__=0"}
        assert sorted(p.name for p in (tmp_path / "indexes" / "where_configured" / "_hsbloom_log").iterdir()) == [
            f"{0:020d}.json", f"{1:020d}.json"
        ]
    finally:
        if configured:
            spark.conf.set(SYSTEM_PATH, configured)
        else:
            spark.conf.unset(SYSTEM_PATH)
