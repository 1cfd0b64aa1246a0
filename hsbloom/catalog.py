"""Reading what indexes exist and what they hold, from their operation logs.

Everything shown comes from each index's latest log entry (a stable entry
carries the config, the source and the build summary), so listing indexes
reads a few small files and never the index tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hsbloom.config import BFIndexConfig
from hsbloom.errors import CorruptLogError, IndexNotFoundError
from hsbloom.filesystem import HadoopFileSystem
from hsbloom.layout import IndexLayout, system_path
from hsbloom.log import LogEntry, OperationLog, State
from hsbloom.sources import Source


@dataclass(frozen=True)
class ColumnStatistics:
    """What the build measured for one indexed column, over all source files."""

    column: str
    type: str  # Spark type of the column
    num_rows: int
    num_nulls: int
    ndv: int  # estimated distinct non-null values
    file_filter_bytes: int  # total size of the per-file filters
    global_filter_bytes: int  # size of the global filter (0 without one)


@dataclass(frozen=True)
class IndexInfo:
    """One index as its latest log entry describes it."""

    name: str
    state: State
    config: BFIndexConfig
    source: Source
    data_version: int
    data_path: str
    num_files: int
    num_rows: int | None  # None until a build has completed
    index_bytes: int | None
    columns: tuple[ColumnStatistics, ...]  # empty until a build has completed
    log_id: int
    last_operation: str
    updated_ms: int  # when the latest entry was written, ms since the epoch


def _info(entry: LogEntry, layout: IndexLayout) -> IndexInfo:
    assert entry.config is not None and entry.source is not None and entry.data_version is not None
    summary = entry.summary or {}
    per_column = summary.get("columns", {})
    columns = tuple(
        ColumnStatistics(
            column=column,
            type=entry.source.schema.get(column, "?"),
            num_rows=int(stats["num_rows"]),
            num_nulls=int(stats["num_nulls"]),
            ndv=int(stats["ndv"]),
            file_filter_bytes=int(stats["file_filter_bytes"]),
            global_filter_bytes=int(stats["global_filter_bytes"]),
        )
        for column in entry.config.indexed_columns
        if (stats := per_column.get(column)) is not None
    )
    return IndexInfo(
        name=layout.name,
        state=entry.state,
        config=entry.config,
        source=entry.source,
        data_version=entry.data_version,
        data_path=layout.data_path(entry.data_version),  # from where the log is, so a moved system path works
        num_files=int(summary.get("num_files", len(entry.source.files))),
        num_rows=summary.get("num_rows"),
        index_bytes=summary.get("index_bytes"),
        columns=columns,
        log_id=entry.id,
        last_operation=entry.operation,
        updated_ms=entry.timestamp_ms,
    )


def _latest(spark: Any, layout: IndexLayout) -> LogEntry | None:
    """The latest entry; if it is still being written (unreadable), the latest stable one."""
    log = OperationLog(spark, layout.log_path)
    try:
        return log.latest()
    except CorruptLogError:
        return log.latest_stable()


def _system_path(spark: Any) -> tuple[HadoopFileSystem, str]:
    fs = HadoopFileSystem(spark)
    return fs, fs.qualify(system_path(spark))


def index_info(spark: Any, name: str) -> IndexInfo:
    """The named index, in whatever state its latest entry records; IndexNotFoundError if none."""
    fs, root = _system_path(spark)
    layout = IndexLayout(root, name)
    entry = _latest(spark, layout)
    if entry is None or entry.state == State.DOESNOTEXIST or entry.config is None:
        raise IndexNotFoundError(f"index {name!r} does not exist")
    return _info(entry, layout)


def list_indexes(spark: Any) -> list[IndexInfo]:
    """Every index under the system path whose latest entry is not DOESNOTEXIST, by name."""
    fs, root = _system_path(spark)
    found = []
    for name in fs.list_directories(root):
        try:
            layout = IndexLayout(root, name)
        except ValueError:
            continue  # not a directory hsbloom made
        entry = _latest(spark, layout)
        if entry is not None and entry.state != State.DOESNOTEXIST and entry.config is not None:
            found.append(_info(entry, layout))
    return found


INDEXES_SCHEMA = (
    "name string, indexed_columns array<string>, state string, source string, "
    "num_files long, index_size long, fpp double"
)


def indexes_dataframe(spark: Any) -> Any:
    """list_indexes as a DataFrame (index_size in bytes; null while a first build runs)."""
    rows = [
        (
            info.name,
            list(info.config.indexed_columns),
            info.state.value,
            info.source.describe(),
            info.num_files,
            info.index_bytes,
            info.config.fpp,
        )
        for info in list_indexes(spark)
    ]
    return spark.createDataFrame(rows, INDEXES_SCHEMA)
