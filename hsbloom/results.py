"""What hsbloom's operations answer, as Python values: made from the rows the jar's statements return.

The jar owns every stored thing (docs/design/architecture.md); these classes only give its answers the shape the
Python API has always had (`hs.index(name)` is an `IndexInfo`, `hs.verify_index(name)` a `VerifyResult`, ...).
The rows' columns are defined once, in the jar (`IndexInfo.schema`, `RefreshResult.schema`, `VerifyResult.schema`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from hsbloom.config import BFIndexConfig


class State(str, Enum):
    """The state an index's latest log entry records (docs/indexes.md#states-and-the-operations)."""

    CREATING = "CREATING"
    ACTIVE = "ACTIVE"
    DELETING = "DELETING"
    DELETED = "DELETED"
    RESTORING = "RESTORING"
    VACUUMING = "VACUUMING"
    REFRESHING = "REFRESHING"
    DOESNOTEXIST = "DOESNOTEXIST"

    @property
    def is_stable(self) -> bool:
        return self in (State.ACTIVE, State.DELETED, State.DOESNOTEXIST)


@dataclass(frozen=True)
class Source:
    """What an index is built from and how it is read (the files are listed by the index data, not here)."""

    format: str  # parquet, orc, csv, json or delta
    root_paths: tuple[str, ...]
    # The read options that decide values, verbatim; others are only compared, by an HMAC keyed by `options_salt`,
    # and options that may hold secrets are never recorded (docs/security.md).
    options: dict[str, str]
    table: str | None  # catalog table name, when read as a table
    delta_version: int | None  # Delta snapshot version read
    schema: dict[str, str]  # column name -> Spark type, of the DataFrame as given
    partition_columns: tuple[str, ...]
    read_facts: dict[str, str] = field(default_factory=dict, repr=False)
    user_schema: str | None = field(default=None, repr=False)
    hashed_options: dict[str, str] = field(default_factory=dict, repr=False)
    options_salt: str | None = field(default=None, repr=False)
    files: tuple[Any, ...] = field(default=(), repr=False)  # always empty: the index data lists the files

    def describe(self) -> str:
        """A one-line description for listings, e.g. 'delta default.events @ version 3'."""
        where = self.table or ", ".join(self.root_paths)
        version = f" @ version {self.delta_version}" if self.delta_version is not None else ""
        return f"{self.format} {where}{version}"


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
    """How far the index data is behind its source, as far as the log knows (a quick refresh records changes)."""

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
    """One index as its latest log entry describes it (`DESCRIBE BLOOMFILTER INDEX`)."""

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
    # Damage found in the JVM ("<file>: <problem>"): an unreadable log entry, index files whose checksums failed
    # when queries or verify_index read them (their source files are read). Empty: none seen.
    damage: tuple[str, ...] = ()
    # Source files whose filters the build took from their own Parquet Bloom filters instead of hashing
    # (docs/indexes.md#adopted-native-filters); None when unknown. `adopted_files(name)` lists them.
    adopted_files: int | None = None
    hashed_files: dict[str, int] = field(default_factory=dict)  # per reason, files hashed instead of adopted
    # True when the version was written by an older hsbloom in a layout planning no longer reads: queries do not
    # use it (and warn) until refresh_index(name, mode="full") rebuilds it.
    needs_full_refresh: bool = False
    # Each substring column's n (docs/substring.md#choosing-n): as given, or as create chose it from the column's data.
    ngram_sizes: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_row(cls, r: Any) -> "IndexInfo":
        """The info of one row of `DESCRIBE BLOOMFILTER INDEX` (the jar's `IndexInfo.schema`)."""
        config = BFIndexConfig(
            r.name, list(r.indexed_columns), r.expected_num_items, r.fpp, r.global_filter, r.granularity,
            list(r.substring_columns), _common_size(r.ngram_sizes), r.substring_case_insensitive,
        )
        source = Source(
            format=r.source_format,
            root_paths=tuple(r.source_root_paths),
            options=dict(r.source_options),
            table=r.source_table,
            delta_version=r.source_delta_version,
            schema={c.name: c.type for c in r.source_schema},
            partition_columns=tuple(r.source_partition_columns),
            read_facts=dict(r.source_read_facts),
            user_schema=r.source_user_schema,
            hashed_options=dict(r.source_hashed_options),
            options_salt=r.source_options_salt,
        )
        return cls(
            name=r.name,
            state=State(r.state),
            config=config,
            source=source,
            data_version=r.data_version,
            data_path=r.data_path,
            data_paths=tuple(r.data_paths),
            num_files=r.num_files,
            file_fpp=r.file_fpp,
            shared_fpp=r.shared_fpp,
            num_rows=r.num_rows,
            index_bytes=r.index_bytes,
            columns=tuple(ColumnStatistics(*c) for c in r.columns),
            log_id=r.log_id,
            last_operation=r.last_operation,
            updated_ms=r.updated_ms,
            staleness=Staleness(
                r.appended_files_not_indexed, r.deleted_files_still_indexed, r.global_filter_deleted_files,
                r.data_delta_version, r.checked_delta_version, r.checked_ms,
            ),
            damage=tuple(r.damage),
            adopted_files=r.adopted_files,
            hashed_files=dict(r.hashed_files),
            needs_full_refresh=r.needs_full_refresh,
            ngram_sizes=dict(r.ngram_sizes),
        )


def _common_size(sizes: Any) -> int | None:
    """The one n of every substring column, as `BFIndexConfig.ngram_size` holds it; None when they differ (or none)."""
    distinct = set(dict(sizes).values())
    return distinct.pop() if len(distinct) == 1 else None


@dataclass(frozen=True)
class RefreshResult:
    """What a refresh did; `refreshed` is False when there was nothing to do (and nothing was written)."""

    name: str
    mode: str
    refreshed: bool
    appended_files: int
    deleted_files: int
    data_version: int  # the data version queries use now
    message: str

    @classmethod
    def from_row(cls, r: Any) -> "RefreshResult":
        return cls(r.name, r.mode, r.refreshed, r.appended_files, r.deleted_files, r.data_version, r.message)


@dataclass(frozen=True)
class Problem:
    """One problem verify_index found: the file (or directory) it is in, and what is wrong."""

    file: str
    problem: str


@dataclass(frozen=True)
class VerifyResult:
    """What verify_index found. `healthy` is True when `problems` is empty."""

    name: str
    state: str | None  # the state of the latest readable stable log entry (None: none is readable)
    log_entries: int  # entries in the log
    data_paths: tuple[str, ...]  # the data directories that were read whole
    problems: tuple[Problem, ...]
    # What was not read, and why (the sealed zone table in a session without keys); never a problem.
    not_checked: tuple[str, ...] = ()

    @property
    def healthy(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        unread = "".join(f"; not checked: {n}" for n in self.not_checked)
        if self.healthy:
            return (f"index {self.name!r} ({self.state}): healthy ({self.log_entries} log entries, "
                    f"data {self.data_paths}){unread}")
        lines = [f"index {self.name!r} ({self.state}): {len(self.problems)} problem(s){unread}"]
        lines += [f"  {p.file}: {p.problem}" for p in self.problems]
        lines.append(
            "  Recovery (docs/troubleshooting.md): refresh_index(name, mode='full') rebuilds damaged data from the "
            "source; if the latest log entry is damaged: delete_index(name, force=True), vacuum_index(name), then "
            "create_index again"
        )
        return "\n".join(lines)

    @classmethod
    def from_row(cls, r: Any) -> "VerifyResult":
        return cls(r.name, r.state, r.log_entries, tuple(r.data_paths), tuple(Problem(p.file, p.problem) for p in r.problems),
                   tuple(r.not_checked))
