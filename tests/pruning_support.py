"""Helpers for the file-pruning tests: creating indexes and measuring what a scan read."""

from __future__ import annotations

from typing import Any, Sequence

import hsbloom


def create_index(
    spark: Any,
    directory: str,
    name: str,
    columns: Sequence[str],
    fpp: float = 0.01,
    fmt: str = "parquet",
    df: Any = None,
) -> str:
    """Index `columns` of the files at `directory` (or of `df`) through the public API; returns the data path."""
    hs = hsbloom.Hyperspace(spark)
    source = df if df is not None else spark.read.format(fmt).load(directory)
    hs.create_index(source, hsbloom.BFIndexConfig(name, list(columns), fpp=fpp, global_filter=False))
    return hs.index(name).data_path


def files_read(df: Any) -> int:
    """Runs `df` and returns its file scans' own "number of files read" metric, summed.

    It runs a new DataFrame over the same plan: Spark resets a plan's metrics
    when the same DataFrame runs again, and the file count is set only once.
    """
    fresh = df.select("*")
    fresh.collect()
    return int(df.sparkSession._jvm.hsbloom.PruningExplain.filesRead(fresh._jdf))
