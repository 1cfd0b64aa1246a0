"""BFIndexConfig: what to index and how, checked when it is constructed.

The index name becomes a directory name under the system path, so it is held
to a small, portable character set: anything that could escape that directory
or mean something special to Hadoop paths (separators, '..', ':') is refused.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any, Sequence

from hsbloom.errors import InvalidConfigError

MAX_NAME_LENGTH = 128
# With fpp left to its default, each file's filter gets fpp min(DEFAULT_FPP, FALSE_FILES_PER_PROBE / files): a probed
# value then makes about FALSE_FILES_PER_PROBE false-positive files whatever the number of files (one extra file
# read per 20 lookups). The global filter and the zones, whose false positives do not grow with the file count,
# keep DEFAULT_FPP (docs/indexes.md#false-positive-rate, docs/design/decisions.md).
DEFAULT_FPP = 0.01
FALSE_FILES_PER_PROBE = 0.05
# "file": one filter per source file and column; "row_group": also one per row group of a Parquet file (zones).
GRANULARITIES = ("file", "row_group")
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]+")


@dataclass(frozen=True)
class BFIndexConfig:
    """A Bloom filter index over `indexed_columns` of one source.

    - index_name: letters, digits, '_', '-', '.'; not starting with '.'; no '..'; at most 128 characters.
    - indexed_columns: top-level column names, at least one, no duplicates (kept as a tuple).
    - expected_num_items: distinct values to size every file's filter for; None sizes each
      file's filter from that file's own data.
    - fpp: target false-positive probability, strictly between 0 and 1, of every filter; None (the default) sizes
      it from the number of files: each file's filter gets min(0.01, 0.05 / files), so a looked-up value reads
      about one false-positive file per twenty lookups however many files there are, and the global filter and
      zones get 0.01 (`file_fpp` and `shared_fpp`).
    - global_filter: also build one filter per column over all files, for the join rule's filter on the other
      side (docs/joins.md); False by default: it doubles a build's time (docs/design/decisions.md).
    - granularity: "file" (one filter per file and column) or "row_group" (also one per row group of each
      Parquet file, a zone, so a lookup reads only the row groups that may hold its values; Parquet and Delta
      sources only: docs/indexes.md).
    """

    index_name: str
    indexed_columns: Sequence[str]
    expected_num_items: int | None = None
    fpp: float | None = None
    global_filter: bool = False
    granularity: str = "file"

    def __post_init__(self) -> None:
        validate_index_name(self.index_name)
        object.__setattr__(self, "indexed_columns", _validated_columns(self.indexed_columns))
        _validate_expected_num_items(self.expected_num_items)
        if self.fpp is not None:
            object.__setattr__(self, "fpp", _validated_fpp(self.fpp))
        if not isinstance(self.global_filter, bool):
            raise InvalidConfigError(f"global_filter must be True or False, got {self.global_filter!r}")
        if self.granularity not in GRANULARITIES:
            raise InvalidConfigError(
                f"granularity must be one of {', '.join(repr(g) for g in GRANULARITIES)}, got {self.granularity!r}"
            )

    @property
    def zones(self) -> bool:
        """Whether the index keeps a filter per row group too (granularity "row_group")."""
        return self.granularity == "row_group"

    def file_fpp(self, num_files: int) -> float:
        """The false-positive probability of each file's filter in a version of `num_files` files."""
        if self.fpp is not None:
            return self.fpp
        return min(DEFAULT_FPP, FALSE_FILES_PER_PROBE / max(num_files, 1))

    @property
    def shared_fpp(self) -> float:
        """The false-positive probability of the global filter and of zone filters (not multiplied by files)."""
        return DEFAULT_FPP if self.fpp is None else self.fpp

    def to_dict(self) -> dict[str, Any]:
        """The config as JSON-able data, as the operation log stores it."""
        data = asdict(self)
        data["indexed_columns"] = list(self.indexed_columns)
        if self.granularity == "file":
            del data["granularity"]  # the default is left out, so an hsbloom before zones still reads the entry
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "BFIndexConfig":
        """The config from `to_dict` output, validated again (the log is data, not trusted code)."""
        known = {"index_name", "indexed_columns", "expected_num_items", "fpp", "global_filter", "granularity"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidConfigError(f"unknown index config fields {unknown}; written by a newer hsbloom?")
        return cls(**data)


def validate_index_name(name: Any) -> None:
    """Raise InvalidConfigError saying what is wrong with `name`, if anything."""
    if not isinstance(name, str):
        raise InvalidConfigError(f"index_name must be a string, got {type(name).__name__}")
    if not name:
        raise InvalidConfigError("index_name must not be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidConfigError(f"index_name is {len(name)} characters long; at most {MAX_NAME_LENGTH} are allowed")
    if "/" in name or "\\" in name:
        raise InvalidConfigError(f"index_name {name!r} contains a path separator ('/' or '\\')")
    if ".." in name:
        raise InvalidConfigError(f"index_name {name!r} contains '..'")
    control = [c for c in name if ord(c) < 32 or 127 <= ord(c) < 160]
    if control:
        raise InvalidConfigError(f"index_name {name!r} contains control characters {control!r}")
    if name.startswith("."):
        raise InvalidConfigError(f"index_name {name!r} starts with '.', which would make its directory hidden")
    if not _NAME_CHARS.fullmatch(name):
        bad = sorted({c for c in name if not _NAME_CHARS.fullmatch(c)})
        raise InvalidConfigError(
            f"index_name {name!r} contains {bad!r}; use only letters A-Z a-z, digits, '_', '-' and '.'"
        )


def _validated_columns(columns: Any) -> tuple[str, ...]:
    if isinstance(columns, str):
        raise InvalidConfigError(f"indexed_columns must be a list of column names, e.g. [{columns!r}], not a string")
    if not isinstance(columns, (list, tuple)):
        raise InvalidConfigError(f"indexed_columns must be a list of column names, got {type(columns).__name__}")
    if not columns:
        raise InvalidConfigError("indexed_columns must name at least one column")
    for column in columns:
        if not isinstance(column, str) or not column:
            raise InvalidConfigError(f"indexed_columns must hold non-empty strings, got {column!r}")
    duplicates = sorted({c for c in columns if columns.count(c) > 1})
    if duplicates:
        raise InvalidConfigError(f"indexed_columns lists {duplicates} more than once")
    return tuple(columns)


def _validate_expected_num_items(value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidConfigError(f"expected_num_items must be None or a positive integer, got {value!r}")
    if value <= 0:
        raise InvalidConfigError(f"expected_num_items must be positive, got {value}")
    if value > 2**63 - 1:  # the jar holds it as a Long
        raise InvalidConfigError(f"expected_num_items must be at most 2**63 - 1, got {value}")


def _validated_fpp(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidConfigError(f"fpp must be a number strictly between 0 and 1, got {value!r}")
    if not (math.isfinite(value) and 0 < value < 1):
        raise InvalidConfigError(f"fpp must be strictly between 0 and 1, got {value}")
    return float(value)
