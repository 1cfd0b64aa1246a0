"""What a refresh did, as the user sees it."""

from __future__ import annotations

from dataclasses import dataclass

from hsbloom.index.log import LogEntry


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


def nothing_to_do(name: str, mode: str, base: LogEntry, why: str) -> RefreshResult:
    assert base.data_version is not None
    return RefreshResult(name, mode, False, 0, 0, base.data_version, f"index {name!r}: nothing to refresh ({why})")
