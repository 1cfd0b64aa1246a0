"""verify_index: read everything an index holds and report each problem with the file it is in.

Queries check what they use as they load it (docs/design/integrity.md) and stop
trusting damaged bytes on their own; verify_index is the full check, for
people and scripts after an incident or before relying on an index: every log
entry, and of the version the log's latest stable entry names (ACTIVE, or
DELETED, whose data restore_index would use again) every file-table row, every
filter, every block row under `blocks/` and every global filter chunk against
its checksum, and every indexed file and column against the rows the tables
hold. It reads all of the index's data once, on the driver.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hsbloom import jar
from hsbloom.operations.protocol import IndexContext, version_directories
from hsbloom.errors import CorruptLogError, IndexNotFoundError
from hsbloom.index.layout import DATA_LAYOUT
from hsbloom.index.log import LogEntry, State
from hsbloom.operations.recovery import FORCED_MESSAGE


@dataclass(frozen=True)
class Problem:
    """One problem: the file (or directory) it is in, and what is wrong."""

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

    @property
    def healthy(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        if self.healthy:
            return f"index {self.name!r} ({self.state}): healthy ({self.log_entries} log entries, data {self.data_paths})"
        lines = [f"index {self.name!r} ({self.state}): {len(self.problems)} problem(s)"]
        lines += [f"  {p.file}: {p.problem}" for p in self.problems]
        lines.append(
            "  Recovery (docs/troubleshooting.md): refresh_index(name, mode='full') rebuilds damaged data from the "
            "source; if the latest log entry is damaged: delete_index(name, force=True), vacuum_index(name), then "
            "create_index again"
        )
        return "\n".join(lines)


def verify_index(spark: Any, name: str) -> VerifyResult:
    """Check index `name` whole; IndexNotFoundError when there is nothing of that name."""
    ctx = IndexContext.open(spark, name)
    ids = ctx.log.ids()
    if not ids and not version_directories(ctx):
        raise IndexNotFoundError(f"index {name!r} does not exist")
    log_problems: dict[int, Problem] = {}
    entries: dict[int, LogEntry] = {}
    for gap in sorted(set(range(ids[-1] + 1 if ids else 0)) - set(ids)):
        log_problems[gap] = Problem(ctx.log.entry_path(gap), "log entry is missing (the ids have a gap)")
    for entry_id in ids:
        try:
            entries[entry_id] = ctx.log.read(entry_id)
        except CorruptLogError as exc:
            log_problems[entry_id] = Problem(ctx.log.entry_path(entry_id), str(exc).split(". If no", 1)[0])
    # Damage before a forced delete was dealt with by it: the index since then does not depend on those entries.
    forced = max((i for i, e in entries.items() if (e.message or "").startswith(FORCED_MESSAGE)), default=-1)
    problems = [p for i, p in sorted(log_problems.items()) if i > forced]
    stable = next((entries[i] for i in reversed(ids) if i in entries and entries[i].state.is_stable), None)
    data_paths: tuple[str, ...] = ()
    if stable is not None and stable.state in (State.ACTIVE, State.DELETED) and stable.parts:
        data_paths = tuple(ctx.layout.data_path(v) for v in stable.parts)
        problems += _verify_data(ctx, stable, data_paths)
    return VerifyResult(
        name=name,
        state=stable.state.value if stable else None,
        log_entries=len(ids),
        data_paths=data_paths,
        problems=tuple(problems),
    )


def _verify_data(ctx: IndexContext, entry: LogEntry, data_paths: tuple[str, ...]) -> list[Problem]:
    assert entry.config is not None and entry.source is not None
    if entry.data_layout != DATA_LAYOUT:
        return [
            Problem(
                data_paths[-1],
                f"written in data layout {entry.data_layout} by an older hsbloom (this one reads {DATA_LAYOUT}); "
                "queries do not use it: refresh_index(name, mode='full') rebuilds it",
            )
        ]
    missing = [p for p in data_paths if not ctx.fs.exists(p)]
    if missing:
        return [Problem(p, "data directory is missing") for p in missing]
    found = jar.jar_class(ctx.spark, "index_verify").verify(
        jar.java_session(ctx.spark),
        json.dumps(list(data_paths)),
        json.dumps(list(entry.dropped_file_ids)),
        int((entry.summary or {}).get("num_files", 0)),
        json.dumps(list(entry.config.indexed_columns)),
        bool(entry.config.global_filter),
    )
    return [Problem(p["file"], p["problem"]) for p in json.loads(found)]
