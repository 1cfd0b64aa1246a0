"""The source files an index version holds. Since data layout 4 a log entry does not list them (its size would grow
with the number of files): every file of the listing a data directory was built from has rows in that directory's
file table, so the jar reads the listing from the version's tables (`hsbloom.index.SourceListing`, column projection,
checksums checked) and the entry keeps only their number, `summary.num_files` (docs/design/log.md). Entries of older
layouts still carry the list, and it is read from there."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from hsbloom import jar
from hsbloom.index.layout import DATA_LAYOUT
from hsbloom.index.log import LogEntry
from hsbloom.index.sources import SourceFile


@dataclass(frozen=True)
class HeldFiles:
    """A version's source files, sorted by path, and whether the listing is known to be whole."""

    files: tuple[SourceFile, ...]
    # False when rows of the tables failed their checksums or parts could not be read, or the number of files read
    # is not the one the log records: files may be missing from `files`.
    complete: bool


def held_files(spark: Any, entry: LogEntry, data_paths: Sequence[str]) -> HeldFiles:
    """The source files the version `entry` (whose data directories are `data_paths`) holds."""
    assert entry.source is not None
    if entry.data_layout != DATA_LAYOUT:
        return HeldFiles(tuple(sorted(entry.source.files, key=lambda f: f.path)), True)
    answer = json.loads(
        jar.jar_class(spark, "source_listing").read(
            jar.java_session(spark), json.dumps(list(data_paths)), json.dumps(list(entry.dropped_file_ids))
        )
    )
    files = tuple(
        SourceFile(file_id=int(f["id"]), path=str(f["path"]), size=int(f["size"]), mtime=int(f["mtime"]))
        for f in answer["files"]
    )
    expected = (entry.summary or {}).get("num_files")
    return HeldFiles(files, answer["damaged"] == 0 and expected == len(files))
