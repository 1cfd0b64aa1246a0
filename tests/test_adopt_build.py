"""What an adopted build reads and runs (docs/design/adoption.md#the-build).

When every file is adopted the build reads footers and filters only: built over files whose data pages are
overwritten with garbage (which any scan fails to read), the index is the one a hashed build of intact copies
makes, file filters and zones byte for byte. A table mixing files with and without native filters, read in one
job (more files than the driver reads itself), gives the filters, pruning and rows of a hashed build. A build the
global filter keeps from adopting says so when the files carry native filters.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hsbloom import settings

import hsbloom
from pruning_support import scan_counts
from stored_filters import rows_with_filters
from test_adopt import COLUMNS, file_filters, local, parquet_files, predicates, rows, write_spark
from test_adopt_zones import same_rows_four_ways, zone_filters

ADOPT = settings.BUILD_ADOPT_NATIVE_FILTERS
# Adoption.OnDriverMaxFiles: up to this many files are read on the driver, more in one Spark job.
ON_DRIVER_MAX_FILES = 2


def build(spark, df, name: str, granularity: str, adopt: bool = True, global_filter: bool = False):
    hs = hsbloom.Hyperspace(spark)
    spark.conf.set(ADOPT, str(adopt).lower())
    try:
        hs.create_index(df, hsbloom.BFIndexConfig(name, COLUMNS, global_filter=global_filter, granularity=granularity))
    finally:
        spark.conf.unset(ADOPT)
    return hs.index(name)


def jobs_of(spark, name: str) -> int:
    """Spark jobs the create of index `name` ran (its job group)."""
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(f"hsbloom-create-{name}"))


def overwrite_data_pages(directory: str) -> None:
    """Every column chunk's pages overwritten with 0xFF bytes; footers and Bloom filters left as they were (and the
    local file system's checksum files removed, which would refuse the file's bytes around the pages too)."""
    for path in parquet_files(directory):
        metadata = pq.ParquetFile(path).metadata
        ranges = []
        for g in range(metadata.num_row_groups):
            for c in range(metadata.num_columns):
                chunk = metadata.row_group(g).column(c)
                start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
                ranges.append((start, chunk.total_compressed_size))
                if chunk.bloom_filter_offset is not None:
                    assert not start <= chunk.bloom_filter_offset < start + chunk.total_compressed_size
        with open(path, "r+b") as f:
            for start, length in ranges:
                f.seek(start)
                f.write(b"\xff" * length)
        (path.parent / f".{path.name}.crc").unlink(missing_ok=True)  # Hadoop's checksums would fail first


@pytest.mark.parametrize("files", [ON_DRIVER_MAX_FILES, ON_DRIVER_MAX_FILES + 3], ids=["on the driver", "in one job"])
def test_an_all_adopted_build_reads_no_data_page(spark, tmp_path, files):
    data = rows(83, 6000)
    garbled = write_spark(spark, tmp_path / "garbled", data, files=files, ndv=2000)
    intact = str(tmp_path / "intact")
    shutil.copytree(garbled, intact)
    overwrite_data_pages(garbled)
    with pytest.raises(Exception):  # a scan of the garbled files fails
        spark.read.parquet(garbled).select(*COLUMNS).collect()
    for granularity in ("file", "row_group"):
        name = f"adopt_garbled_{files}_{granularity}"
        adopted = build(spark, spark.read.parquet(garbled), name, granularity)
        assert adopted.adopted_files == files and adopted.hashed_files == {}
        # Reading the filters takes one job, or none on the driver; each table is written once.
        assert jobs_of(spark, name) == (granularity == "row_group") + 1 + (files > ON_DRIVER_MAX_FILES)
        hashed = build(spark, spark.read.parquet(intact), f"{name}_hashed", granularity, adopt=False)
        theirs = {(p.replace(intact, garbled), c): f for (p, c), f in file_filters(hashed).items()}
        assert file_filters(adopted) == theirs
        assert [(c.num_rows, c.num_nulls) for c in adopted.columns] == [(c.num_rows, c.num_nulls) for c in hashed.columns]
        if granularity == "row_group":
            mine, others = zone_filters(adopted), zone_filters(hashed)
            assert len(mine) == len(others) > 0
            for (path, group, column), row in mine.items():
                other = others[(path.replace(garbled, intact), group, column)]
                assert (row["filter"], row["zone_start"], row["zone_length"]) == \
                    (other["filter"], other["zone_start"], other["zone_length"])


@pytest.fixture(scope="module")
def mixed(spark, tmp_path_factory):
    """One directory of 10 Spark-written files with native filters on COLUMNS and 3 without, and a byte-identical
    copy. Yields (the directory, the copy, the rows)."""
    root = tmp_path_factory.mktemp("adopt_mixed")
    data = rows(89, 9000)
    directory = Path(write_spark(spark, root / "mixed", data[:7000], files=10, ndv=2000))
    plain = write_spark(spark, root / "plain", data[7000:], files=3, ndv=None)
    for path in parquet_files(plain):
        path.rename(directory / path.name)
    copy = str(root / "copy")
    shutil.copytree(directory, copy)
    yield str(directory), copy, data


@pytest.mark.parametrize("granularity", ["file", "row_group"])
def test_a_mixed_table_prunes_as_a_hashed_build(spark, mixed, granularity):
    directory, copy, data = mixed
    adopted = build(spark, spark.read.parquet(directory), f"adopt_mixed_{granularity}", granularity)
    assert adopted.adopted_files == 10 and adopted.hashed_files == {"no native filter in every row group": 3}
    hashed = build(spark, spark.read.parquet(copy), f"adopt_mixed_{granularity}_hashed", granularity, adopt=False)
    theirs = {(p.replace(copy, directory), c): f for (p, c), f in file_filters(hashed).items()}
    assert file_filters(adopted) == theirs
    stored = [row for data_path in adopted.data_paths for row in rows_with_filters(Path(local(data_path)))]
    assert len(stored) == 13 * len(COLUMNS)  # adopted and hashed rows in one table
    assert sorted(r["filter_source"] for r in stored).count("adopted") == 10 * len(COLUMNS)
    if granularity == "row_group":
        mine, others = zone_filters(adopted), zone_filters(hashed)
        assert {k: r["filter"] for k, r in mine.items()} == \
            {(p.replace(copy, directory), g, c): r["filter"] for (p, g, c), r in others.items()}
    rng = random.Random(97)
    lookups = [f"key = {rng.choice(data)['key'] or 1}" for _ in range(6)] + [f"key = {-k}" for k in range(1, 5)]
    hsbloom.enable(spark)
    try:
        for lookup in lookups:
            counts = [scan_counts(spark.read.parquet(d).where(lookup)) for d in (directory, copy)]  # one run each
            assert counts[0] == counts[1], (lookup, counts)
    finally:
        hsbloom.disable(spark)
    same_rows_four_ways(spark, [directory, copy], predicates(101, data, 30))


def test_a_global_filter_says_when_the_files_could_be_adopted(spark, tmp_path):
    data = rows(103, 3000)
    native = write_spark(spark, tmp_path / "native", data, files=2, ndv=2000)
    plain = write_spark(spark, tmp_path / "plain", data, files=2, ndv=None)
    with_filters = build(spark, spark.read.parquet(native), "adopt_global_native", "file", global_filter=True)
    [(why, count)] = with_filters.hashed_files.items()
    assert count == 2 and why.startswith("the index has a global filter") and "global_filter=False" in why, why
    without = build(spark, spark.read.parquet(plain), "adopt_global_plain", "file", global_filter=True)
    assert without.hashed_files == {"the index has a global filter": 2}
    assert with_filters.adopted_files == without.adopted_files == 0
