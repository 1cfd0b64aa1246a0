"""refresh_index: versions made of several data directories (incremental refreshes that refer to earlier data,
then compact), global filters that must line up, and a full refresh of data of an older layout.

Queries are compared with hsbloom on and off after every change, as in test_refresh.py (whose helpers these
tests share).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import hsbloom
from hsbloom import BFIndexConfig, Hyperspace, jar
from build_support import build_index_data
from hsbloom.errors import IndexStateError
from hsbloom.readers.sbbf_header import header_bytes
from pruning_support import files_read
from source_support import describe
from test_refresh import (  # noqa: F401  (growing and pruning_disabled_afterwards are fixtures)
    file_table,
    global_filter,
    growing,
    held_ids,
    pruning_disabled_afterwards,
    rows,
    same_answers,
    version_rows,
)

# --- Versions made of several data directories ----------------------------------------------


@pytest.fixture
def max_data_parts(spark) -> Iterator[Callable[[int], Any]]:
    """Sets the jar's bound on the data directories an incremental refresh refers to (its test knob
    `IncrementalRefresh.maxReferredParts`), and puts it back afterwards."""
    refresh = jar.jvm(spark).hsbloom.refresh.IncrementalRefresh
    default = refresh.MaxReferredParts()
    setter = getattr(refresh, "maxReferredParts_$eq")
    yield setter
    setter(default)


def test_incremental_refreshes_refer_to_earlier_data_then_compact(spark, system_path, tmp_path, max_data_parts):
    """Incremental refreshes one after another: each version reads the earlier data directories plus one new
    one (minus the deleted files); pruning, join filters, vacuum and statistics follow; past the part limit
    a refresh compacts."""
    directory = tmp_path / "parts"
    rows(spark, 0, 4).write.parquet(str(directory))  # keys 0..199; generation g appends keys 1000 g ...
    read = lambda: spark.read.parquet(str(directory))  # noqa: E731
    probe = str(tmp_path / "probe")
    spark.range(0, 4100, 7).select(F.col("id").alias("key"), (F.col("id") * 10).alias("pid")).repartition(2) \
        .write.parquet(probe)
    hs = Hyperspace(spark)
    hs.create_index(read(), BFIndexConfig("parts", ["key", "name"], global_filter=True))
    originals = sorted(directory.glob("part-*.parquet"))

    def generation(g: int) -> Path:
        before = set(directory.glob("part-*.parquet"))
        rows(spark, 1000 * g, 1).write.mode("append").parquet(str(directory))
        (added,) = set(directory.glob("part-*.parquet")) - before
        return added

    def check(parts: int, held: list[int], gone: list[int]) -> None:
        info = hs.index("parts")
        assert len(info.data_paths) == parts
        assert info.num_files == len(list(directory.glob("part-*.parquet")))
        assert info.num_rows == read().count() == info.columns[0].num_rows
        counted: dict[str, tuple[int, int, int]] = {}
        for r in version_rows(spark, system_path, "parts").collect():
            rows_, nulls, filter_bytes = counted.get(r.column, (0, 0, 0))
            # A filter's serialization: the Parquet header of its bitset's size, then the bitset.
            counted[r.column] = (rows_ + r.num_rows, nulls + r.num_nulls,
                                 filter_bytes + len(header_bytes(r.bitset_bytes)) + r.bitset_bytes)
        assert {c.column: (c.num_rows, c.num_nulls, c.file_filter_bytes) for c in info.columns} == counted
        same_answers(spark, read(), held + gone)
        hsbloom.enable(spark)
        for key in held:
            assert files_read(read().where(f"key = {key}")) == 1, key
        for key in gone:
            assert files_read(read().where(f"key = {key}")) == 0, key
        hsbloom.disable(spark)

    first = generation(1)
    assert hs.refresh_index("parts", "incremental").appended_files == 1
    check(2, [1000, 1049, 10, 199], [2000])
    originals[0].unlink()  # keys 0..49
    generation(2)
    result = hs.refresh_index("parts", "incremental")
    assert (result.appended_files, result.deleted_files) == (1, 1)
    check(3, [2000, 1000, 60], [10, 3000])
    first.unlink()
    result = hs.refresh_index("parts", "incremental")  # deletes only: the same directories, one more id dropped
    assert (result.refreshed, result.deleted_files, result.data_version) == (True, 1, hs.index("parts").data_version)
    check(3, [2000, 60], [10, 1000])
    ids = held_ids(spark, system_path, "parts")
    assert len(ids) == 4 and file_table(spark, system_path, "parts") == {"key": ids, "name": ids}
    assert hs.index("parts").staleness.global_filter_deleted_files == 2

    # Joins: the global filter of the version is the OR of its directories' (keys of every part join).
    saved = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        joined = lambda: spark.read.parquet(probe).join(read(), "key").select("pid", "id")  # noqa: E731
        small = lambda: read().join(spark.read.parquet(probe).where("pid IN (630, 20020)"), "key")  # noqa: E731
        for query in (joined, small):
            hsbloom.enable(spark)
            on = sorted(query().collect())
            hsbloom.disable(spark)
            assert on == sorted(query().collect()) and on
        hsbloom.enable(spark)
        assert "may be a key of the global filter of parts.key" in _explain(joined())
        # The probe table is half the indexed table's bytes: the cost model would not read it twice for its keys.
        spark.conf.set("spark.hsbloom.join.costModel", "false")
        assert files_read(small()) == 2 + 2  # the two files holding keys 63 and 2002, and the probe's two
        hsbloom.disable(spark)
        assert files_read(small()) == 4 + 2
    finally:
        spark.conf.unset("spark.hsbloom.join.costModel")
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", saved)

    versions = lambda: sorted(p.name for p in (system_path / "parts").glob("v__=*"))  # noqa: E731
    assert versions() == ["v__=0", "v__=1", "v__=2"]
    hs.vacuum_index("parts")  # every directory is still read
    assert versions() == ["v__=0", "v__=1", "v__=2"]
    jar.jar_class(spark, "index_catalog").invalidateAll()
    check(3, [2000, 60], [10, 1000])

    max_data_parts(3)
    generation(3)
    result = hs.refresh_index("parts", "incremental")
    assert "compacted into data version 3" in result.message
    check(1, [3000, 2000, 60], [10, 1000])
    ids = held_ids(spark, system_path, "parts")
    assert file_table(spark, system_path, "parts") == {"key": ids, "name": ids}
    assert global_filter(spark, hs.index("parts").data_paths, "key").check(
        pa.array([3000, 2049, 50, 199], pa.int64())).all()
    hs.vacuum_index("parts")  # nothing reads the earlier directories now
    assert versions() == ["v__=3"]
    jar.jar_class(spark, "index_catalog").invalidateAll()
    check(1, [3000, 60], [10])


def test_global_filters_of_data_directories_that_do_not_line_up_are_refused(spark, tmp_path):
    """A version's global filter is the OR of its directories' filters, only when all have the recorded size."""
    rows(spark, 0, 1).write.parquet(str(tmp_path / "one"))
    df = spark.read.parquet(str(tmp_path / "one"))
    files = describe(spark, df, ["key"]).files
    jvm = spark._jvm
    paths = jvm.java.util.ArrayList()
    sizes = []
    for n, blocks in enumerate((256, 256, 512)):
        path = f"file:{tmp_path}/v__={n}"
        summary = build_index_data(spark, df, files, ["key"], None, 0.01, True, path, "test",
                                   global_filter_blocks={"key": blocks})
        paths.add(path)
        sizes.append(summary["columns"]["key"]["global_filter_bytes"])

    def load(count: int):
        parts = jvm.scala.jdk.javaapi.CollectionConverters.asScala(paths.subList(0, count)).toSeq()
        no_sealed_copy = getattr(getattr(jvm.scala, "None$"), "MODULE$")  # a plaintext filter: Scala's None
        ref = jar.jar_class(spark, "global_filter_ref")(parts, "key", "t", sizes[0], no_sealed_copy)
        return jar.jar_class(spark, "global_filter").load(ref)

    assert load(2).numBytes() == 256 * 32  # two of one size: OR-ed
    with pytest.raises(Exception, match=f"has {sizes[2]} bytes, not the {sizes[0]} its log entry records"):
        load(3)


def _explain(df) -> str:
    from hsbloom.explain import explain_string

    return explain_string(df)


def test_a_full_refresh_rebuilds_data_of_an_older_layout(spark, system_path, growing):
    """Data of an older layout (here: entries written before the layout was recorded, and a file table that holds
    whole filters, as layout 3 did): queries do not use it, an incremental refresh refuses it, a full one rebuilds."""
    hs = Hyperspace(spark)
    hs.create_index(spark.read.parquet(str(growing)), BFIndexConfig("layout", ["key"]))
    assert not hs.refresh_index("layout", "full").refreshed

    def as_an_older_hsbloom_wrote_it() -> None:
        entry_file = max((system_path / "layout" / "_hsbloom_log").glob("*.json"))
        entry = json.loads(entry_file.read_text())
        assert entry["data_layout"] == jar.jar_class(spark, "layout").DataLayout()
        del entry["data_layout"], entry["data_parts"], entry["dropped_file_ids"]
        entry_file.write_text(json.dumps(entry))
        for part in (system_path / "layout").glob("v__=*/files/*.parquet"):
            table = pq.read_table(part)
            pq.write_table(table.append_column("filter", pa.array([b""] * table.num_rows, pa.binary())), part)
            (part.parent / f".{part.name}.crc").unlink(missing_ok=True)  # Hadoop's checksum of the old bytes
        jar.jar_class(spark, "index_catalog").invalidateAll()

    assert not hs.index("layout").needs_full_refresh
    as_an_older_hsbloom_wrote_it()
    assert hs.index("layout").needs_full_refresh
    hsbloom.enable(spark)
    lookup = spark.read.parquet(str(growing)).where("key = 150")
    assert "refresh the index with mode='full'" in _explain(lookup)
    assert files_read(lookup) == len(list(growing.glob("part-*.parquet")))  # no pruning on data it cannot read
    hsbloom.disable(spark)
    rows(spark, 1000, 1).write.mode("append").parquet(str(growing))
    with pytest.raises(IndexStateError, match=r"older hsbloom .*; refresh it in full mode"):
        hs.refresh_index("layout", "incremental")
    result = hs.refresh_index("layout", "full")
    assert result.refreshed and result.data_version == 1 and not hs.index("layout").needs_full_refresh
    assert not hs.refresh_index("layout", "full").refreshed
    same_answers(spark, spark.read.parquet(str(growing)), [0, 150, 1000, 1049])
