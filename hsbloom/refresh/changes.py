"""How a source changed since an index version: by the Delta log's add and remove actions when it can, else
by comparing a new listing with the one the version holds; files match by fingerprint (path, size, mtime)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from hsbloom import jar
from hsbloom.index.log import LogEntry, PendingChanges, now_ms
from hsbloom.index.sources import FileFingerprint, Source, SourceFile, resolve_source

_logger = logging.getLogger(__name__)


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


def current_dataframe(spark: Any, source: Source) -> Any:
    """The source as it is now, read the way the index recorded it (the latest version of a Delta table)."""
    if source.table:
        return spark.table(source.table)
    reader = spark.read.format(source.format).options(**source.options)
    if source.user_schema is not None:
        from pyspark.sql.types import StructType

        reader = reader.schema(StructType.fromJson(json.loads(source.user_schema)))
    return reader.load(list(source.root_paths))


def compare(spark: Any, base: LogEntry, held: tuple[SourceFile, ...], df: Any) -> SourceChanges:
    """The changes between `held`, the files `base`'s data holds (hsbloom.index.listing), and the source `df`
    reads now."""
    assert base.source is not None and base.config is not None
    columns = list(base.config.indexed_columns)
    if base.source.format == "delta":
        current, _ = resolve_source(spark, df, columns, list_files=False)
        changes = delta_changes(spark, base.source, held, current)
        if changes is not None:
            return changes
    current, _ = resolve_source(spark, df, columns)
    return listing_changes(spark, held, current)


def file_keys(spark: Any, paths: list[str]) -> list[str]:
    """One key per file however its path is spelled (the keys the index matches files by)."""
    return json.loads(jar.jar_class(spark, "index_refresh").fileKeys(json.dumps(paths)))


def listing_changes(spark: Any, held: tuple[SourceFile, ...], current: Source) -> SourceChanges:
    now = dict(zip(file_keys(spark, [f.path for f in current.files]), current.files))
    kept, deleted, kept_keys = [], [], set()
    for key, f in zip(file_keys(spark, [f.path for f in held]), held):
        listed = now.get(key)
        if listed is not None and (listed.size, listed.mtime) == (f.size, f.mtime):
            kept.append(f)
            kept_keys.add(key)
        else:
            deleted.append(f)
    appended = [FileFingerprint(f.path, f.size, f.mtime) for key, f in now.items() if key not in kept_keys]
    return SourceChanges(current, True, tuple(appended), tuple(deleted), tuple(kept))


def delta_changes(spark: Any, old: Source, held: tuple[SourceFile, ...], current: Source) -> SourceChanges | None:
    """From the Delta log's commits since `old.delta_version` (`held`: the files the version holds); None when they
    cannot be read."""
    assert old.delta_version is not None and current.delta_version is not None
    if current.delta_version == old.delta_version:
        return SourceChanges(current, False, (), (), held)
    if current.delta_version < old.delta_version:
        return None  # the table was re-created: compare listings
    answer = jar.jar_class(spark, "index_refresh").deltaChanges(
        jar.java_session(spark), old.root_paths[0], old.delta_version + 1, current.delta_version
    )
    if answer is None:
        _logger.warning("hsbloom: Delta commits after version %d are gone; comparing listings", old.delta_version)
        return None
    by_key = dict(zip(file_keys(spark, [f.path for f in held]), held))
    appended, deleted = [], []
    for touched in json.loads(answer):
        indexed = by_key.get(touched["key"])
        if touched["present"]:
            if indexed is not None and (indexed.size, indexed.mtime) == (touched["size"], touched["mtime"]):
                continue  # the same physical file (e.g. a new deletion vector): its filter still holds
            appended.append(FileFingerprint(touched["path"], touched["size"], touched["mtime"]))
        if indexed is not None:
            deleted.append(indexed)
    gone = {f.file_id for f in deleted}
    kept = tuple(f for f in held if f.file_id not in gone)
    return SourceChanges(current, False, tuple(appended), tuple(deleted), kept)


def pending_changes(changes: SourceChanges) -> PendingChanges | None:
    if changes.is_empty:
        return None
    return PendingChanges(
        checked_ms=now_ms(),
        delta_version=changes.current.delta_version,
        appended=tuple(sorted(changes.appended, key=lambda f: f.path)),
        deleted_file_ids=tuple(sorted(f.file_id for f in changes.deleted)),
    )
