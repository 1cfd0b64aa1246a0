"""The source as it is now: its files with size and modification time, and the indexed columns' types.

A Parquet directory is listed through pyarrow's filesystem (hive partitions, hidden `_`/`.` files left out, as
Spark lists it); a Delta table's snapshot through the `deltalake` package (the current version, or the one
asked for). The staleness rule is the Spark rule's: a file is probed only when the index holds it with the same
size and modification time; every other file is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from hsbloom.readers.log import UnusableIndex, Version
from hsbloom.readers.storage import file_key, resolve


@dataclass(frozen=True)
class SourceFile:
    """A file to read: `path` as the readers take it, its key (None: never matched), size, mtime in ms."""

    path: str
    key: Optional[str]
    size: int
    mtime: int


@dataclass(frozen=True)
class Listing:
    files: tuple
    schema: pa.Schema
    filesystem: pafs.FileSystem
    # Delta: the snapshot's version, and whether any file has a deletion vector (raw Parquet readers ignore them).
    delta_version: Optional[int] = None
    deletion_vectors: bool = False
    # Delta: the snapshot's delta.columnMapping.mode (None: not set), read with the listing, not in a second replay.
    column_mapping: Optional[str] = None


def _spark_type(t: pa.DataType) -> Optional[str]:
    """The Spark type name of an Arrow type as the readers see a column (None: no hashed type)."""
    names = {pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int", pa.int64(): "bigint",
             pa.float32(): "float", pa.float64(): "double", pa.date32(): "date"}
    if t in names:
        return names[t]
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "binary"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t) and t.unit == "us":
        return "timestamp" if t.tz is not None else "timestamp_ntz"
    return None


def list_parquet(root: str, filesystem: Any = None) -> Listing:
    fs, path = resolve(root, filesystem)
    dataset = ds.dataset(path, format="parquet", partitioning="hive", filesystem=fs)
    paths = list(dataset.files)
    infos = fs.get_file_info(paths)
    local = isinstance(fs, pafs.LocalFileSystem)
    files = tuple(
        SourceFile(p, file_key(("file:" + p) if local else _uri(root, p)), i.size, i.mtime_ns // 1_000_000)
        for p, i in zip(paths, infos)
    )
    return Listing(files, dataset.schema, fs)


def _uri(root: str, path: str) -> str:
    scheme = root.split("://", 1)[0] if "://" in root else "file"
    return f"{scheme}://{path}"


def list_delta(root: str, version: Optional[int] = None, storage_options: Optional[dict] = None) -> Listing:
    try:
        import deltalake
    except ImportError as exc:  # pragma: no cover - the readers extra installs it
        raise UnusableIndex("reading a Delta table needs the deltalake package (pip install 'hsbloom[readers]')") from exc
    table = deltalake.DeltaTable(root, version=version, storage_options=storage_options)
    actions = pa.table(table.get_add_actions(flatten=True))
    base = table.table_uri.rstrip("/") + "/"
    fs, _ = resolve(base)
    local = isinstance(fs, pafs.LocalFileSystem)
    files = []
    for path, size, mtime in zip(actions["path"].to_pylist(), actions["size_bytes"].to_pylist(),
                                 actions["modification_time"].to_pylist()):
        uri = base + unquote(path) if "://" not in path else unquote(path)
        readable = uri[len("file://"):] if local and uri.startswith("file://") else uri
        files.append(SourceFile(readable, file_key(uri), size, mtime))
    features = table.protocol().reader_features or []
    deletion_vectors = "deletionVectors" in features and any(
        batch.num_rows for batch in pa.RecordBatchReader.from_stream(table.deletion_vectors()))
    mapping = table.metadata().configuration.get("delta.columnMapping.mode")
    return Listing(tuple(files), pa.schema(table.schema().to_arrow()), fs, table.version(), deletion_vectors, mapping)


# Read facts whose values mean Spark read the values a plain Parquet reader reads (docs/design/readers.md): no
# calendar rebase (EXCEPTION fails where CORRECTED and LEGACY differ), no INT96 shift, columns matched by name.
_SAME_VALUES_WHEN = {
    "spark.sql.parquet.datetimeRebaseModeInRead": ("CORRECTED", "EXCEPTION"),
    "spark.sql.parquet.int96RebaseModeInRead": ("CORRECTED", "EXCEPTION"),
    "spark.sql.parquet.int96TimestampConversion": ("false",),
    "spark.sql.parquet.fieldId.read.enabled": ("false",),
    "spark.sql.parquet.fieldId.read.ignoreMissing": ("false", "true"),
}


def facts_difference(version: Version, listing: Listing, fmt: str, mapping_mode: Optional[str] = None) -> Optional[str]:
    """Why the index's recorded read facts are not honoured by a plain read of the files now, or None."""
    if version.options or version.hashed_options:
        return "the index was built with read options, which this reader does not apply"
    if version.user_schema is not None:
        return "the index was built over a user-given schema, which this reader does not apply"
    for key, value in version.read_facts.items():
        if key.startswith("column.") or value in _SAME_VALUES_WHEN.get(key, ()):
            continue
        if key in ("spark.sql.caseSensitive", "delta.columnMapping.mode"):
            continue  # column names are compared exactly below; the mapping mode is checked below
        return f"the index depends on Spark's setting {key}={value}, which this reader does not apply"
    if fmt == "delta" and version.read_facts.get("delta.columnMapping.mode", "NoMapping") != "NoMapping":
        return "the Delta table uses column mapping when the index was built, which this reader does not resolve"
    if fmt == "delta" and mapping_mode not in (None, "none"):
        return f"the Delta table uses column mapping mode {mapping_mode} now, which this reader does not resolve"
    return None


def column_difference(version: Version, listing: Listing, column: str) -> Optional[str]:
    """Why `column` is not read as it was indexed (name, type, partition), or None."""
    fact = version.read_facts.get(f"column.{column}")
    if fact is None:
        return f"the index records no read facts for column {column}"
    fields = dict(part.split("=", 1) for part in fact.split(" ") if "=" in part)
    if fields.get("name") != column or fields.get("partition") != "false":
        return f"column {column} was read as {fact!r}"
    if "physical" in fields and fields["physical"] != column:
        return f"column {column} is stored as {fields['physical']!r}"
    recorded = version.schema.get(column)
    if column not in listing.schema.names:
        return f"column {column} is not in the table now"
    now = _spark_type(listing.schema.field(column).type)
    if recorded is None or fields.get("type") != recorded or now != recorded:
        return f"column {column} was indexed as {recorded} and is {now or listing.schema.field(column).type} now"
    return None
