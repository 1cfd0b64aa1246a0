"""A version's file tables and filter blocks, every byte checked as the jar checks it (docs/design/integrity.md).

The jar's `IndexDataLoad`, `SourceListing`, `TableRows`, `FilterBlocks` and `Checksums` are the specification
(docs/design/format.md gives the bytes): the parts of `<index>/v__=N/files/` in name order, each row's
`row_checksum` over its planning fields (big-endian numbers, strings as a big-endian int length and UTF-8),
seeded by XXH64 of `<index name>/v__=N`, computed for all rows at once in numpy (`row_checksums`); a row that
fails is left out (its file is then read), as is the rest of a part that cannot be read. Filters live in `blocks/`, probed one checksummed stripe at a time; a stripe that
fails makes every filter of its group answer "may contain".
"""

from __future__ import annotations

import struct
import warnings
from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import xxhash

from hsbloom.readers.held import STRIPE_CHECKSUM_BYTES, Group, Held, file_keys, from_rows
from hsbloom.readers.sbbf import SALTS
from hsbloom.readers.xxh64 import xxh64_bytes

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


def name_seed(name: str) -> int:
    return xxhash.xxh64_intdigest(name.encode("utf-8"))


def _big_endian(columns: list) -> pa.Array:
    """Each row's values of (column, numpy big-endian type) pairs as one binary value of their bytes."""
    packed = np.hstack([col.fill_null(0).to_numpy(zero_copy_only=False).astype(dtype).view(np.uint8)
                        .reshape(len(col), np.dtype(dtype).itemsize) for col, dtype in columns])
    width = packed.shape[1]
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), len(packed),
                                                [None, pa.py_buffer(np.ascontiguousarray(packed))]).cast(pa.binary())


def _length_and_utf8(column: pa.Array) -> list:
    """A string field as the jar hashes it: its UTF-8 byte length (big-endian int), then the bytes."""
    column = column.fill_null("")
    return [_big_endian([(pc.binary_length(column), ">i4")]), column.cast(pa.binary())]


def row_checksums(table: pa.Table, seed: int) -> np.ndarray:
    """`Checksums.RowFields.checksum` of every row (uint64), all rows at once: Arrow concatenates each row's
    fields as the jar hashes them (big-endian numbers, strings as a big-endian int length and UTF-8), then the
    numpy XXH64 hashes every row (a Python call per row would cost seconds for 100,000 files)."""
    if table.num_rows == 0:
        return np.zeros(0, dtype=np.uint64)
    c = {name: table.column(name).combine_chunks() for name, _ in COLUMNS}
    pieces = [_big_endian([(c["file_id"], ">i8")]), *_length_and_utf8(c["file_path"]),
              _big_endian([(c["file_size"], ">i8"), (c["file_mtime"], ">i8")]), *_length_and_utf8(c["column"]),
              _big_endian([(c["num_rows"], ">i8"), (c["num_nulls"], ">i8")]), *_length_and_utf8(c["blocks_file"]),
              _big_endian([(c["blocks_offset"], ">i8"), (c["blocks_count"], ">i4"), (c["blocks_position"], ">i4"),
                           (c["bitset_bytes"], ">i4"), (c["filter_checksum"], ">i8")])]
    rows = pc.binary_join_element_wise(*pieces, pa.scalar(b"", pa.binary())).cast(pa.large_binary())
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int64)[rows.offset : rows.offset + len(rows) + 1]
    data = np.frombuffer(rows.buffers()[2], dtype=np.uint8)
    return xxh64_bytes(data, offsets, seed)


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
            seed = xxhash.xxh64_intdigest(struct.pack("<q", at), name_seed(group.name))
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


def part_paths(fs: pafs.FileSystem, table: str) -> list[str]:
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
         damage: list) -> Held:
    """The intact rows of the version's file tables, as a `Held`."""
    intact, directories = [], {}
    for version in data_parts:
        directory = directories[version] = f"{index_path.rstrip('/')}/v__={version}"
        seed = name_seed(f"{index_name}/v__={version}")
        table = f"{directory}/files"
        try:
            parts = part_paths(fs, table)
        except (FileNotFoundError, OSError):
            record_damage(damage, f"{table}: the file table is missing")
            continue
        for part in parts:
            try:
                pf = pq.ParquetFile(fs.open_input_file(part))
                _check_schema(part, pf.schema_arrow)
                rows = pf.read(columns=[c for c, _ in COLUMNS])
                ok = intact_rows(rows, seed)
            except OlderLayout:
                raise
            except (OSError, ValueError, pa.ArrowException) as exc:
                record_damage(damage, f"{part}: the file table part cannot be read ({exc})")
                continue
            if not ok.all():
                record_damage(damage, f"{part}: {int(np.count_nonzero(~ok))} rows of the file table fail their checks")
            ok &= ~np.isin(rows.column("file_id").to_numpy(), np.array(sorted(dropped), dtype=np.int64))
            rows = rows.filter(pa.array(ok))
            keys = file_keys(rows.column("file_path").combine_chunks())
            rows = rows.append_column("key", keys).append_column("data_version", _repeat(version, rows.num_rows))
            intact.append(rows.filter(keys.is_valid()))
    if not intact:
        return Held.empty()
    return from_rows(pa.concat_tables(intact, promote_options="permissive"), directories,
                     lambda m: record_damage(damage, m))


def _repeat(version: int, n: int) -> pa.Array:
    """A `data_version` column: which data directory each row came from (a number, not its path per row)."""
    return pa.array(np.full(n, version, dtype=np.int64))


def intact_rows(rows: pa.Table, seed: int) -> np.ndarray:
    """Per row: no null field, its checksum holds, and its filter address is one the jar writes (a name, not a
    path; sizes in range), all checked over whole columns."""
    ok = np.ones(rows.num_rows, dtype=bool)
    for name, _ in COLUMNS:
        if rows.column(name).null_count:
            ok &= rows.column(name).is_valid().to_numpy(zero_copy_only=False)
    ok &= row_checksums(rows, seed) == rows.column("row_checksum").to_numpy().view(np.uint64)
    count, position, size, offset = (rows.column(c).fill_null(0).to_numpy() for c in
                                     ("blocks_count", "blocks_position", "bitset_bytes", "blocks_offset"))
    name = rows.column("blocks_file").fill_null("")
    address_ok = ((pc.utf8_length(name).to_numpy() > 0) & (offset >= 0) & (position >= 0) & (position < count)
                  & (size > 0) & (size % 32 == 0) & (size <= 128 * 1024 * 1024)
                  & ~pc.match_substring_regex(name, r"[/\\]|^\.").to_numpy(zero_copy_only=False))
    return ok & ((count <= 0) | address_ok)


def record_damage(damage: list, message: str) -> None:
    damage.append(message)
    warnings.warn(f"hsbloom index damage, the files it covers are read: {message}", IndexDamageWarning, stacklevel=3)
