"""create_index: the first version of an index, built from every file of its source."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hsbloom.config import BFIndexConfig
from hsbloom.errors import IndexExistsError, InvalidConfigError
from hsbloom.index.layout import DATA_LAYOUT
from hsbloom.index.log import LogEntry, State
from hsbloom.index.sources import refuse_encrypted, resolve_source
from hsbloom.index.syspath import check_apart_from_source, check_writable
from hsbloom.operations import build
from hsbloom.operations.protocol import (
    Build,
    IndexContext,
    Operation,
    job_group,
    job_group_id,
    latest_settled,
    next_data_version,
)


# Formats whose files are Parquet, so a zone (a row group) exists.
ZONE_FORMATS = ("parquet", "delta")


def create_index(spark: Any, df: Any, config: BFIndexConfig) -> LogEntry:
    """Build the index `config` describes over the files `df` scans; returns its ACTIVE entry."""
    if not isinstance(config, BFIndexConfig):
        raise TypeError(f"create_index needs a BFIndexConfig, got {type(config).__name__}")
    ctx = IndexContext.open(spark, config.index_name)
    listing = f"hsbloom: listing and checking the source of index '{ctx.name}'"
    with job_group(spark, job_group_id("create", ctx.name), listing, cancel_on_failure=False):
        source, columns = resolve_source(spark, df, config.indexed_columns)  # Delta runs jobs to list
        refuse_encrypted(spark, df, columns, source.files, f"create index {ctx.name!r}")
    config = replace(config, indexed_columns=columns)
    if config.zones and source.format not in ZONE_FORMATS:
        raise InvalidConfigError(
            f"granularity='row_group' needs a Parquet or Delta source (zones are the row groups of Parquet files); "
            f"this source is {source.format}: use granularity='file'"
        )
    check_apart_from_source(ctx.layout.system_path, source.root_paths, ctx.fs.qualify)
    check_writable(spark, ctx.layout.system_path)
    base = latest_settled(ctx)
    if base is not None and base.state in (State.ACTIVE, State.DELETED):
        advice = (
            "delete_index and vacuum_index it first, or choose another name"
            if base.state == State.ACTIVE
            else "restore_index it, or vacuum_index it to free the name"
        )
        raise IndexExistsError(f"index {ctx.name!r} already exists ({base.state.value}); {advice}")

    ctx.fs.give_source_permission(ctx.layout.index_path, source.root_paths)  # before the first log entry
    version = next_data_version(ctx)
    op = Operation(ctx, base, "create")
    begin = LogEntry(
        id=base.id + 1 if base else 0,
        state=State.CREATING,
        operation="create",
        writer=op.writer,
        config=config,
        source=source,
        data_version=version,
        data_path=ctx.layout.data_path(version),
        data_layout=DATA_LAYOUT,
    )
    return run_whole_build(op, begin, df, "so it was not created")


def run_whole_build(op: Operation, begin: LogEntry, df: Any, outcome: str) -> LogEntry:
    """Run `op` from `begin`, building every file of `begin.source` into `begin.data_path` (create, full refresh);
    returns the ACTIVE entry that completes it."""
    assert begin.config is not None and begin.source is not None and begin.data_path is not None
    config, source = begin.config, begin.source
    description = (
        f"hsbloom: {begin.operation} index '{op.ctx.name}' on {', '.join(config.indexed_columns)} over "
        f"{len(source.files)} files ({source.describe()})"
    )

    def work() -> LogEntry:
        summary = build.build_index_data(
            op.ctx.spark, df, source.files, list(config.indexed_columns), config.expected_num_items,
            config.file_fpp(len(source.files)), config.global_filter, begin.data_path, description,
            granularity=config.granularity, shared_fpp=config.shared_fpp,
        )
        return op.ends(begin, State.ACTIVE, summary=summary)

    return op.run(begin, work, Build(description, outcome))
