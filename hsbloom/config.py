"""BFIndexConfig: what to index and how, as a Python caller spells it.

The jar owns the config's rules (jvm/src/main/scala/hsbloom/BFIndexConfig.scala): which index names, fpp values,
granularities and expected_num_items it accepts, and the default fpp. It checks them when the index is created,
before anything is read or written, and its refusal reaches Python as InvalidConfigError with the jar's message.
This class checks only what Python alone can see: that each argument has the type the statement needs, so a
wrong type fails here, before any JVM call, instead of becoming a different statement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from hsbloom.errors import InvalidConfigError


@dataclass(frozen=True)
class BFIndexConfig:
    """A Bloom filter index over `indexed_columns` of one source (the fields of docs/indexes.md).

    - index_name: the index's name (letters, digits, '_', '-', '.'; at most 128 characters).
    - indexed_columns: top-level column names, at least one, no duplicates (kept as a tuple).
    - expected_num_items: distinct values to size every file's filter for; None sizes each file's filter from
      that file's own data.
    - fpp: target false-positive probability of every filter, strictly between 0 and 1; None (the default) lets
      the jar size each file's filter from the number of files (docs/indexes.md#false-positive-rate).
    - global_filter: also build one filter per column over all files, for the join rule (docs/joins.md).
    - granularity: "file" (one filter per file and column) or "row_group" (also one per row group: zones).
    - substring_columns: string columns that also get a substring filter (their values' n-grams), for LIKE,
      startswith, endswith and contains (docs/substring.md); a column may also be in indexed_columns.
    - ngram_size: the n of those n-grams, 2 to 8 bytes, for every substring column; None (the default) lets the
      index choose each column's n from its measured gram density when it is created (docs/substring.md#choosing-n).
    - substring_case_insensitive: also a substring filter of those columns' lower-cased values, for ILIKE and
      lower(column) conditions.

    The values are checked by the jar when the index is created (InvalidConfigError naming the problem).
    """

    index_name: str
    indexed_columns: Sequence[str]
    expected_num_items: int | None = None
    fpp: float | None = None
    global_filter: bool = False
    granularity: str = "file"
    substring_columns: Sequence[str] = ()
    ngram_size: int | None = None
    substring_case_insensitive: bool = False

    def __post_init__(self) -> None:
        _require(isinstance(self.index_name, str), "index_name", "a string", self.index_name)
        object.__setattr__(self, "indexed_columns", _column_names(self.indexed_columns, "indexed_columns"))
        object.__setattr__(self, "substring_columns", _column_names(self.substring_columns, "substring_columns"))
        _require(self.expected_num_items is None or _is_int(self.expected_num_items), "expected_num_items",
                 "None or an int", self.expected_num_items)
        _require(self.fpp is None or _is_int(self.fpp) or isinstance(self.fpp, float), "fpp",
                 "None or a number strictly between 0 and 1", self.fpp)
        if self.fpp is not None:
            object.__setattr__(self, "fpp", float(self.fpp))
        _require(isinstance(self.global_filter, bool), "global_filter", "True or False", self.global_filter)
        _require(isinstance(self.granularity, str), "granularity", "a string, 'file' or 'row_group'", self.granularity)
        _require(self.ngram_size is None or _is_int(self.ngram_size), "ngram_size", "None or an int from 2 to 8",
                 self.ngram_size)
        _require(isinstance(self.substring_case_insensitive, bool), "substring_case_insensitive", "True or False",
                 self.substring_case_insensitive)


def _is_int(value: Any) -> bool:
    """An int that is not a bool (True would be read as 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _require(holds: bool, field: str, expected: str, value: Any) -> None:
    if not holds:
        raise InvalidConfigError(f"{field} must be {expected}, got {value!r} ({type(value).__name__})")


def _column_names(columns: Any, field: str) -> tuple[str, ...]:
    """The columns as a tuple of strings; a lone string is refused, not read as a sequence of one-letter names."""
    if isinstance(columns, str):
        raise InvalidConfigError(f"{field} must be a list of column names, e.g. [{columns!r}], not a string")
    if not isinstance(columns, (list, tuple)):
        raise InvalidConfigError(f"{field} must be a list of column names, got {type(columns).__name__}")
    for column in columns:
        _require(isinstance(column, str), field, "a list of column names as strings", column)
    return tuple(columns)
