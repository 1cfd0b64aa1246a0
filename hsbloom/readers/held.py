"""The files an index holds, as columns: what `tables.load` builds from the intact rows of the file tables.

Columnar (numpy arrays aligned by file number, one `Group` per filter address) so that opening and probing an
index of 100,000 files costs whole-array steps, not Python calls per file or row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hsbloom.readers.storage import file_key


STRIPE_BYTES = 512
STRIPE_CHECKSUM_BYTES = 8


@dataclass(frozen=True)
class Group:
    """Filters of one size stored block-major in one side file (`FilterBlocks.Group`)."""

    path: str
    name: str
    offset: int
    count: int
    bitset_bytes: int

    @property
    def num_blocks(self) -> int:
        return self.bitset_bytes // 32

    @property
    def rows_per_stripe(self) -> int:
        return max(1, STRIPE_BYTES // (self.count * 32))

    def stripe_offset(self, s: int) -> int:
        return self.offset + s * (self.rows_per_stripe * self.count * 32 + STRIPE_CHECKSUM_BYTES)

    def stripe_data_bytes(self, s: int) -> int:
        rows = min(self.num_blocks, (s + 1) * self.rows_per_stripe) - s * self.rows_per_stripe
        return rows * self.count * 32


@dataclass
class ColumnEntries:
    """One indexed column's rows, aligned with `Held`'s files: `present` False where the file has no row (it is
    kept); `group` indexes `groups` (-1: no filter, the file is always kept), `position` is the member in it."""

    present: np.ndarray
    num_rows: np.ndarray
    num_nulls: np.ndarray
    group: np.ndarray
    position: np.ndarray
    groups: list


@dataclass
class Held:
    """The files an index holds, as columns (file i: paths[i], sizes[i], mtimes[i]); `number` maps a file key
    to i. Columnar so that opening and probing 100,000 files costs numpy steps, not Python calls per file."""

    number: dict
    path_array: pa.Array  # the recorded paths, as Arrow (`paths` makes Python strings only when asked)
    sizes: np.ndarray
    mtimes: np.ndarray
    columns: dict = field(default_factory=dict)  # column name -> ColumnEntries
    _paths: Optional[list] = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.path_array)

    @property
    def paths(self) -> list:
        if self._paths is None:
            self._paths = self.path_array.to_pylist()
        return self._paths

    @staticmethod
    def empty() -> "Held":
        return Held({}, pa.array([], pa.string()), np.zeros(0, np.int64), np.zeros(0, np.int64))


# The columns a column's entries are made from (`column_entries`): only these are taken per column.
ENTRY_COLUMNS = ("num_rows", "num_nulls", "blocks_count", "blocks_position", "blocks_offset", "bitset_bytes",
                 "blocks_file", "data_version")


def from_rows(rows: pa.Table, directories: dict, warn: Callable[[str], None]) -> Held:
    """Files from rows: a file id naming two files, or a file with two fingerprints, is damage (its rows are
    left out, the file is read); of two rows for one file and column the later one counts, as in the jar.
    `directories`: each row's `data_version` -> its data directory (where its `blocks/` are)."""
    file_of_row, first, keys = _numbered(rows)
    size, mtime, ids = (rows.column(c).to_numpy() for c in ("file_size", "file_mtime", "file_id"))
    two_prints = np.unique(file_of_row[(size != size[first][file_of_row]) | (mtime != mtime[first][file_of_row])])
    order = np.argsort(ids, kind="stable")
    i, j = order[:-1], order[1:]  # neighbours in file id order
    two_files = np.unique(ids[j][(ids[i] == ids[j]) & ((file_of_row[i] != file_of_row[j]) | (size[i] != size[j])
                                                       | (mtime[i] != mtime[j]))])
    if two_files.size or two_prints.size:
        for count, what, such in ((two_files.size, "file ids name two files", two_files[:1].tolist()),
                                  (two_prints.size, "files have two fingerprints", [keys[f] for f in two_prints[:1]])):
            if count:
                warn(f"{count} {what} (such as {such[0]}): they are read")
        rows = rows.filter(pa.array(~np.isin(ids, two_files) & ~np.isin(file_of_row, two_prints)))
        file_of_row, first, keys = _numbered(rows)
        size, mtime = (rows.column(c).to_numpy() for c in ("file_size", "file_mtime"))
    n = len(keys)
    held = Held(dict(zip(keys, range(n))), rows.column("file_path").combine_chunks().take(first), size[first],
                mtime[first])
    names = rows.column("column").combine_chunks().dictionary_encode()
    codes = names.indices.to_numpy()
    entries = rows.select(list(ENTRY_COLUMNS))
    for code, name in enumerate(names.dictionary.to_pylist()):
        which = np.flatnonzero(codes == code)
        files = file_of_row[which]
        last = len(files) - 1 - np.unique(files[::-1], return_index=True)[1]  # the last row of each file
        which, files = which[last], files[last]
        held.columns[name] = column_entries(entries.take(which), files, n, directories)
    return held


def _numbered(rows: pa.Table) -> tuple:
    """(each row's file number, the first row of each file, each file's key): files numbered by key."""
    encoded = rows.column("key").combine_chunks().dictionary_encode()
    file_of_row = encoded.indices.to_numpy()
    first = np.empty(len(encoded.dictionary), dtype=np.int64)
    first[file_of_row[::-1]] = np.arange(len(file_of_row))[::-1]
    return file_of_row, first, encoded.dictionary.to_pylist()


def column_entries(rows: pa.Table, files: np.ndarray, n: int, directories: dict) -> ColumnEntries:
    """One column's entries for `n` files, from its rows (row j is file files[j]); one Group per address (data
    directory, side file, offset, count, filter size), found by sorting integer codes, not joining strings."""
    def aligned(column: str) -> np.ndarray:
        out = np.zeros(n, dtype=np.int64)
        out[files] = rows.column(column).to_numpy()
        return out

    present = np.zeros(n, dtype=bool)
    present[files] = True
    group = np.full(n, -1, dtype=np.int64)
    groups = []
    with_filter = np.flatnonzero(rows.column("blocks_count").to_numpy() > 0)
    if with_filter.size:
        rows = rows.take(with_filter)
        side_files = rows.column("blocks_file").combine_chunks().dictionary_encode()
        version, offset, count, bits = (rows.column(c).to_numpy() for c in
                                        ("data_version", "blocks_offset", "blocks_count", "bitset_bytes"))
        address = (version, side_files.indices.to_numpy(), offset, count, bits)
        order = np.lexsort(address[::-1])
        starts = np.zeros(len(order), dtype=bool)
        starts[0] = True
        for values in address:
            starts[1:] |= values[order][1:] != values[order][:-1]
        number = np.empty(len(order), dtype=np.int64)
        number[order] = np.cumsum(starts) - 1
        names = side_files.dictionary.to_pylist()
        for row in order[starts]:  # a row of each distinct address, in address order
            name = names[side_files.indices[row].as_py()]
            groups.append(Group(f"{directories[int(version[row])]}/blocks/{name}", name, int(offset[row]),
                                int(count[row]), int(bits[row])))
        group[files[with_filter]] = number
    return ColumnEntries(present, aligned("num_rows"), aligned("num_nulls"), group, aligned("blocks_position"),
                         groups)


# `file:` then segments that are neither empty, `.` nor `..`, with no backslash: the spelling `file_key` reads off
# the string (one regex pass; RE2 has no lookahead, so "not `.` or `..`" is spelled out as three alternatives).
_PLAIN_LOCAL = r"^file:(?:/(?:[^/\\.][^/\\]*|\.[^/\\.][^/\\]*|\.\.[^/\\]+))+$"


def file_keys(paths: pa.Array) -> pa.Array:
    """file_key of each path (a string array, null where a path has no key): the jar's spelling of local files
    (`file:/a/b`, no `.`/`..` segment) read off the strings at once, any other spelling one call each."""
    plain = pc.fill_null(pc.match_substring_regex(paths, _PLAIN_LOCAL), False)
    keys = pc.if_else(plain, pc.utf8_replace_slice(paths, 0, len("file:"), "file://"), pa.scalar(None, pa.string()))
    odd = pc.and_(pc.invert(plain), paths.is_valid())
    if pc.any(odd).as_py():
        slow = [file_key(p) for p in paths.filter(odd).to_pylist()]
        keys = pc.replace_with_mask(keys, odd, pa.array(slow, pa.string()))
    return keys
