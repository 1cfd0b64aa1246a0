"""Incremental refresh: build only the appended files into a new data directory that the new version reads
beside the previous version's (minus the deleted files' ids), or compact into one directory past
MAX_DATA_PARTS (docs/refresh.md)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Callable

from hsbloom import jar
from hsbloom.errors import IndexStateError
from hsbloom.index.layout import DATA_LAYOUT
from hsbloom.index.log import LogEntry, PendingChanges, State
from hsbloom.index.sources import Source, SourceFile
from hsbloom.operations import build
from hsbloom.operations.protocol import Build, IndexContext, Operation, job_group, job_group_id, next_data_version
from hsbloom.refresh.changes import SourceChanges
from hsbloom.refresh.result import RefreshResult, nothing_to_do

# An incremental refresh refers to at most this many data directories; past it, it compacts (docs/refresh.md).
MAX_DATA_PARTS = 8
# Written into a summary: files deleted since the global filters were last built whole (their values remain).
GLOBAL_FILTER_DELETED_FILES = "global_filter_deleted_files"

_STAGING = "_appended"  # inside a compacted version: the appended files' data, before it is merged in


def write_log_only(ctx: IndexContext, base: LogEntry, pending: PendingChanges | None, **changes: Any) -> LogEntry:
    """A refresh whose work is its log entries: `pending` and `changes` (entry fields) on the same data."""
    op = Operation(ctx, base, "refresh")
    begin = op.begins(State.REFRESHING, **changes)
    return op.run(begin, lambda: op.ends(begin, State.ACTIVE, pending=pending))


def check_types(name: str, old: Source, current: Source, columns: tuple[str, ...]) -> None:
    """An incremental refresh keeps old rows: their values must hash as the column's type does now."""
    for column in columns:
        before, now = old.schema.get(column), current.schema.get(column)
        if before != now:
            raise IndexStateError(
                f"cannot refresh index {name!r} incrementally: column {column!r} is now {now}, but the index holds "
                f"{before} values; run refresh_index({name!r}, mode='full')"
            )


def refresh_incremental(ctx: IndexContext, base: LogEntry, df: Any, changes: SourceChanges) -> RefreshResult:
    """Build the appended files into a new data directory that the new version reads together with the previous
    version's directories (minus the dropped file ids); or compact, when that would read too many."""
    assert base.source is not None and base.config is not None and base.data_version is not None
    config = base.config
    if changes.is_empty:
        if base.pending is None:
            return nothing_to_do(ctx.name, "incremental", base, "the source has not changed")
        write_log_only(ctx, base, None)  # the recorded changes were undone in the source
        return RefreshResult(ctx.name, "incremental", True, 0, 0, base.data_version,
                             f"index {ctx.name!r}: the source is back to what the index holds")
    check_types(ctx.name, base.source, changes.current, config.indexed_columns)
    if base.data_layout != DATA_LAYOUT:
        raise IndexStateError(
            f"cannot refresh index {ctx.name!r} incrementally: its data was written by an older hsbloom (data layout "
            f"{base.data_layout}, this one writes {DATA_LAYOUT}), which this one does not copy or read; run "
            f"refresh_index({ctx.name!r}, mode='full')"
        )

    # New ids above every id the version's directories hold (dropped ones included), so an id names one file.
    held = changes.kept + changes.deleted
    first_id = max((*(f.file_id for f in held), *base.dropped_file_ids), default=-1) + 1
    appended = tuple(
        SourceFile(first_id + i, f.path, f.size, f.mtime) for i, f in enumerate(sorted(changes.appended, key=lambda f: f.path))
    )
    source = replace(changes.current, files=tuple(sorted(changes.kept + appended, key=lambda f: f.path)))
    dropped = tuple(sorted(set(base.dropped_file_ids) | {f.file_id for f in changes.deleted}))
    num_parts = len(base.parts) + (1 if appended else 0)
    if num_parts > MAX_DATA_PARTS or len(dropped) > len(source.files):
        return _compact(ctx, base, df, changes, appended, source)
    if not appended:  # only deletes: the version reads the same directories, with more ids dropped
        summary = _incremental_summary(base, _referring_totals(ctx, base, None, changes.deleted), None,
                                       len(source.files), len(changes.deleted), base.summary["index_bytes"])
        write_log_only(ctx, base, None, source=source, dropped_file_ids=dropped, summary=summary)
        return RefreshResult(ctx.name, "incremental", True, 0, len(changes.deleted), base.data_version,
                             f"index {ctx.name!r}: dropped {len(changes.deleted)} deleted files")

    def referring(version: int, description: str) -> dict[str, Any]:
        data_path = ctx.layout.data_path(version)
        built = _build_appended(ctx, base, df, appended, data_path, description, len(source.files))
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
    work: Callable[[int, str], dict[str, Any]],
) -> RefreshResult:
    """An incremental refresh that writes a new data directory with `work(version, description)` (which returns
    the summary): a version that also reads `base`'s directories minus `dropped`, or (`dropped` None) a compacted
    version that reads the new directory alone."""
    version = next_data_version(ctx)
    data_path = ctx.layout.data_path(version)
    if dropped is None:
        parts: dict[str, Any] = {"data_parts": None, "dropped_file_ids": (), "data_layout": DATA_LAYOUT}
    else:
        parts = {"data_parts": base.parts + (version,), "dropped_file_ids": dropped}
    op = Operation(ctx, base, "refresh")
    begin = op.begins(
        State.REFRESHING, source=source, data_version=version, data_path=data_path, pending=None, **parts
    )
    description = (
        f"hsbloom: incremental refresh of index '{ctx.name}': {len(appended)} appended and "
        f"{len(changes.deleted)} deleted files ({source.describe()})"
    )
    outcome = "so the previous version stays in use"
    op.run(begin, lambda: op.ends(begin, State.ACTIVE, summary=work(version, description)), Build(description, outcome))
    done = f"built {len(appended)} appended files, dropped {len(changes.deleted)} deleted ones"
    if dropped is None:
        done += f", kept {len(changes.kept)}, compacted into data version {version}"
    else:
        done += f" (data version {version}; the index reads {len(begin.parts)} data directories)"
    return RefreshResult(ctx.name, "incremental", True, len(appended), len(changes.deleted), version,
                         f"index {ctx.name!r}: {done}")


def _build_appended(
    ctx: IndexContext,
    base: LogEntry,
    df: Any,
    appended: tuple[SourceFile, ...],
    data_path: str,
    description: str,
    num_files: int,
) -> dict[str, Any]:
    """Build the appended files into `data_path`, each global filter at the size of the previous version's (so
    that the filters of every data directory of the version line up and can be OR-ed), each file filter at the
    fpp for the new version's `num_files`; returns the summary."""
    assert base.config is not None and base.summary is not None
    config = base.config
    blocks = None
    if config.global_filter:
        sizes = {c: s["global_filter_bytes"] for c, s in base.summary["columns"].items()}
        blocks = json.loads(jar.jar_class(ctx.spark, "index_refresh").globalFilterBlocks(json.dumps(sizes)))
    built = build.build_index_data(
        ctx.spark, df, appended, list(config.indexed_columns), config.expected_num_items, config.file_fpp(num_files),
        config.global_filter, data_path, description, global_filter_blocks=blocks, granularity=config.granularity,
        shared_fpp=config.shared_fpp,
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

    def compacting(version: int, description: str) -> dict[str, Any]:
        data_path = ctx.layout.data_path(version)
        staging = f"{data_path}/{_STAGING}" if appended else None
        built = _build_appended(ctx, base, df, appended, staging, description, len(source.files)) if staging else None
        stats = json.loads(jar.jar_class(ctx.spark, "index_refresh").assemble(
            jar.java_session(ctx.spark), json.dumps([ctx.layout.data_path(v) for v in base.parts]), staging, data_path,
            json.dumps([f.file_id for f in changes.kept]), json.dumps(list(config.indexed_columns)),
            config.global_filter,
        ))
        if staging is not None:
            ctx.fs.delete_data_version(ctx.layout, version, _STAGING)
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
    distinct estimate grows by the appended files' (an upper bound: values may repeat). Its `file_fpp` is the
    largest any of its file filters was built for (the earlier files keep theirs until a full refresh)."""
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
    file_fpp, shared_fpp = base.fpps
    if appended:
        file_fpp = max(file_fpp, appended["file_fpp"])
    summary = {
        "num_files": num_files,
        "num_rows": first["num_rows"],
        "index_bytes": index_bytes,
        "file_fpp": file_fpp,
        "shared_fpp": shared_fpp,
        "columns": columns,
        GLOBAL_FILTER_DELETED_FILES: deleted_before + num_deleted if base.config.global_filter else 0,
    }
    adoption = _adoption(base.summary.get("adoption"), appended.get("adoption") if appended else None, num_deleted)
    if adoption is not None:
        summary["adoption"] = adoption
    return summary


def _adoption(base: dict[str, Any] | None, appended: dict[str, Any] | None, num_deleted: int) -> dict[str, Any] | None:
    """The adopted-file count of a version after an incremental refresh: the base's plus the appended build's,
    known only when no file was deleted (which of the deleted files were adopted is not in the log); the reasons
    for hashing are the appended build's."""
    if base is None or num_deleted:
        return None
    added = appended or {"adopted_files": 0, "hashed_files": {}}
    return {"adopted_files": base["adopted_files"] + added["adopted_files"], "hashed_files": added["hashed_files"]}
