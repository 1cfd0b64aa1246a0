"""Typed reads of values that come from storage (a log entry), checked before anything uses them.

Whoever can write the system path can write a log entry, so an entry is input, not trusted state: a version
that is a string (`"0/../../victim"`) would become a path to delete, a negative or huge number a directory name
or a size, a format name a class Spark loads. Every value the log parser takes from an entry passes through one
of these functions, which return it with its Python type or raise ValueError naming the field and what it must
be; the parser turns that into CorruptLogError (docs/security.md, docs/design/log.md).

The bounds are the jar's (`hsbloom.index.Layout`; tests/test_log_safety.py compares them), so an entry one side
accepts the other side accepts too.
"""

from __future__ import annotations

import math
from typing import Any

MAX_LONG = 2**63 - 1
# Data versions name directories `v__=N`; the next version is the largest used + 1, which must still fit an int.
MAX_DATA_VERSION = 2**31 - 2
# File ids number the source files of one index version (Spark holds them as ints).
MAX_FILE_ID = 2**31 - 1
# The data directories one version may read (incremental refreshes refer to earlier ones; hsbloom compacts
# long before this).
MAX_DATA_PARTS = 1024
# A log entry larger than this is damage, not an entry hsbloom wrote (an entry lists no source files since data
# layout 4; the largest part is a quick refresh's pending appended files). Readers stop one byte past it.
MAX_LOG_ENTRY_BYTES = 8 * 1024 * 1024
# Source formats an index can be built from: a format name is also a class name to Spark, so nothing else is read.
SOURCE_FORMATS = ("parquet", "orc", "csv", "json", "delta")
_MAX_TEXT = 64 * 1024  # a name, a host, a path or a message: no legitimate one is longer


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def integer(value: Any, what: str, high: int = MAX_LONG) -> int:
    """`value` as an int from 0 to `high`; a bool, float or string is not an integer here."""
    if type(value) is not int or not 0 <= value <= high:
        raise ValueError(f"{what} must be an integer from 0 to {high}, got {_shown(value)}")
    return value


def optional_integer(value: Any, what: str, high: int = MAX_LONG) -> int | None:
    return None if value is None else integer(value, what, high)


def data_version(value: Any, what: str = "data_version") -> int:
    """A data version: the N of a directory `v__=N`, so it is built into paths only after this check."""
    return integer(value, what, MAX_DATA_VERSION)


def probability(value: Any, what: str) -> float:
    """A false-positive probability: a finite number strictly between 0 and 1."""
    if type(value) not in (int, float) or not math.isfinite(value) or not 0 < value < 1:
        raise ValueError(f"{what} must be a number strictly between 0 and 1, got {_shown(value)}")
    return float(value)


def text(value: Any, what: str) -> str:
    if not isinstance(value, str) or len(value) > _MAX_TEXT:
        raise ValueError(f"{what} must be a string of at most {_MAX_TEXT} characters, got {_shown(value)}")
    return value


def optional_text(value: Any, what: str) -> str | None:
    return None if value is None else text(value, what)


def mapping(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object, got {_shown(value)}")
    return value


def optional_mapping(value: Any, what: str) -> dict[str, Any] | None:
    return None if value is None else mapping(value, what)


def sequence(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{what} must be a JSON array, got {_shown(value)}")
    return value


def texts(value: Any, what: str) -> tuple[str, ...]:
    return tuple(text(v, f"{what}[{i}]") for i, v in enumerate(sequence(value, what)))


def text_map(value: Any, what: str) -> dict[str, str]:
    return {text(k, f"a key of {what}"): text(v, f"{what}[{k!r}]") for k, v in mapping(value, what).items()}


def source_format(value: Any) -> str:
    if value not in SOURCE_FORMATS:
        raise ValueError(f"source.format must be one of {', '.join(SOURCE_FORMATS)}, got {_shown(value)}")
    return value


def data_parts(value: Any, version: int | None) -> tuple[int, ...] | None:
    """The data versions an index version reads, oldest first, ending with `version` (None: `version` alone)."""
    if value is None or value == []:
        return None
    parts = tuple(data_version(v, f"data_parts[{i}]") for i, v in enumerate(sequence(value, "data_parts")))
    if len(parts) > MAX_DATA_PARTS:
        raise ValueError(f"data_parts lists {len(parts)} versions; at most {MAX_DATA_PARTS} are allowed")
    if parts[-1] != version or len(set(parts)) != len(parts):
        raise ValueError(f"data_parts {list(parts)[:10]} must be distinct and end with data_version {version}")
    return parts


# The numeric fields of a build's summary (`hsbloom.build.BuildSummary`): counts and byte sizes that messages
# show and an incremental refresh sizes global filters from.
_SUMMARY_COUNTS = ("num_files", "num_rows", "index_bytes", "global_filter_deleted_files")
_COLUMN_COUNTS = ("num_rows", "num_nulls", "ndv", "file_filter_bytes", "global_filter_bytes")
_SUMMARY_FPPS = ("file_fpp", "shared_fpp")


def summary(value: Any) -> dict[str, Any] | None:
    """A build summary with every number hsbloom reads from it checked (other fields pass as they are)."""
    if value is None:
        return None
    data = mapping(value, "summary")
    for key in _SUMMARY_COUNTS:
        if key in data:
            integer(data[key], f"summary.{key}")
    for key in _SUMMARY_FPPS:
        if key in data:
            probability(data[key], f"summary.{key}")
    for column, stats in mapping(data.get("columns", {}), "summary.columns").items():
        for key in _COLUMN_COUNTS:
            if key in mapping(stats, f"summary.columns[{column!r}]"):
                integer(stats[key], f"summary.columns[{column!r}].{key}")
    adoption = mapping(data.get("adoption", {}), "summary.adoption")
    if adoption.get("adopted_files") is not None:
        integer(adoption["adopted_files"], "summary.adoption.adopted_files")
    for reason, count in mapping(adoption.get("hashed_files", {}), "summary.adoption.hashed_files").items():
        integer(count, f"summary.adoption.hashed_files[{reason!r}]")
    return data
