"""The files an index holds, as columns: what `tables.load` builds from the intact rows of the file tables.

Columnar (numpy arrays aligned by file number, one `Group` per filter address) so that opening and probing an
index of 100,000 files costs whole-array steps, not Python calls per file or row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

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
    paths: list
    sizes: np.ndarray
    mtimes: np.ndarray
    columns: dict = field(default_factory=dict)  # column name -> ColumnEntries

    def __len__(self) -> int:
        return len(self.paths)

    @staticmethod
    def empty() -> "Held":
        return Held({}, [], np.zeros(0, np.int64), np.zeros(0, np.int64))


def from_rows(rows: pa.Table, warn: Callable[[str], None]) -> Held:
    """Files from rows: a file id naming two files, or a file with two fingerprints, is damage (its rows are
    left out, the file is read); of two rows for one file and column the later one counts, as in the jar."""
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
    n = len(keys)
    held = Held(dict(zip(keys, range(n))), rows.column("file_path").take(first).to_pylist(),
                rows.column("file_size").to_numpy()[first], rows.column("file_mtime").to_numpy()[first])
    names = rows.column("column").to_numpy(zero_copy_only=False)
    for name in np.unique(names):
        which = np.flatnonzero(names == name)
        files = file_of_row[which]
        last = len(files) - 1 - np.unique(files[::-1], return_index=True)[1]  # the last row of each file
        which, files = which[last], files[last]
        held.columns[str(name)] = column_entries(rows.take(which), files, n)
    return held


def _numbered(rows: pa.Table) -> tuple:
    """(each row's file number, the first row of each file, each file's key): files numbered by key."""
    encoded = rows.column("key").combine_chunks().dictionary_encode()
    file_of_row = encoded.indices.to_numpy()
    first = np.empty(len(encoded.dictionary), dtype=np.int64)
    first[file_of_row[::-1]] = np.arange(len(file_of_row))[::-1]
    return file_of_row, first, encoded.dictionary.to_pylist()


def column_entries(rows: pa.Table, files: np.ndarray, n: int) -> ColumnEntries:
    """One column's entries for `n` files, from its rows (row j is file files[j]); one Group per address."""
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
        side_file = pc.binary_join_element_wise(rows.column("directory"), rows.column("blocks_file"), "/blocks/")
        numbers = [rows.column(c) for c in ("blocks_offset", "blocks_count", "bitset_bytes")]
        address = pc.binary_join_element_wise(side_file, *(pc.cast(n, pa.string()) for n in numbers), "|")
        encoded = address.combine_chunks().dictionary_encode()
        number = encoded.indices.to_numpy()
        first = np.empty(len(encoded.dictionary), dtype=np.int64)
        first[number[::-1]] = np.arange(len(number))[::-1]  # a row of each distinct address
        paths, offsets, counts, bits = ([side_file.take(first).to_pylist()]
                                        + [n.take(first).to_pylist() for n in numbers])
        groups = [Group(p, p.rsplit("/", 1)[1], o, c, b) for p, o, c, b in zip(paths, offsets, counts, bits)]
        group[files[with_filter]] = number
    return ColumnEntries(present, aligned("num_rows"), aligned("num_nulls"), group, aligned("blocks_position"),
                         groups)


def file_keys(paths: pa.Array) -> list:
    """file_key of each path: the jar's spelling of local files (`file:/a/b`, no `.`/`..` segment) read off the
    strings at once, any other spelling one call each."""
    plain = (pc.match_substring_regex(paths, r"^file:(/[^/\\]+)+$").to_numpy(zero_copy_only=False)
             & ~pc.match_substring_regex(paths, r"/\.\.?(/|$)").to_numpy(zero_copy_only=False))
    fast = pc.binary_join_element_wise("file://", pc.utf8_slice_codeunits(paths, 5), "").to_pylist()
    slow = paths.to_pylist()
    return [f if p else file_key(s) for f, p, s in zip(fast, plain, slow)]
