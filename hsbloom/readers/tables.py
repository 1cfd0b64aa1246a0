"""A version's file tables and filter blocks, every byte checked as the jar checks it (docs/design/integrity.md).

The jar's `IndexDataLoad`, `SourceListing`, `TableRows`, `FilterBlocks` and `Checksums` are the specification
(docs/design/format.md gives the bytes): the parts of `<index>/v__=N/files/` in name order, each row's
`row_checksum` over its planning fields (big-endian numbers, strings as a big-endian int length and UTF-8),
seeded by XXH64 of `<index name>/v__=N`; a row that fails is left out (its file is then read), as is the rest
of a part that cannot be read. Filters live in `blocks/`, probed one checksummed stripe at a time; a stripe that
fails makes every filter of its group answer "may contain".
"""

from __future__ import annotations

import struct
import warnings
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import xxhash

from hsbloom.readers.sbbf import SALTS
from hsbloom.readers.storage import file_key

STRIPE_BYTES = 512
STRIPE_CHECKSUM_BYTES = 8
# The planning fields in checksum order, and how each is stored.
COLUMNS = (
    ("file_id", pa.int64()),
    ("file_path", pa.string()),
    ("file_size", pa.int64()),
    ("file_mtime", pa.int64()),
    ("column", pa.string()),
    ("num_rows", pa.int64()),
    ("num_nulls", pa.int64()),
    ("blocks_file", pa.string()),
    ("blocks_offset", pa.int64()),
    ("blocks_count", pa.int32()),
    ("blocks_position", pa.int32()),
    ("bitset_bytes", pa.int32()),
    ("filter_checksum", pa.int64()),
    ("row_checksum", pa.int64()),
)


class IndexDamageWarning(UserWarning):
    """Bytes of an index failed their checks: the files they cover are kept (read)."""


def _seed(name: str) -> int:
    return xxhash.xxh64_intdigest(name.encode("utf-8"))


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _string(value: str) -> bytes:
    data = value.encode("utf-8")
    return struct.pack(">i", len(data)) + data


def row_checksum(row: dict, seed: int) -> int:
    """`Checksums.RowFields.checksum` of a file-table row (as a signed long, as stored)."""
    data = b"".join(
        (
            struct.pack(">q", row["file_id"]),
            _string(row["file_path"]),
            struct.pack(">qq", row["file_size"], row["file_mtime"]),
            _string(row["column"]),
            struct.pack(">qq", row["num_rows"], row["num_nulls"]),
            _string(row["blocks_file"]),
            struct.pack(">qiiiq", row["blocks_offset"], row["blocks_count"], row["blocks_position"],
                        row["bitset_bytes"], row["filter_checksum"]),
        )
    )
    return _signed(xxhash.xxh64_intdigest(data, seed))


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


@dataclass(frozen=True)
class Entry:
    """One file's counts and filter for one column (`member` None: no filter, the file is always kept)."""

    num_rows: int
    num_nulls: int
    group: Optional[Group]
    position: int


@dataclass
class HeldFile:
    path: str
    size: int
    mtime: int
    columns: dict = field(default_factory=dict)  # column -> Entry


class Blocks:
    """Reads checksummed stripes of side files once each; a stripe that fails is remembered as damaged."""

    def __init__(self, fs: pafs.FileSystem, damage: list):
        self._fs = fs
        self._damage = damage
        self._stripes: dict = {}

    def members_containing(self, group: Group, positions: np.ndarray, h: int) -> np.ndarray:
        """For each member position of `group`, whether its filter may hold `h`: one stripe, all members at once."""
        b = ((h >> 32) * group.num_blocks) >> 32
        stripe = self._stripe(group, b // group.rows_per_stripe)
        if stripe is None:
            return np.ones(len(positions), dtype=bool)
        words = stripe[((b % group.rows_per_stripe) * group.count + positions)[:, None] * 8 + np.arange(8)]
        key = np.uint64(h & 0xFFFFFFFF)
        bits = ((key * SALTS.astype(np.uint64)) & np.uint64(0xFFFFFFFF)) >> np.uint64(27)
        return np.all((words >> bits.astype(np.uint32)) & np.uint32(1), axis=1)

    def _stripe(self, group: Group, s: int) -> Optional[np.ndarray]:
        cache_key = (group.path, group.offset, s)
        if cache_key in self._stripes:
            return self._stripes[cache_key]
        data_bytes = group.stripe_data_bytes(s)
        at = group.stripe_offset(s)
        stripe = None
        try:
            with self._fs.open_input_file(group.path) as f:
                raw = f.read_at(data_bytes + STRIPE_CHECKSUM_BYTES, at)
            if len(raw) != data_bytes + STRIPE_CHECKSUM_BYTES:
                raise EOFError(f"{len(raw)} bytes where {data_bytes + STRIPE_CHECKSUM_BYTES} were expected")
            stored = struct.unpack(">Q", raw[data_bytes:])[0]
            seed = xxhash.xxh64_intdigest(struct.pack("<q", at), _seed(group.name))
            if stored == xxhash.xxh64_intdigest(raw[:data_bytes], seed):
                stripe = np.frombuffer(raw, dtype="<u4", count=data_bytes // 4)
            else:
                self._report(group, f"stripe {s} of the filter group at offset {group.offset} fails its checksum")
        except (OSError, EOFError) as exc:
            self._report(group, f"stripe {s} of the filter group at offset {group.offset} cannot be read ({exc})")
        self._stripes[cache_key] = stripe
        return stripe

    def _report(self, group: Group, what: str) -> None:
        message = f"{group.path}: {what}"
        self._damage.append(message)
        warnings.warn(f"hsbloom index damage, the files it covers are read: {message}", IndexDamageWarning, stacklevel=4)


def _parts(fs: pafs.FileSystem, table: str) -> list[str]:
    infos = fs.get_file_info(pafs.FileSelector(table, allow_not_found=False))
    names = [i for i in infos if i.type == pafs.FileType.File and not i.base_name.startswith(("_", "."))]
    return [i.path for i in sorted(names, key=lambda i: i.base_name)]


def _check_schema(part: str, schema: pa.Schema) -> None:
    if "filter" in schema.names:
        raise OlderLayout(f"index table file {part} holds whole filters (an older layout): refresh with mode='full'")
    for name, kind in COLUMNS:
        if name not in schema.names:
            raise OlderLayout(f"index table file {part} has no column '{name}': refresh the index with mode='full'")
        if schema.field(name).type != kind:
            raise ValueError(f"index table file {part} stores column '{name}' as {schema.field(name).type}, not {kind}")


class OlderLayout(Exception):
    """A table written by an older hsbloom: the index is not used (a full refresh rebuilds it)."""


def load(fs: pafs.FileSystem, index_path: str, index_name: str, data_parts: tuple, dropped: frozenset,
         damage: list) -> dict:
    """The intact rows of the version's file tables, by file key: {key: HeldFile}."""
    held: dict = {}
    by_id: dict = {}
    for version in data_parts:
        directory = f"{index_path.rstrip('/')}/v__={version}"
        seed = _seed(f"{index_name}/v__={version}")
        table = f"{directory}/files"
        try:
            parts = _parts(fs, table)
        except (FileNotFoundError, OSError):
            _warn(damage, f"{table}: the file table is missing")
            continue
        for part in parts:
            bad = 0
            try:
                pf = pq.ParquetFile(fs.open_input_file(part))
                _check_schema(part, pf.schema_arrow)
                table = pf.read(columns=[c for c, _ in COLUMNS])
                nulls = any(table.column(c).null_count for c, _ in COLUMNS)
                rows = table.to_pylist()
            except OlderLayout:
                raise
            except (OSError, ValueError, pa.ArrowException) as exc:
                _warn(damage, f"{part}: the file table part cannot be read ({exc})")
                continue
            for row in rows:
                if (nulls and any(v is None for v in row.values())) or row_checksum(row, seed) != row["row_checksum"]:
                    bad += 1
                    continue
                if row["file_id"] in dropped:
                    continue
                key = file_key(row["file_path"])
                if key is None:
                    continue
                known = by_id.setdefault(row["file_id"], (key, row["file_size"], row["file_mtime"]))
                if known != (key, row["file_size"], row["file_mtime"]):
                    _warn(damage, f"{part}: file id {row['file_id']} names two files")
                    continue
                file = held.setdefault(key, HeldFile(row["file_path"], row["file_size"], row["file_mtime"]))
                if (file.size, file.mtime) != (row["file_size"], row["file_mtime"]):
                    _warn(damage, f"{part}: {row['file_path']} has two fingerprints")
                    held.pop(key)
                    continue
                group = None
                if row["blocks_count"] > 0:
                    group = _group(directory, row)
                    if group is None:
                        bad += 1
                        continue
                file.columns[row["column"]] = Entry(row["num_rows"], row["num_nulls"], group, row["blocks_position"])
            if bad:
                _warn(damage, f"{part}: {bad} rows of the file table fail their checks")
    return held


def _group(directory: str, row: dict) -> Optional[Group]:
    """The row's filter group, if its address is one the jar writes (a name, not a path; sizes in range)."""
    name = row["blocks_file"]
    count, position, size = row["blocks_count"], row["blocks_position"], row["bitset_bytes"]
    if (not name or "/" in name or "\\" in name or name.startswith(".") or row["blocks_offset"] < 0
            or not 0 <= position < count or size <= 0 or size % 32 or size > 128 * 1024 * 1024):
        return None
    return Group(f"{directory}/blocks/{name}", name, row["blocks_offset"], count, size)


def _warn(damage: list, message: str) -> None:
    damage.append(message)
    warnings.warn(f"hsbloom index damage, the files it covers are read: {message}", IndexDamageWarning, stacklevel=3)
