"""The dataset and healthy index the corruption, recovery, crash and race suites share (built once per run:
tests/conftest.py registers the fixtures). Cases never change them: they work on `copy`, a copy of the
healthy index's system path, and a case that appends to the source removes the file afterwards.
"""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from pyspark.sql import functions as F

import hsbloom
from hsbloom import BFIndexConfig, Hyperspace, jar
from hsbloom.settings import SYSTEM_PATH as SYSTEM_PATH_CONF

NAME = "idx"
NUM_FILES = 6
ROWS_PER_FILE = 300
# One id in every file and two absent ones: a file pruned wrongly loses a row of the answer.
LOOKUP = [f * ROWS_PER_FILE + 7 for f in range(NUM_FILES)] + [10**9, -5]


@contextmanager
def system_path_at(spark, path: Path) -> Iterator[Path]:
    previous = spark.conf.get(SYSTEM_PATH_CONF, None)
    spark.conf.set(SYSTEM_PATH_CONF, str(path))
    jar.jar_class(spark, "index_catalog").invalidateAll()
    try:
        yield path
    finally:
        spark.conf.set(SYSTEM_PATH_CONF, previous) if previous else spark.conf.unset(SYSTEM_PATH_CONF)
        jar.jar_class(spark, "index_catalog").invalidateAll()


@pytest.fixture(scope="session")
def source(spark, tmp_path_factory) -> str:
    directory = str(tmp_path_factory.mktemp("corruption") / "events")
    ids = spark.range(0, NUM_FILES * ROWS_PER_FILE, numPartitions=NUM_FILES)
    ids.select("id", F.concat(F.lit("k"), F.col("id").cast("string")).alias("s")).write.parquet(directory)
    return directory


@pytest.fixture(scope="session")
def healthy(spark, source, tmp_path_factory) -> Path:
    """The system path of a healthy index over `source` (never damaged: cases copy it), with a global filter, so
    every table an index of files can have is there to damage."""
    with system_path_at(spark, tmp_path_factory.mktemp("healthy")) as path:
        Hyperspace(spark).create_index(spark.read.parquet(source), BFIndexConfig(NAME, ["id", "s"], global_filter=True))
    return path


@pytest.fixture(scope="session")
def other(spark, source, tmp_path_factory) -> Path:
    """Another valid index over `source` (a smaller fpp, so other bytes), whose files replace the healthy one's."""
    with system_path_at(spark, tmp_path_factory.mktemp("other")) as path:
        Hyperspace(spark).create_index(spark.read.parquet(source), BFIndexConfig(NAME, ["id", "s"], fpp=0.0001, global_filter=True))
    return path


@pytest.fixture(scope="session")
def expected(spark, source) -> list:
    hsbloom.disable(spark)
    return lookup_rows(spark, source)


def lookup_rows(spark, source: str) -> list:
    df = spark.read.parquet(source)
    return sorted(tuple(r) for r in df.where(F.col("id").isin(LOOKUP) | F.col("s").isin(["k7", "nope"])).collect())


@pytest.fixture
def copy(healthy, tmp_path) -> Path:
    """A copy of the healthy system path, without Hadoop's .crc files (object stores have none)."""
    target = tmp_path / "system"
    shutil.copytree(healthy, target)
    for crc in target.rglob(".*.crc"):
        crc.unlink()
    return target
