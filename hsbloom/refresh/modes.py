"""refresh_index: the three modes, and the full and quick ones (incremental has its own module)."""

from __future__ import annotations

import logging
from typing import Any

from hsbloom.errors import IndexStateError
from hsbloom.index.catalog import found_damage
from hsbloom.index.layout import DATA_LAYOUT
from hsbloom.index.listing import held_files
from hsbloom.index.log import LogEntry, State
from hsbloom.index.sources import SourceFile, refuse_encrypted, resolve_source
from hsbloom.operations.create import run_whole_build
from hsbloom.operations.protocol import IndexContext, Operation, job_group, job_group_id, next_data_version, require_state
from hsbloom.refresh.changes import SourceChanges, compare, current_dataframe, pending_changes
from hsbloom.refresh.incremental import GLOBAL_FILTER_DELETED_FILES, check_types, refresh_incremental, write_log_only
from hsbloom.refresh.result import RefreshResult, nothing_to_do

_logger = logging.getLogger(__name__)

MODES = ("full", "incremental", "quick")


def refresh_index(spark: Any, name: str, mode: str = "full") -> RefreshResult:
    """Bring index `name` up to date with its source in `mode` (full, incremental or quick)."""
    if mode not in MODES:
        raise ValueError(f"refresh mode must be one of {', '.join(MODES)}; got {mode!r}")
    ctx = IndexContext.open(spark, name)
    base = require_state(ctx, {State.ACTIVE}, "refresh")
    assert base.source is not None and base.config is not None
    # Every refresh, even one with nothing to do: the table may have been closed since the last.
    ctx.fs.give_source_permission(ctx.layout.index_path, base.source.root_paths)
    comparing = f"hsbloom: comparing index '{name}' with its source"
    with job_group(spark, job_group_id("refresh", name), comparing, cancel_on_failure=False):
        df = current_dataframe(spark, base.source)
        changes = compare(spark, base, _held(ctx, base, mode), df)
        if mode != "full":  # these keep the files the index holds; a full refresh checks every file (_full)
            refuse_encrypted(spark, df, base.config.indexed_columns, changes.appended, f"refresh index {name!r}")
    stale = base.source.read_facts_difference(changes.current)
    if stale is not None and mode != "full":
        if mode == "incremental":
            check_types(name, base.source, changes.current, base.config.indexed_columns)
        raise IndexStateError(
            f"cannot refresh index {name!r} in {mode} mode: the index no longer matches how its source is read "
            f"({stale}), so every file must be indexed again; run refresh_index({name!r}, mode='full')"
        )
    if mode == "quick":
        result = _quick(ctx, base, changes)
    elif mode == "incremental":
        result = refresh_incremental(ctx, base, df, changes)
    else:
        result = _full(ctx, base, df, changes)
    _logger.info("hsbloom: %s", result.message)
    return result


def _held(ctx: IndexContext, base: LogEntry, mode: str) -> tuple[SourceFile, ...]:
    """The files `base` holds. A full refresh rebuilds from the source alone, so damaged tables only make it count
    every file as appended; the other modes keep the data and need the whole listing."""
    data_paths = tuple(ctx.layout.data_path(v) for v in base.parts)
    try:
        held = held_files(ctx.spark, base, data_paths)
    except Exception as e:  # noqa: BLE001  (py4j errors of any kind: tables gone, unreadable, an older layout)
        if mode == "full":
            return ()
        raise IndexStateError(
            f"cannot refresh index {ctx.name!r} in {mode} mode: the files its data holds cannot be read from its file "
            f"tables ({e}); run refresh_index({ctx.name!r}, mode='full')"
        ) from e
    if not held.complete and mode != "full":
        raise IndexStateError(
            f"cannot refresh index {ctx.name!r} in {mode} mode: its file tables are damaged or incomplete (they hold "
            f"{len(held.files)} intact source files, the log says {(base.summary or {}).get('num_files')}; "
            f"hs.verify_index({ctx.name!r}) names the files); run refresh_index({ctx.name!r}, mode='full')"
        )
    return held.files


def _quick(ctx: IndexContext, base: LogEntry, changes: SourceChanges) -> RefreshResult:
    """Record the changes in the log; the data stays as it is."""
    pending = pending_changes(changes)
    recorded = base.pending
    if (pending is None and recorded is None) or (
        pending is not None
        and recorded is not None
        and (pending.appended, pending.deleted_file_ids, pending.delta_version)
        == (recorded.appended, recorded.deleted_file_ids, recorded.delta_version)
    ):
        why = "the source has not changed" if pending is None else "these changes are already recorded"
        return nothing_to_do(ctx.name, "quick", base, why)
    write_log_only(ctx, base, pending)
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


def _full(ctx: IndexContext, base: LogEntry, df: Any, changes: SourceChanges) -> RefreshResult:
    assert base.config is not None and base.summary is not None
    # Damage this process found (queries' checksums, verify_index) is repaired by rebuilding (docs/design/integrity.md).
    damage = found_damage(ctx.spark, tuple(ctx.layout.data_path(v) for v in base.parts))
    if (
        not damage
        and changes.is_empty
        and base.source.read_facts_difference(changes.current) is None
        and base.pending is None
        and not base.summary.get(GLOBAL_FILTER_DELETED_FILES)
        and base.data_layout == DATA_LAYOUT
    ):
        return nothing_to_do(
            ctx.name, "full", base, "the source and how it is read have not changed, and the global filters are exact"
        )
    if changes.listed:
        source = changes.current
    else:
        source, _ = resolve_source(ctx.spark, df, list(base.config.indexed_columns))
    checking = f"hsbloom: checking the source of index '{ctx.name}' for encrypted columns"
    with job_group(ctx.spark, job_group_id("refresh", ctx.name), checking, cancel_on_failure=False):
        refuse_encrypted(ctx.spark, df, base.config.indexed_columns, source.files, f"refresh index {ctx.name!r}")
    version = next_data_version(ctx)
    data_path = ctx.layout.data_path(version)
    op = Operation(ctx, base, "refresh")
    begin = op.begins(
        State.REFRESHING, source=source, data_version=version, data_path=data_path,
        data_parts=None, dropped_file_ids=(), data_layout=DATA_LAYOUT, pending=None,
    )
    run_whole_build(op, begin, df, "so the previous version stays in use")
    return RefreshResult(
        ctx.name, "full", True, len(changes.appended), len(changes.deleted), version,
        f"index {ctx.name!r}: rebuilt from {len(source.files)} files (data version {version})"
        + (f"; the previous data was damaged ({len(damage)} problem(s), first: {damage[0]})" if damage else ""),
    )
