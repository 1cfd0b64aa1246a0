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



from hsbloom.explain import files_read  # noqa: E402,F401  (tests import it from here)
