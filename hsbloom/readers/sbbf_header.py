"""SBBF sizing and the Thrift-compact `BloomFilterHeader`, written out by hand.

The header is small and fixed (numBytes, algorithm BLOCK, hash XXHASH, compression UNCOMPRESSED; 15 to 19
bytes), so it is read and written here without a Thrift library: no dependency beyond numpy, and independent
of the parquet-java classes the jar uses, so the tests comparing the two compare two implementations.
"""

from __future__ import annotations

import math
import struct
from typing import Union

Bytes = Union[bytes, bytearray, memoryview]

BLOCK_BYTES = 32
MIN_BYTES = 32
MAX_BYTES = 128 * 1024 * 1024


class SbbfFormatError(ValueError):
    """A serialized Bloom filter that is corrupt or in a format hsbloom does not read."""


# ---------------------------------------------------------------------------------------------
# Sizing (the arrow-rs formulas; parquet-java and Arrow C++ agree except near powers of two).


def optimal_num_bits(ndv: int, fpp: float) -> int:
    """Bits for `ndv` distinct values at false-positive probability `fpp`: m = -8 ndv / ln(1 - fpp^(1/8)).

    Truncated to an integer, as arrow-rs does (ndv=1000, fpp=0.01 -> 9681).
    """
    _check_fpp(fpp)
    if ndv < 0:
        raise ValueError(f"ndv must be >= 0, got {ndv}")
    return int(-8.0 * ndv / math.log(1.0 - fpp ** (1.0 / 8.0)))


def optimal_num_bytes(num_bytes: int) -> int:
    """A wanted byte count rounded to the filter size used: the next power of two, clamped to
    [32 B, 128 MiB] (arrow-rs `optimal_num_of_bytes`: 33 -> 64, 1024 -> 1024, 10**9 -> 128 MiB)."""
    n = min(max(int(num_bytes), MIN_BYTES), MAX_BYTES)
    return 1 << (n - 1).bit_length()


def _check_fpp(fpp: float) -> None:
    if not (isinstance(fpp, (int, float)) and 0.0 < fpp < 1.0):
        raise ValueError(f"false-positive probability must be strictly between 0 and 1, got {fpp!r}")


def _check_num_bytes(num_bytes: int, what: str) -> None:
    if num_bytes <= 0 or num_bytes % BLOCK_BYTES or num_bytes > MAX_BYTES:
        raise SbbfFormatError(
            f"{what} is {num_bytes}; a Bloom filter bitset must be a positive multiple of "
            f"{BLOCK_BYTES} bytes and at most {MAX_BYTES} bytes (128 MiB)"
        )


# ---------------------------------------------------------------------------------------------
# The Thrift-compact BloomFilterHeader.
#
# struct BloomFilterHeader {1: required i32 numBytes; 2: required BloomFilterAlgorithm algorithm;
#   3: required BloomFilterHash hash; 4: required BloomFilterCompression compression}
# where each of the three unions has a single member, field 1, an empty struct
# (SplitBlockAlgorithm BLOCK, XxHash XXHASH, Uncompressed UNCOMPRESSED).

_I32, _STRUCT = 5, 12
_UNION_FIELDS = {2: ("algorithm", "BLOCK"), 3: ("hash", "XXHASH"), 4: ("compression", "UNCOMPRESSED")}
# Each union: field header (delta 1, struct), its one member (delta 1, struct), member stop, union stop.
_UNION_BYTES = bytes([0x1C, 0x1C, 0x00, 0x00])


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def header_bytes(num_bytes: int) -> bytes:
    """The serialized BloomFilterHeader for a bitset of `num_bytes` (as parquet-java writes it)."""
    _check_num_bytes(num_bytes, "numBytes")
    zigzag = (num_bytes << 1) ^ (num_bytes >> 31)
    return bytes([0x15]) + _varint(zigzag) + _UNION_BYTES * 3 + b"\x00"


class _Reader:
    """Just enough of Thrift's compact protocol to read (and skip inside) a BloomFilterHeader."""

    def __init__(self, data: Bytes):
        self.data = memoryview(data).cast("B")
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise SbbfFormatError(
                f"Bloom filter header is truncated: the buffer ends after {len(self.data)} bytes "
                "inside the header"
            )
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise SbbfFormatError("Bloom filter header holds a malformed varint (more than 10 bytes)")

    def zigzag(self) -> int:
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def field(self, last_id: int) -> tuple[int, int]:
        """(field id, type) of the next field, or (0, 0) at the struct's end."""
        head = self.byte()
        if head == 0:
            return 0, 0
        ftype, delta = head & 0x0F, head >> 4
        return (last_id + delta if delta else self.zigzag()), ftype

    def skip(self, ftype: int, depth: int = 0) -> None:
        if depth > 32:
            raise SbbfFormatError("Bloom filter header nests structs too deeply")
        if ftype in (1, 2):  # booleans live in the type nibble
            return
        if ftype == 3:
            self.byte()
        elif ftype in (4, 5, 6):
            self.varint()
        elif ftype == 7:
            for _ in range(8):
                self.byte()
        elif ftype == 8:
            length = self.varint()
            if self.pos + length > len(self.data):
                raise SbbfFormatError("Bloom filter header is truncated inside a binary field")
            self.pos += length
        elif ftype in (9, 10):
            head = self.byte()
            size = head >> 4 if head >> 4 != 15 else self.varint()
            for _ in range(size):
                self.skip(head & 0x0F, depth + 1)
        elif ftype == 11:
            size = self.varint()
            if size:
                kinds = self.byte()
                for _ in range(size):
                    self.skip(kinds >> 4, depth + 1)
                    self.skip(kinds & 0x0F, depth + 1)
        elif ftype == 12:
            last = 0
            while True:
                last, inner = self.field(last)
                if inner == 0:
                    return
                self.skip(inner, depth + 1)
        else:
            raise SbbfFormatError(f"Bloom filter header holds an unknown Thrift type {ftype}")

    def union_member(self, name: str) -> int:
        """Read a union (one struct member) and return the member's field id."""
        member = None
        last = 0
        while True:
            last, ftype = self.field(last)
            if ftype == 0:
                break
            if member is not None:
                raise SbbfFormatError(f"Bloom filter header: the {name} union has more than one member set")
            member = last
            self.skip(ftype)
        if member is None:
            raise SbbfFormatError(f"Bloom filter header: the {name} union is empty")
        return member


def _legacy_format_message(blob: Bytes) -> str | None:
    """A message if `blob` starts like the pre-release format (plain int32 numBytes, algorithm,
    hash; hash 0 = Murmur3) that parquet-mr wrote before the Thrift header existed."""
    if len(blob) < 12:
        return None
    num_bytes, algorithm, hash_id = struct.unpack_from("<iii", blob, 0)
    if num_bytes > 0 and num_bytes % BLOCK_BYTES == 0 and algorithm == 0 and hash_id == 0:
        return (
            f"this is the deprecated pre-release Parquet Bloom filter format (a plain 12-byte header: "
            f"numBytes={num_bytes}, algorithm=0, hash=0 meaning MURMUR3); it hashes values differently "
            "and is not supported: only the Thrift BloomFilterHeader with the XXHASH hash is read"
        )
    return None


def read_header(blob: Bytes) -> tuple[int, int]:
    """Parse and validate the BloomFilterHeader at the start of `blob`: (header length, numBytes).

    `blob` may be just a prefix (a header is at most 19 bytes plus any unknown fields), so a
    reader that knows only a column chunk's bloom_filter_offset can read ~64 bytes, learn the
    bitset length, then read the bitset. Raises SbbfFormatError naming what is wrong.
    """
    reader = _Reader(blob)
    num_bytes = None
    seen: dict[int, int] = {}
    last = 0
    try:
        while True:
            last, ftype = reader.field(last)
            if ftype == 0:
                break
            if last == 1 and ftype == _I32:
                num_bytes = reader.zigzag()
            elif last in _UNION_FIELDS and ftype == _STRUCT:
                seen[last] = reader.union_member(_UNION_FIELDS[last][0])
            elif last in (1, *_UNION_FIELDS):
                raise SbbfFormatError(f"Bloom filter header field {last} has the wrong Thrift type {ftype}")
            else:
                reader.skip(ftype)  # a field added by a later parquet-format version
    except SbbfFormatError as exc:
        legacy = _legacy_format_message(blob)
        raise SbbfFormatError(legacy or str(exc)) from None
    missing = [name for fid, (name, _) in _UNION_FIELDS.items() if fid not in seen]
    if num_bytes is None:
        missing.insert(0, "numBytes")
    if missing:
        raise SbbfFormatError(
            _legacy_format_message(blob) or f"Bloom filter header lacks required field(s): {', '.join(missing)}"
        )
    for fid, (name, supported) in _UNION_FIELDS.items():
        if seen[fid] != 1:
            raise SbbfFormatError(
                f"Bloom filter {name} is union member {seen[fid]}, which hsbloom does not know; "
                f"only {supported} (member 1) is defined by the Parquet format"
            )
    _check_num_bytes(num_bytes, "Bloom filter header numBytes")
    return reader.pos, num_bytes
