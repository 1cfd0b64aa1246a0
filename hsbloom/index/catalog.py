"""Reading what indexes exist and what they hold, from their operation logs.

Everything shown comes from each index's latest log entry (a stable entry
carries the config, the source and the build summary), so listing indexes
reads a few small files and never the index tables.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hsbloom import jar
from hsbloom.config import BFIndexConfig
from hsbloom.errors import CorruptLogError, IndexNotFoundError
from hsbloom.index.filesystem import HadoopFileSystem
from hsbloom.index.layout import DATA_LAYOUT, IndexLayout
from hsbloom.index.log import LogEntry, OperationLog, State
from hsbloom.index.sources import Source
from hsbloom.index.syspath import qualified_system_path


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
class Staleness:
    """How far the index data is behind its source, as far as the log knows.

    The log learns of source changes only at a refresh: a quick refresh records
    them without building, so run one to bring these figures up to date.
    """

    appended_files_not_indexed: int  # recorded by a quick refresh; every query reads them
    deleted_files_still_indexed: int  # recorded by a quick refresh; not listed, so not read
    global_filter_deleted_files: int  # deleted since the global filters were built whole: their values remain
    data_delta_version: int | None  # the Delta version the data covers
    checked_delta_version: int | None  # the Delta version last compared (a quick refresh), else the data's
    checked_ms: int | None  # when a quick refresh last compared the source (None: not since the data was built)

    @property
    def is_current(self) -> bool:
        """Whether the data held every file of the source the last time it was compared, with exact global filters."""
        return not (
            self.appended_files_not_indexed or self.deleted_files_still_indexed or self.global_filter_deleted_files
        )


@dataclass(frozen=True)
class IndexInfo:
    """One index as its latest log entry describes it."""

    name: str
    state: State
    config: BFIndexConfig
    source: Source
    data_version: int
    data_path: str  # the newest data directory of the version
    data_paths: tuple[str, ...]  # every data directory the version reads, oldest first (docs/refresh.md)
    num_files: int
    # The false-positive probability of each file's filter (sized from the file count unless the config fixes
    # it) and of the global filter and zones (docs/indexes.md#false-positive-rate).
    file_fpp: float
    shared_fpp: float
    num_rows: int | None  # None until a build has completed
    index_bytes: int | None
    columns: tuple[ColumnStatistics, ...]  # empty until a build has completed
    log_id: int
    last_operation: str
    updated_ms: int  # when the latest entry was written, ms since the epoch
    staleness: Staleness
    # Damage found in this process ("<file>: <problem>"): an unreadable log entry, index files whose checksums
    # failed when queries or verify_index read them (their source files are read). Empty: none seen.
    damage: tuple[str, ...] = ()
    # Source files whose filters the build took from their own Parquet Bloom filters instead of hashing
    # (docs/indexes.md#adopted-native-filters); None when unknown (a version built before adoption, or after an
    # incremental refresh that dropped deleted files). `adopted_files(name)` lists them.
    adopted_files: int | None = None
    # Per reason, how many files the latest build hashed instead of adopting.
    hashed_files: dict[str, int] = field(default_factory=dict)
    # True when the version was written by an older hsbloom in a layout planning no longer reads: queries do
    # not use it (and warn) until refresh_index(name, mode="full") rebuilds it.
    needs_full_refresh: bool = False


def _info(spark: Any, entry: LogEntry, layout: IndexLayout, log_damage: tuple[str, ...] = ()) -> IndexInfo:
    assert entry.config is not None and entry.source is not None and entry.data_version is not None
    summary = entry.summary or {}
    file_fpp, shared_fpp = entry.fpps
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
        data_paths=tuple(layout.data_path(v) for v in entry.parts),
        num_files=int(summary.get("num_files", len(entry.source.files))),
        file_fpp=file_fpp,
        shared_fpp=shared_fpp,
        num_rows=summary.get("num_rows"),
        index_bytes=summary.get("index_bytes"),
        columns=columns,
        log_id=entry.id,
        last_operation=entry.operation,
        updated_ms=entry.timestamp_ms,
        staleness=_staleness(entry),
        damage=log_damage + found_damage(spark, tuple(layout.data_path(v) for v in entry.parts)),
        adopted_files=summary.get("adoption", {}).get("adopted_files"),
        hashed_files=dict(summary.get("adoption", {}).get("hashed_files", {})),
        needs_full_refresh=entry.data_layout != DATA_LAYOUT,
    )


def adopted_file_paths(spark: Any, name: str) -> list[str]:
    """The source files (as listed) of index `name`'s current version whose filters were adopted from their
    own Parquet Bloom filters: read from the version's file tables (`filter_source`), sorted."""
    fs, root = _system_path(spark)
    layout = IndexLayout(root, name)
    info = index_info(spark, name)
    entry, _ = _latest(spark, layout)
    if info.num_rows is None or entry is None:
        return []
    tables = [f"{path}/files" for path in info.data_paths]
    rows = spark.read.parquet(*tables)
    if "filter_source" not in rows.columns:
        return []  # written before adoption: every filter was hashed
    # A version's older directories may hold files since deleted (their ids are dropped).
    adopted = rows.where("filter_source = 'adopted'").select("file_id", "file_path").distinct().collect()
    dropped = set(entry.dropped_file_ids)
    return sorted({r.file_path for r in adopted if r.file_id not in dropped})


def found_damage(spark: Any, data_paths: tuple[str, ...]) -> tuple[str, ...]:
    """What this JVM found damaged in `data_paths` (hsbloom.IndexDamage: by queries' checksum checks and by
    verify_index), as "<file>: <problem>"."""
    if not data_paths:
        return ()
    found = json.loads(jar.jar_class(spark, "index_damage").json(json.dumps(list(data_paths))))
    return tuple(f"{file}: {problem}" for file, problem in found.items())


def _staleness(entry: LogEntry) -> Staleness:
    assert entry.source is not None
    pending = entry.pending
    return Staleness(
        appended_files_not_indexed=len(pending.appended) if pending else 0,
        deleted_files_still_indexed=len(pending.deleted_file_ids) if pending else 0,
        global_filter_deleted_files=int((entry.summary or {}).get("global_filter_deleted_files", 0)),
        data_delta_version=entry.source.delta_version,
        checked_delta_version=pending.delta_version if pending else entry.source.delta_version,
        checked_ms=pending.checked_ms if pending else None,
    )


def _latest(spark: Any, layout: IndexLayout) -> tuple[LogEntry | None, tuple[str, ...]]:
    """The latest entry; if it is unreadable (being written, or damaged), the latest stable one; and the
    problems met on the way. (None, problems) when no stable entry is readable."""
    log = OperationLog(spark, layout.log_path)
    try:
        return log.latest(), ()
    except CorruptLogError as exc:
        problem = str(exc)
    try:
        return log.latest_stable(), (problem,)
    except CorruptLogError as exc:
        return None, (problem, str(exc))


def _system_path(spark: Any) -> tuple[HadoopFileSystem, str]:
    fs = HadoopFileSystem(spark)
    return fs, qualified_system_path(spark, fs)


def index_info(spark: Any, name: str) -> IndexInfo:
    """The named index, in whatever state its latest entry records; IndexNotFoundError if none."""
    fs, root = _system_path(spark)
    layout = IndexLayout(root, name)
    entry, log_damage = _latest(spark, layout)
    if entry is None and log_damage:
        raise CorruptLogError(log_damage[-1])
    if entry is None or entry.state == State.DOESNOTEXIST or entry.config is None:
        raise IndexNotFoundError(f"index {name!r} does not exist")
    return _info(spark, entry, layout, log_damage)


def list_indexes(spark: Any) -> list[IndexInfo]:
    """Every index under the system path whose latest entry is not DOESNOTEXIST, by name."""
    return [info for info in _listing(spark) if isinstance(info, IndexInfo)]


def _listing(spark: Any) -> list[IndexInfo | tuple[str, tuple[str, ...]]]:
    """list_indexes, with (name, problems) for indexes of which no stable log entry is readable."""
    fs, root = _system_path(spark)
    found: list[IndexInfo | tuple[str, tuple[str, ...]]] = []
    for name in fs.list_directories(root):
        try:
            layout = IndexLayout(root, name)
        except ValueError:
            continue  # not a directory hsbloom made
        entry, log_damage = _latest(spark, layout)
        if entry is None and log_damage:
            found.append((name, log_damage))
        elif entry is not None and entry.state != State.DOESNOTEXIST and entry.config is not None:
            found.append(_info(spark, entry, layout, log_damage))
    return found


INDEXES_SCHEMA = (
    "name string, indexed_columns array<string>, state string, source string, "
    "num_files long, index_size long, fpp double, damage string"
)


def indexes_dataframe(spark: Any) -> Any:
    """list_indexes as a DataFrame (index_size in bytes; null while a first build runs; damage: what this
    process found damaged, else null). An index none of whose stable log entries is readable is listed as
    UNREADABLE, with its damage."""
    rows = [
        (
            info.name,
            list(info.config.indexed_columns),
            info.state.value,
            info.source.describe(),
            info.num_files,
            info.index_bytes,
            info.file_fpp,
            "; ".join(info.damage) or None,
        )
        if isinstance(info, IndexInfo)
        else (info[0], [], "UNREADABLE", None, None, None, None, "; ".join(info[1]))
        for info in _listing(spark)
    ]
    return spark.createDataFrame(rows, INDEXES_SCHEMA)
