"""The pruned files handed to other readers: a pyarrow dataset, a DuckDB relation, a Polars lazy frame.

Each reader still applies the whole filter to the files kept; these only choose the files (and, for pyarrow, the
row groups of zoned files). Every answer works, none kept included (the lookup of an absent key, where a Bloom
index helps most): the reader gets an empty table with the table's schema, where DuckDB's `read_parquet` and
Polars' `scan_parquet` refuse an empty list of files. A Delta snapshot with deletion vectors is refused: plain
Parquet readers would return the deleted rows.
"""

from __future__ import annotations

from typing import Any

from hsbloom.errors import InvalidArgumentError
from hsbloom.readers.index import Pruned
from hsbloom.readers.storage import resolve


def _checked(pruned: Pruned) -> Pruned:
    if not isinstance(pruned, Pruned):
        raise InvalidArgumentError(f"expected the result of Index.prune, got {type(pruned).__name__}")
    if pruned.deletion_vectors:
        raise InvalidArgumentError(
            "the Delta snapshot has deletion vectors, which plain Parquet readers do not apply: read the table "
            "with a Delta reader, or purge the deletion vectors (REORG TABLE ... APPLY (PURGE))"
        )
    return pruned


def file_list(pruned: Pruned) -> list:
    """The files to read, as paths or URIs DuckDB's `read_parquet` and Polars' `scan_parquet` take (whole: a list
    of files cannot name row groups, so zoned files are read whole). It may be empty, which both refuse: use
    `duckdb_relation` and `polars_frame`, which answer with no rows then."""
    return list(_checked(pruned).files)


def duckdb_relation(pruned: Pruned, connection: Any = None):
    """A DuckDB relation of the kept files (hive partitions read from their paths), or an empty one with the
    table's schema when none is kept; filter it (`.filter(...)`) or query it by name in SQL."""
    import duckdb

    _checked(pruned)
    connection = connection if connection is not None else duckdb.default_connection()
    if not pruned.files:
        return connection.from_arrow(_empty(pruned))
    return connection.read_parquet(list(pruned.files), hive_partitioning=True, union_by_name=True)


def polars_frame(pruned: Pruned):
    """A Polars LazyFrame of the kept files (hive partitions read from their paths), or an empty one with the
    table's schema when none is kept; filter it and `.collect()`."""
    import polars as pl

    _checked(pruned)
    if not pruned.files:
        return pl.from_arrow(_empty(pruned)).lazy()
    return pl.scan_parquet(list(pruned.files), hive_partitioning=True)


def _empty(pruned: Pruned):
    """No rows, with the table's schema as its listing read it (a table with no file has no columns)."""
    import pyarrow as pa

    return (pruned.schema if pruned.schema is not None else pa.schema([])).empty_table()


def pyarrow_dataset(pruned: Pruned, **options: Any):
    """A `pyarrow.dataset.Dataset` of only the kept files, hive partitions relative to the table's root."""
    import pyarrow.dataset as ds

    _checked(pruned)
    base = None
    if pruned.root is not None:
        _, base = resolve(pruned.root) if pruned.filesystem is None else (None, pruned.root)
        base = base.rstrip("/")
    options.setdefault("partitioning", "hive")
    if not pruned.files and pruned.schema is not None:
        options.setdefault("schema", pruned.schema)  # no file to infer it from
    dataset = ds.dataset(list(pruned.files), format="parquet", filesystem=pruned.filesystem, partition_base_dir=base,
                         **options)
    if not pruned.row_groups:
        return dataset
    # Files of which only some row groups may match (zones): their fragments read only those row groups (the
    # fragment keeps its partition expression).
    wanted = {_fragment_path(p, pruned): groups for p, groups in pruned.row_groups.items()}
    fragments = [f.subset(row_group_ids=wanted[f.path]) if f.path in wanted else f for f in dataset.get_fragments()]
    return ds.FileSystemDataset(fragments, dataset.schema, dataset.format, dataset.filesystem)


def _fragment_path(path: str, pruned: Pruned) -> str:
    """A kept file's path as its dataset fragment spells it (the path in its filesystem)."""
    return path if pruned.filesystem is not None else resolve(path)[1]
