"""The pruned files handed to other readers: a pyarrow dataset, and file lists for DuckDB and Polars.

Each reader still applies the whole filter to the files kept; these only choose the files (and, for pyarrow, the
row groups of zoned files). A Delta snapshot with deletion vectors is refused: plain Parquet readers would return
the deleted rows.
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
    of files cannot name row groups, so zoned files are read whole)."""
    return list(_checked(pruned).files)


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
