"""The source as it is now: its files with size and modification time, and the indexed columns' types.

A Parquet directory is listed with sizes and mtimes (locally by scandir, elsewhere in one recursive call of
pyarrow's filesystem; hive partitions, hidden `_`/`.` names left out as Spark leaves them out); a Delta table's
snapshot through the `deltalake` package (the current version, or the one asked for). The staleness rule is the Spark rule's: a file
is probed only when the index holds it with the same size and modification time; every other file is kept.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple, Optional
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hsbloom.readers.log import UnusableIndex, Version
from hsbloom.readers.storage import file_key, resolve


class SourceFile(NamedTuple):
    """A file to read: `path` as the readers take it, its key (None: never matched), size, mtime in ms (a named
    tuple: a listing makes one per file per query)."""

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
    # Parquet: the (path, size, mtime) the schema was read from and the partition columns, so that the next
    # listing of the root reads the schema again only when they changed.
    schema_from: Optional[tuple] = None
    partitions: tuple = ()
    # Parquet: the (path, scheme) listed, and its files by path, for the next listing of the same root.
    listed: Optional[tuple] = None
    by_path: dict = field(default_factory=dict, repr=False, compare=False)


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


def list_parquet(root: str, filesystem: Any = None, previous: Optional[Listing] = None) -> Listing:
    """The files of a Parquet directory now with their sizes and mtimes (locally one `scandir` a directory and one
    `stat` a visible file; elsewhere one recursive listing call; no pyarrow dataset discovery). Hidden names are left out as Spark leaves them out.
    `previous` (an earlier listing of the same root) saves work, never a check: a path it listed with the same
    size and mtime is taken from it as it is (key and all); the schema, the first file's (by path) plus the hive
    partition columns, is read again only when that file or the partition columns changed. Like Spark, a table
    with no partition directories is the files in its root (Spark reads no other subdirectory)."""
    fs, path = resolve(root, filesystem)
    base = path.rstrip("/") or path
    local = _local_entries(base) if isinstance(fs, pafs.LocalFileSystem) else None
    entries, prefix = local if local is not None else _filesystem_entries(fs, base)
    scheme = "file" if isinstance(fs, pafs.LocalFileSystem) else (root.split("://", 1)[0] if "://" in root else "file")
    seen = previous.by_path if previous is not None and previous.listed == (base, scheme) else {}
    files, directories = [], {}
    for p, size, mtime_ns in entries:
        known = size is not None and mtime_ns is not None  # else never matched to the index: read
        mtime = mtime_ns // 1_000_000 if known else -1
        before = seen.get(p)
        if before is None or not known or before.size != size or before.mtime != mtime:
            before = SourceFile(p, _key(scheme, p) if known else None, size if known else -1, mtime)
        files.append(before)
        directories[p.rpartition("/")[0]] = None
    partitions = _partition_fields(d[len(prefix):] if d.startswith(prefix) else "" for d in directories)
    if not partitions:  # as Spark reads a table without partition directories: the files in its root only
        files = [f for f in files if f.path.rpartition("/")[0] + "/" == prefix or f.path == base]
    files.sort(key=_path)
    schema_from = (files[0].path, files[0].size, files[0].mtime) if files else None
    if previous is not None and previous.schema_from == schema_from and previous.partitions == partitions:
        schema = previous.schema
    else:
        schema = pq.read_schema(files[0].path, filesystem=fs) if files else pa.schema([])
        schema = pa.schema(list(schema) + [f for f in partitions if f.name not in schema.names])
    return Listing(tuple(files), schema, fs, schema_from=schema_from, partitions=partitions, listed=(base, scheme),
                   by_path={f.path: f for f in files})


def _local_entries(base: str) -> Optional[tuple]:
    """(path, size, mtime_ns) of the visible files below a local directory, and the prefix of their paths; None
    when `base` is not a directory. One `scandir` a directory and one `stat` a visible file: hidden names
    (Spark's `.crc` side files, `_SUCCESS`, ...) are dropped by name before any stat, which halves the cost of a
    Spark-written table's listing against pyarrow's selector (that stats every entry)."""
    try:
        listed = os.scandir(base)
    except NotADirectoryError:  # the root is one file: the general path lists it
        return None
    entries, pending = [], []
    while listed is not None:
        with listed:
            for entry in listed:
                name = entry.name
                if _hidden_name(name):
                    continue
                try:
                    if entry.is_dir():
                        pending.append(entry.path)
                    elif not name.endswith(_COPYING):
                        st = entry.stat()
                        if stat.S_ISREG(st.st_mode):
                            entries.append((entry.path, st.st_size, st.st_mtime_ns))
                except FileNotFoundError:  # deleted since its directory was read: not a file of now
                    continue
        listed = None
        while pending and listed is None:
            listed = _scandir_if_there(pending.pop())
    return entries, base + "/"


def _scandir_if_there(path: str) -> Any:
    """A directory's listing, or None when it was removed or replaced by a file since its parent was read."""
    try:
        return os.scandir(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _filesystem_entries(fs: pafs.FileSystem, base: str) -> tuple:
    """(path, size, mtime_ns) of the visible files below `base` in any pyarrow filesystem (one recursive listing
    call), or of `base` itself when it is one file; and the prefix of their paths."""
    try:
        infos = fs.get_file_info(pafs.FileSelector(base, allow_not_found=False, recursive=True))
        prefix = base + "/"
    except NotADirectoryError:  # the root is one file
        infos, prefix = [fs.get_file_info(base)], base.rsplit("/", 1)[0] + "/"
    entries = []
    for info in infos:
        if info.type != pafs.FileType.File:
            continue
        p = info.path
        if _hidden(p[len(prefix):] if p.startswith(prefix) else p.rsplit("/", 1)[-1]):
            continue
        entries.append((p, info.size, info.mtime_ns))
    return entries, prefix


def _path(f: SourceFile) -> str:
    return f.path


_COPYING = "._COPYING_"  # the suffix of a file being copied, which Spark does not read


def _hidden_name(name: str) -> bool:
    """Whether Spark leaves out a file or directory by its name: starting with `.`, or with `_` and holding no `=`
    (`_k=v` is a partition directory)."""
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


def _hidden(relative: str) -> bool:
    """Whether Spark leaves out a file at `relative` (below the root): a hidden component (`_hidden_name`), or a
    file name ending with `._COPYING_` (being copied)."""
    if "/_" not in "/" + relative and "/." not in "/" + relative and not relative.endswith(_COPYING):
        return False
    return relative.endswith(_COPYING) or any(_hidden_name(part) for part in relative.split("/"))


def _key(scheme: str, path: str) -> Optional[str]:
    """The file key of a listed path."""
    return file_key(f"file:{path}" if scheme == "file" else f"{scheme}://{path}")


_INT32 = re.compile(r"-?[0-9]+")
_NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def _partition_fields(directories: Iterable[str]) -> tuple:
    """The hive partition columns of the listed directories (`k=v` components, URI-decoded), typed as pyarrow's
    hive discovery types them: int32 when every value is one, else string."""
    values: dict = {}
    for directory in directories:
        for part in directory.split("/") if directory else ():
            name, eq, value = part.partition("=")
            if eq and name:
                values.setdefault(unquote(name), set()).add(unquote(value))
    fields = []
    for name, seen in values.items():
        seen.discard(_NULL_PARTITION)
        ints = all(_INT32.fullmatch(v) and -(1 << 31) <= int(v) < (1 << 31) for v in seen)
        fields.append(pa.field(name, pa.null() if not seen else pa.int32() if ints else pa.string()))
    return tuple(fields)


def is_delta(root: str, filesystem: Any = None) -> bool:
    """Whether `root` is a Delta table (it has a `_delta_log` directory): for an index whose log cannot say, so
    that a Delta table is read as its snapshot, never as every Parquet file in its directory."""
    fs, path = resolve(root, filesystem)
    return fs.get_file_info(path.rstrip("/") + "/_delta_log").type == pafs.FileType.Directory


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
