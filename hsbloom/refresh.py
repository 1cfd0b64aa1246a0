"""Refreshing an index: following a source that changed, cheaply and without a wrong answer in between.

Three modes (docs/refresh.md):

- full: build every current file into a new data version, as create does;
- incremental: build only the appended (or changed) files into a new data
  directory, and make the new version read it together with the previous
  version's directories, minus the deleted files' ids; the global filters are
  the OR of the directories' (built at one size, so deleted values stay in them
  until a full refresh). Past `MAX_DATA_PARTS` directories it compacts instead:
  the kept rows are copied into one new directory;
- quick: compare the source and record what changed in the log
  (`PendingChanges`), writing no data. Queries read files the data does not
  hold and never list deleted ones (hybrid scan), so they stay correct.

What changed is found by file fingerprint (path, size, modification time):
for Delta from the add and remove actions of the commits since the version the
data covers (`hsbloom.IndexRefresh.deltaChanges`), otherwise (and for a Delta
log that was cleaned up) by comparing a new listing with the one the data holds.

Each refresh follows the protocol of hsbloom/actions.py: a REFRESHING entry,
the work into a new data version, then the ACTIVE entry; until that entry is
written, readers use the previous ACTIVE entry and its data.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from typing import Any, Callable

from hsbloom import jar
from hsbloom.actions import (
    IndexContext,
    begin_operation,
    build_whole_version,
    finish_operation,
    job_group,
    job_group_id,
    next_data_version,
    require_state,
    run_build,
)
from hsbloom.build import build_index_data
from hsbloom.errors import IndexStateError
from hsbloom.layout import DATA_LAYOUT
from hsbloom.log import LogEntry, PendingChanges, State, Writer, now_ms, running
from hsbloom.sources import FileFingerprint, Source, SourceFile, resolve_source

_logger = logging.getLogger(__name__)

MODES = ("full", "incremental", "quick")
# An incremental refresh refers to at most this many data directories; past it, it compacts (docs/refresh.md).
MAX_DATA_PARTS = 8
# Written into a summary: files deleted since the global filters were last built whole (their values remain).
GLOBAL_FILTER_DELETED_FILES = "global_filter_deleted_files"


@dataclass(frozen=True)
class SourceChanges:
    """How the source differs from the files an index version holds."""

    current: Source  # the source now; `files` is the full listing only when `listed`
    listed: bool
    appended: tuple[FileFingerprint, ...]  # new files, and new contents of changed ones
    deleted: tuple[SourceFile, ...]  # files of the index version that are gone or changed
    kept: tuple[SourceFile, ...]  # files of the index version that are unchanged

    @property
    def is_empty(self) -> bool:
        return not self.appended and not self.deleted


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


def refresh_index(spark: Any, name: str, mode: str = "full") -> RefreshResult:
    """Bring index `name` up to date with its source in `mode` (full, incremental or quick)."""
    if mode not in MODES:
        raise ValueError(f"refresh mode must be one of {', '.join(MODES)}; got {mode!r}")
    ctx = IndexContext.open(spark, name)
    base = require_state(ctx, {State.ACTIVE}, "refresh")
    assert base.source is not None and base.config is not None
    comparing = f"hsbloom: comparing index '{name}' with its source"
    with job_group(spark, job_group_id("refresh", name), comparing, cancel_on_failure=False):
        df = current_dataframe(spark, base.source)
        changes = compare(spark, base, df)
    stale = base.source.read_facts_difference(changes.current)
    if stale is not None and mode != "full":
        if mode == "incremental":
            _check_types(name, base.source, changes.current, base.config.indexed_columns)
        raise IndexStateError(
            f"cannot refresh index {name!r} in {mode} mode: the index no longer matches how its source is read "
            f"({stale}), so every file must be indexed again; run refresh_index({name!r}, mode='full')"
        )
    if mode == "quick":
        result = _quick(ctx, base, changes)
    elif mode == "incremental":
        result = _incremental(ctx, base, df, changes)
    else:
        result = _full(ctx, base, df, changes)
    _logger.info("hsbloom: %s", result.message)
    return result


def current_dataframe(spark: Any, source: Source) -> Any:
    """The source as it is now, read the way the index recorded it (the latest version of a Delta table)."""
    if source.table:
        return spark.table(source.table)
    reader = spark.read.format(source.format).options(**source.options)
    if source.user_schema is not None:
        from pyspark.sql.types import StructType

        reader = reader.schema(StructType.fromJson(json.loads(source.user_schema)))
    return reader.load(list(source.root_paths))


def compare(spark: Any, base: LogEntry, df: Any) -> SourceChanges:
    """The changes between the files `base`'s data holds and the source `df` reads now."""
    assert base.source is not None and base.config is not None
    columns = list(base.config.indexed_columns)
    if base.source.format == "delta":
        current, _ = resolve_source(spark, df, columns, list_files=False)
        changes = _delta_changes(spark, base.source, current)
        if changes is not None:
            return changes
    current, _ = resolve_source(spark, df, columns)
    return _listing_changes(spark, base.source, current)


def _file_keys(spark: Any, paths: list[str]) -> list[str]:
    """One key per file however its path is spelled (the keys the index matches files by)."""
    return json.loads(jar.jar_class(spark, "index_refresh").fileKeys(json.dumps(paths)))


def _listing_changes(spark: Any, old: Source, current: Source) -> SourceChanges:
    now = dict(zip(_file_keys(spark, [f.path for f in current.files]), current.files))
    kept, deleted, kept_keys = [], [], set()
    for key, f in zip(_file_keys(spark, [f.path for f in old.files]), old.files):
        listed = now.get(key)
        if listed is not None and (listed.size, listed.mtime) == (f.size, f.mtime):
            kept.append(f)
            kept_keys.add(key)
        else:
            deleted.append(f)
    appended = [FileFingerprint(f.path, f.size, f.mtime) for key, f in now.items() if key not in kept_keys]
    return SourceChanges(current, True, tuple(appended), tuple(deleted), tuple(kept))


def _delta_changes(spark: Any, old: Source, current: Source) -> SourceChanges | None:
    """From the Delta log's commits since `old.delta_version`; None when they cannot be read."""
    assert old.delta_version is not None and current.delta_version is not None
    if current.delta_version == old.delta_version:
        return SourceChanges(current, False, (), (), old.files)
    if current.delta_version < old.delta_version:
        return None  # the table was re-created: compare listings
    answer = jar.jar_class(spark, "index_refresh").deltaChanges(
        jar.java_session(spark), old.root_paths[0], old.delta_version + 1, current.delta_version
    )
    if answer is None:
        _logger.warning("hsbloom: Delta commits after version %d are gone; comparing listings", old.delta_version)
        return None
    by_key = dict(zip(_file_keys(spark, [f.path for f in old.files]), old.files))
    appended, deleted = [], []
    for touched in json.loads(answer):
        held = by_key.get(touched["key"])
        if touched["present"]:
            if held is not None and (held.size, held.mtime) == (touched["size"], touched["mtime"]):
                continue  # the same physical file (e.g. a new deletion vector): its filter still holds
            appended.append(FileFingerprint(touched["path"], touched["size"], touched["mtime"]))
        if held is not None:
            deleted.append(held)
    gone = {f.file_id for f in deleted}
    kept = tuple(f for f in old.files if f.file_id not in gone)
    return SourceChanges(current, False, tuple(appended), tuple(deleted), kept)


# --- the three modes ------------------------------------------------------------------------


def _nothing_to_do(name: str, mode: str, base: LogEntry, why: str) -> RefreshResult:
    assert base.data_version is not None
    return RefreshResult(name, mode, False, 0, 0, base.data_version, f"index {name!r}: nothing to refresh ({why})")


def _pending(changes: SourceChanges) -> PendingChanges | None:
    if changes.is_empty:
        return None
    return PendingChanges(
        checked_ms=now_ms(),
        delta_version=changes.current.delta_version,
        appended=tuple(sorted(changes.appended, key=lambda f: f.path)),
        deleted_file_ids=tuple(sorted(f.file_id for f in changes.deleted)),
    )


def _quick(ctx: IndexContext, base: LogEntry, changes: SourceChanges) -> RefreshResult:
    """Record the changes in the log; the data stays as it is."""
    pending = _pending(changes)
    recorded = base.pending
    if (pending is None and recorded is None) or (
        pending is not None
        and recorded is not None
        and (pending.appended, pending.deleted_file_ids, pending.delta_version)
        == (recorded.appended, recorded.deleted_file_ids, recorded.delta_version)
    ):
        why = "the source has not changed" if pending is None else "these changes are already recorded"
        return _nothing_to_do(ctx.name, "quick", base, why)
    _write_log_only(ctx, base, pending)
    assert base.data_version is not None
    return RefreshResult(
        ctx.name,
        "quick",
        True,
        len(changes.appended),
        len(changes.deleted),
        base.data_version,
        f"index {ctx.name!r}: recorded {len(changes.appended)} appended and {len(changes.deleted)} deleted "
        "files; queries read the appended files until an incremental or full refresh",
    )


def _write_log_only(ctx: IndexContext, base: LogEntry, pending: PendingChanges | None, **changes: Any) -> LogEntry:
    """A refresh whose work is its log entries: `pending` and `changes` (entry fields) on the same data."""
    writer = Writer.current()
    begin = base.successor(State.REFRESHING, "refresh", writer, **changes)
    with running(writer.operation_id):
        begin_operation(ctx, base, begin)
        return finish_operation(ctx, begin, begin.successor(State.ACTIVE, "refresh", writer, pending=pending), [])


def _check_types(name: str, old: Source, current: Source, columns: tuple[str, ...]) -> None:
    """An incremental refresh keeps old rows: their values must hash as the column's type does now."""
    for column in columns:
        before, now = old.schema.get(column), current.schema.get(column)
        if before != now:
            raise IndexStateError(
                f"cannot refresh index {name!r} incrementally: column {column!r} is now {now}, but the index holds "
                f"{before} values; run refresh_index({name!r}, mode='full')"
            )


def _incremental(ctx: IndexContext, base: LogEntry, df: Any, changes: SourceChanges) -> RefreshResult:
    """Build the appended files into a new data directory that the new version reads together with the previous
    version's directories (minus the dropped file ids); or compact, when that would read too many."""
    assert base.source is not None and base.config is not None and base.data_version is not None
    config = base.config
    if changes.is_empty:
        if base.pending is None:
            return _nothing_to_do(ctx.name, "incremental", base, "the source has not changed")
        _write_log_only(ctx, base, None)  # the recorded changes were undone in the source
        return RefreshResult(ctx.name, "incremental", True, 0, 0, base.data_version,
                             f"index {ctx.name!r}: the source is back to what the index holds")
    _check_types(ctx.name, base.source, changes.current, config.indexed_columns)

    # New ids above every id the version's directories hold (dropped ones included), so an id names one file.
    first_id = max((*(f.file_id for f in base.source.files), *base.dropped_file_ids), default=-1) + 1
    appended = tuple(
        SourceFile(first_id + i, f.path, f.size, f.mtime) for i, f in enumerate(sorted(changes.appended, key=lambda f: f.path))
    )
    source = replace(changes.current, files=tuple(sorted(changes.kept + appended, key=lambda f: f.path)))
    dropped = tuple(sorted(set(base.dropped_file_ids) | {f.file_id for f in changes.deleted}))
    num_parts = len(base.parts) + (1 if appended else 0)
    if base.data_layout != DATA_LAYOUT or num_parts > MAX_DATA_PARTS or len(dropped) > len(source.files):
        return _compact(ctx, base, df, changes, appended, source)
    if not appended:  # only deletes: the version reads the same directories, with more ids dropped
        summary = _incremental_summary(base, _referring_totals(ctx, base, None, changes.deleted), None,
                                       len(source.files), len(changes.deleted), base.summary["index_bytes"])
        _write_log_only(ctx, base, None, source=source, dropped_file_ids=dropped, summary=summary)
        return RefreshResult(ctx.name, "incremental", True, 0, len(changes.deleted), base.data_version,
                             f"index {ctx.name!r}: dropped {len(changes.deleted)} deleted files")

    def referring(data_path: str, description: str) -> dict[str, Any]:
        built = _build_appended(ctx, base, df, appended, data_path, description)
        return _incremental_summary(
            base, _referring_totals(ctx, base, built, changes.deleted), built, len(source.files),
            len(changes.deleted), base.summary["index_bytes"] + built["index_bytes"],
        )

    return _write_directory(ctx, base, changes, appended, source, dropped, referring)


def _write_directory(
    ctx: IndexContext,
    base: LogEntry,
    changes: SourceChanges,
    appended: tuple[SourceFile, ...],
    source: Source,
    dropped: tuple[int, ...] | None,
    work: Callable[[str, str], dict[str, Any]],
) -> RefreshResult:
    """An incremental refresh that writes a new data directory with `work(data_path, description)` (which returns
    the summary): a version that also reads `base`'s directories minus `dropped`, or (`dropped` None) a compacted
    version that reads the new directory alone."""
    version = next_data_version(ctx)
    data_path = ctx.layout.data_path(version)
    if dropped is None:
        parts: dict[str, Any] = {"data_parts": None, "dropped_file_ids": (), "data_layout": DATA_LAYOUT}
    else:
        parts = {"data_parts": base.parts + (version,), "dropped_file_ids": dropped}
    writer = Writer.current()
    begin = base.successor(
        State.REFRESHING, "refresh", writer, source=source, data_version=version, data_path=data_path, pending=None,
        **parts,
    )
    description = (
        f"hsbloom: incremental refresh of index '{ctx.name}': {len(appended)} appended and "
        f"{len(changes.deleted)} deleted files ({source.describe()})"
    )
    with running(writer.operation_id):
        begin_operation(ctx, base, begin)
        outcome = "so the previous version stays in use"
        summary = run_build(ctx, begin, base, description, outcome, lambda: work(data_path, description))
        finish_operation(ctx, begin, begin.successor(State.ACTIVE, "refresh", writer, summary=summary), [data_path])
    done = f"built {len(appended)} appended files, dropped {len(changes.deleted)} deleted ones"
    if dropped is None:
        done += f", kept {len(changes.kept)}, compacted into data version {version}"
    else:
        done += f" (data version {version}; the index reads {len(begin.parts)} data directories)"
    return RefreshResult(ctx.name, "incremental", True, len(appended), len(changes.deleted), version,
                         f"index {ctx.name!r}: {done}")


def _build_appended(
    ctx: IndexContext, base: LogEntry, df: Any, appended: tuple[SourceFile, ...], data_path: str, description: str
) -> dict[str, Any]:
    """Build the appended files into `data_path`, each global filter at the size of the previous version's (so
    that the filters of every data directory of the version line up and can be OR-ed); returns the summary."""
    assert base.config is not None and base.summary is not None
    config = base.config
    blocks = None
    if config.global_filter:
        sizes = {c: s["global_filter_bytes"] for c, s in base.summary["columns"].items()}
        blocks = json.loads(jar.jar_class(ctx.spark, "index_refresh").globalFilterBlocks(json.dumps(sizes)))
    built = build_index_data(
        ctx.spark, df, appended, list(config.indexed_columns), config.expected_num_items, config.fpp,
        config.global_filter, data_path, description, global_filter_blocks=blocks,
    )
    for column in config.indexed_columns if config.global_filter else ():
        want = base.summary["columns"][column]["global_filter_bytes"]
        got = built["columns"][column]["global_filter_bytes"]
        if want != got:
            raise IndexStateError(f"the appended files' global filter of column {column!r} has {got} bytes, the "
                                  f"index's has {want}: they cannot be combined; run a full refresh")
    return built


def _referring_totals(
    ctx: IndexContext, base: LogEntry, built: dict[str, Any] | None, deleted: tuple[SourceFile, ...]
) -> dict[str, dict[str, int]]:
    """Per column, the counts of a version that reads `base`'s directories and the appended files' one, without
    the deleted files: the base summary's, plus the appended build's, minus the deleted files' rows."""
    assert base.config is not None and base.summary is not None
    columns = list(base.config.indexed_columns)
    removed: dict[str, dict[str, int]] = {}
    if deleted:
        paths = [ctx.layout.data_path(v) for v in base.parts]
        with job_group(ctx.spark, job_group_id("refresh", ctx.name), "hsbloom: counting the deleted files' rows",
                       cancel_on_failure=False):
            removed = json.loads(jar.jar_class(ctx.spark, "index_refresh").fileStatistics(
                jar.java_session(ctx.spark), json.dumps(paths), json.dumps(sorted(f.file_id for f in deleted)),
                json.dumps(columns),
            ))
    totals = {}
    for column in columns:
        old = base.summary["columns"][column]
        add = built["columns"][column] if built else {}
        gone = removed.get(column, {})
        totals[column] = {
            "num_rows": old["num_rows"] + add.get("num_rows", 0) - gone.get("num_rows", 0),
            "num_nulls": old["num_nulls"] + add.get("num_nulls", 0) - gone.get("num_nulls", 0),
            "ndv_sum": old["ndv"] + add.get("ndv", 0) - gone.get("ndv_sum", 0),  # used without global filters
            "file_filter_bytes": old["file_filter_bytes"] + add.get("file_filter_bytes", 0)
            - gone.get("file_filter_bytes", 0),
        }
    return totals


def _compact(
    ctx: IndexContext, base: LogEntry, df: Any, changes: SourceChanges, appended: tuple[SourceFile, ...],
    source: Source,
) -> RefreshResult:
    """An incremental refresh that writes one data directory holding the whole version: the kept rows of the
    previous version's directories copied, the appended files built, the global filters OR-ed."""
    assert base.config is not None
    config = base.config

    def compacting(data_path: str, description: str) -> dict[str, Any]:
        staging = f"{data_path}/_appended" if appended else None
        built = _build_appended(ctx, base, df, appended, staging, description) if staging else None
        stats = json.loads(jar.jar_class(ctx.spark, "index_refresh").assemble(
            jar.java_session(ctx.spark), json.dumps([ctx.layout.data_path(v) for v in base.parts]), staging, data_path,
            json.dumps([f.file_id for f in changes.kept]), json.dumps(list(config.indexed_columns)),
            config.global_filter,
        ))
        if staging is not None:
            ctx.fs.delete(staging)
        return _incremental_summary(base, stats, built, len(source.files), len(changes.deleted), ctx.fs.size(data_path))

    return _write_directory(ctx, base, changes, appended, source, None, compacting)


def _incremental_summary(
    base: LogEntry,
    stats: dict[str, dict[str, int]],
    appended: dict[str, Any] | None,
    num_files: int,
    num_deleted: int,
    index_bytes: int,
) -> dict[str, Any]:
    """The new version's summary from `stats`, per column the totals over the version's file rows
    (`num_rows`, `num_nulls`, `ndv_sum`, `file_filter_bytes`); the global filters keep their size, and their
    distinct estimate grows by the appended files' (an upper bound: values may repeat)."""
    assert base.config is not None and base.summary is not None
    columns = {}
    for column in base.config.indexed_columns:
        now = stats.get(column, {"num_rows": 0, "num_nulls": 0, "ndv_sum": 0, "file_filter_bytes": 0})
        old = base.summary["columns"][column]
        if base.config.global_filter:
            added = appended["columns"][column]["ndv"] if appended else 0
            ndv = min(old["ndv"] + added, now["num_rows"] - now["num_nulls"])
        else:
            ndv = now["ndv_sum"]
        columns[column] = {
            "num_rows": now["num_rows"],
            "num_nulls": now["num_nulls"],
            "ndv": ndv,
            "file_filter_bytes": now["file_filter_bytes"],
            "global_filter_bytes": old["global_filter_bytes"],
        }
    first = columns[base.config.indexed_columns[0]]
    deleted_before = base.summary.get(GLOBAL_FILTER_DELETED_FILES, 0)
    return {
        "num_files": num_files,
        "num_rows": first["num_rows"],
        "index_bytes": index_bytes,
        "columns": columns,
        GLOBAL_FILTER_DELETED_FILES: deleted_before + num_deleted if base.config.global_filter else 0,
    }


def _full(ctx: IndexContext, base: LogEntry, df: Any, changes: SourceChanges) -> RefreshResult:
    assert base.config is not None and base.summary is not None
    if (
        changes.is_empty
        and base.source.read_facts_difference(changes.current) is None
        and base.pending is None
        and not base.summary.get(GLOBAL_FILTER_DELETED_FILES)
        and base.data_layout == DATA_LAYOUT
    ):
        return _nothing_to_do(
            ctx.name, "full", base, "the source and how it is read have not changed, and the global filters are exact"
        )
    if changes.listed:
        source = changes.current
    else:
        source, _ = resolve_source(ctx.spark, df, list(base.config.indexed_columns))
    version = next_data_version(ctx)
    data_path = ctx.layout.data_path(version)
    writer = Writer.current()
    begin = base.successor(
        State.REFRESHING, "refresh", writer, source=source, data_version=version, data_path=data_path,
        data_parts=None, dropped_file_ids=(), data_layout=DATA_LAYOUT, pending=None,
    )
    with running(writer.operation_id):
        begin_operation(ctx, base, begin)
        summary = build_whole_version(ctx, begin, base, df, "so the previous version stays in use")
        finish_operation(ctx, begin, begin.successor(State.ACTIVE, "refresh", writer, summary=summary), [data_path])
    return RefreshResult(
        ctx.name, "full", True, len(changes.appended), len(changes.deleted), version,
        f"index {ctx.name!r}: rebuilt from {len(source.files)} files (data version {version})",
    )
