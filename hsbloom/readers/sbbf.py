"""The Split Block Bloom Filter (SBBF) of the Parquet specification, vectorized with numpy.

A filter is z blocks of 256 bits, each block eight little-endian 32-bit words. A 64-bit hash h
(see hsbloom.readers.parquet_hash) picks block ((h >> 32) * z) >> 32, and sets, in each word i of that block,
bit (lower32(h) * SALT[i]) >> 27. Every Parquet implementation (parquet-java, Arrow C++, arrow-rs,
DuckDB) computes the same bits, so a filter built here can be read by any of them and vice versa.

Serialized, a filter is the Thrift-compact `BloomFilterHeader` (numBytes, algorithm BLOCK, hash
XXHASH, compression UNCOMPRESSED; 15 to 19 bytes) followed by the bitset: exactly what a Parquet
file holds at a column chunk's bloom_filter_offset. docs/design/sbbf.md explains the choices.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from hsbloom.readers.parquet_hash import hash_array, nonnull_hashes
from hsbloom.readers.sbbf_header import (
    BLOCK_BYTES,
    MAX_BYTES,
    MIN_BYTES,
    Bytes,
    SbbfFormatError,
    _check_fpp,
    _check_num_bytes,
    header_bytes,
    optimal_num_bits,
    optimal_num_bytes,
    read_header,
)

__all__ = [
    "MAX_BYTES",
    "MIN_BYTES",
    "Sbbf",
    "SbbfFormatError",
    "optimal_num_bits",
    "optimal_num_bytes",
    "read_header",
]

SALTS = np.array(
    [0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31],
    dtype=np.uint32,
)
_SALT_COLUMN = SALTS[:, None]
_WORD_BIT_OFFSETS = (np.arange(8, dtype=np.int64) * 32)[:, None]

# Hashes are inserted/checked this many at a time, so that temporaries stay in the CPU cache.
_CHUNK = 1 << 14
# Inserting through a scratch array of one byte per filter bit (then np.packbits) is fast, but the
# scratch is 8x the filter: filters larger than this are filled one window of blocks at a time.
_SCRATCH_WINDOW_BLOCKS = 1 << 17  # 4 MiB of filter, 32 MiB of scratch


# ---------------------------------------------------------------------------------------------


def _popcount(words: np.ndarray) -> np.ndarray:
    """Set bits of each uint32 word."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words)
    return np.unpackbits(words.view(np.uint8).reshape(-1, 4), axis=1).sum(axis=1)


def _as_hashes(hashes: np.ndarray) -> np.ndarray:
    h = np.asarray(hashes)
    if h.dtype == np.int64:  # the JVM's signed longs: same bits
        return h.view(np.uint64).ravel()
    if h.dtype != np.uint64:
        raise TypeError(f"hashes must be a numpy uint64 (or int64) array, not {h.dtype}")
    return h.ravel()


class Sbbf:
    """A Parquet Split Block Bloom Filter: insert and check 64-bit hashes or Arrow values.

    Build one with `Sbbf(num_bytes)` (an exact size: a positive multiple of 32 bytes up to
    128 MiB) or `Sbbf.for_ndv(ndv, fpp)` (sized like arrow-rs: a power of two), read one with
    `Sbbf.from_bytes` (Parquet serialization) or `Sbbf.from_bitset` (bare bitset).
    """

    __slots__ = ("_words",)

    def __init__(self, num_bytes: int):
        if isinstance(num_bytes, bool) or not isinstance(num_bytes, (int, np.integer)):
            raise TypeError(f"num_bytes must be an int, not {type(num_bytes).__name__}")
        _check_num_bytes(int(num_bytes), "num_bytes")
        self._words = np.zeros(int(num_bytes) // 4, dtype=np.uint32)

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def for_ndv(cls, ndv: int, fpp: float) -> Sbbf:
        """An empty filter sized for `ndv` distinct values at false-positive probability `fpp`."""
        return cls(optimal_num_bytes(optimal_num_bits(ndv, fpp) // 8))

    @classmethod
    def from_bitset(cls, bitset: Bytes) -> Sbbf:
        """Wrap a bare bitset (little-endian uint32 words, no header); the bytes are copied."""
        data = memoryview(bitset).cast("B")
        _check_num_bytes(len(data), "bitset length")
        sbbf = cls.__new__(cls)
        sbbf._words = np.frombuffer(data, dtype="<u4").astype(np.uint32)
        return sbbf

    @classmethod
    def from_bytes(cls, blob: Bytes) -> Sbbf:
        """Read a Parquet-serialized filter (header + bitset), validating the header and that the
        buffer holds exactly numBytes after it. Raises SbbfFormatError naming the problem."""
        data = memoryview(blob).cast("B")
        header_length, num_bytes = read_header(data)
        available = len(data) - header_length
        if available != num_bytes:
            raise SbbfFormatError(
                f"Bloom filter header says the bitset has numBytes={num_bytes}, but "
                f"{available} bytes follow the {header_length}-byte header"
            )
        return cls.from_bitset(data[header_length:])

    # -- properties ---------------------------------------------------------------------------

    @property
    def num_bytes(self) -> int:
        return self._words.shape[0] * 4

    @property
    def num_blocks(self) -> int:
        return self._words.shape[0] // 8

    @property
    def bitset(self) -> bytes:
        """The bitset as Parquet stores it: little-endian uint32 words, block after block."""
        return self._words.astype("<u4", copy=False).tobytes()

    @property
    def popcount(self) -> int:
        """Number of set bits."""
        return int(_popcount(self._words).sum(dtype=np.int64))

    def to_bytes(self) -> bytes:
        """The Parquet serialization: Thrift-compact BloomFilterHeader, then the bitset."""
        return header_bytes(self.num_bytes) + self.bitset

    def copy(self) -> Sbbf:
        other = Sbbf.__new__(Sbbf)
        other._words = self._words.copy()
        return other

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sbbf):
            return NotImplemented
        return self._words.shape == other._words.shape and bool(np.array_equal(self._words, other._words))

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"Sbbf(num_bytes={self.num_bytes}, popcount={self.popcount})"

    # -- hashes -------------------------------------------------------------------------------

    def _blocks_and_keys(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        blocks = ((h >> np.uint64(32)) * np.uint64(self.num_blocks)) >> np.uint64(32)
        return blocks.view(np.int64), h.astype(np.uint32)

    def insert_hashes(self, hashes: np.ndarray) -> None:
        """Insert 64-bit hashes (numpy uint64, or int64 as the JVM hands them over)."""
        h = _as_hashes(hashes)
        if h.shape[0] == 0:
            return
        if h.shape[0] < self.num_blocks:
            self._insert_few(h)
            return
        window = min(self.num_blocks, _SCRATCH_WINDOW_BLOCKS)
        scratch = np.zeros(window * 256, dtype=np.bool_)
        for first in range(0, self.num_blocks, window):
            self._insert_window(h, first, window, scratch)

    def _insert_few(self, h: np.ndarray) -> None:
        """Few hashes for the filter's size: OR each bit straight into its word."""
        blocks, keys = self._blocks_and_keys(h)
        bits = (_SALT_COLUMN * keys) >> np.uint32(27)  # (8, n)
        words = (blocks << 3) + np.arange(8, dtype=np.int64)[:, None]
        np.bitwise_or.at(self._words, words.ravel(), (np.uint32(1) << bits).ravel())

    def _insert_window(self, h: np.ndarray, first: int, window: int, scratch: np.ndarray) -> None:
        """Set the bits of the hashes whose block is in [first, first + window), through a
        one-byte-per-bit scratch (fancy assignment tolerates duplicates; OR-into-words does not)."""
        whole = window == self.num_blocks
        for start in range(0, h.shape[0], _CHUNK):
            blocks, keys = self._blocks_and_keys(h[start : start + _CHUNK])
            if not whole:
                inside = (blocks >= first) & (blocks < first + window)
                blocks, keys = blocks[inside] - first, keys[inside]
            bits = ((_SALT_COLUMN * keys) >> np.uint32(27)).astype(np.int64)
            bits += _WORD_BIT_OFFSETS
            bits += blocks << 8
            scratch[bits] = True
        packed = np.packbits(scratch, bitorder="little").view("<u4")
        self._words[first * 8 : (first + window) * 8] |= packed
        if not whole:
            scratch.fill(False)

    def check_hashes(self, hashes: np.ndarray) -> np.ndarray:
        """For each hash, whether it may have been inserted (False means certainly not)."""
        h = _as_hashes(hashes)
        out = np.empty(h.shape[0], dtype=np.bool_)
        blocks2d = self._words.reshape(-1, 8)
        for start in range(0, h.shape[0], _CHUNK):
            blocks, keys = self._blocks_and_keys(h[start : start + _CHUNK])
            masks = np.uint32(1) << ((_SALT_COLUMN * keys) >> np.uint32(27))  # (8, n)
            words = np.take(blocks2d, blocks, axis=0).T  # (8, n)
            np.all((words & masks) != 0, axis=0, out=out[start : start + _CHUNK])
        return out

    # -- Arrow values -------------------------------------------------------------------------

    def insert(self, values: pa.Array | pa.ChunkedArray) -> None:
        """Insert every non-null value (hashed as Parquet does, see parquet_hash); nulls are
        skipped, as Parquet writers skip them (callers count nulls themselves)."""
        self.insert_hashes(nonnull_hashes(values))

    def check(self, values: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """Per value, whether it may be in the filter. A null gives False: Parquet filters hold
        no nulls, so answer `IS NULL` from null counts, never from the filter."""
        found = self.check_hashes(hash_array(values))
        if values.null_count:
            valid = values.is_valid()
            if isinstance(valid, pa.ChunkedArray):
                valid = pa.concat_arrays(valid.chunks)
            found &= valid.to_numpy(zero_copy_only=False)
        return found

    # -- combining and shrinking --------------------------------------------------------------

    def union(self, other: Sbbf) -> Sbbf:
        """A new filter holding what either holds (bitwise OR); both must be the same size."""
        result = self.copy()
        result.merge(other)
        return result

    def merge(self, other: Sbbf) -> None:
        """OR `other` into this filter, in place; both must be the same size."""
        if not isinstance(other, Sbbf):
            raise TypeError(f"can only merge another Sbbf, not {type(other).__name__}")
        if other.num_bytes != self.num_bytes:
            raise ValueError(
                f"cannot union Bloom filters of different sizes ({self.num_bytes} and {other.num_bytes} "
                "bytes): a value's block depends on the size; fold the larger one first"
            )
        self._words |= other._words

    def fold(self, num_bytes: int) -> Sbbf:
        """A new filter of `num_bytes` = this size / 2**k, each block the OR of 2**k adjacent ones.

        Because block index = ((h >> 32) * z) >> 32, halving z maps blocks 2i and 2i+1 to block i,
        so the result equals a filter built at the smaller size from the same values.
        """
        if num_bytes == self.num_bytes:
            return self.copy()
        factor, rest = divmod(self.num_bytes, num_bytes) if num_bytes > 0 else (0, 1)
        if rest or factor & (factor - 1) or num_bytes < MIN_BYTES or num_bytes % BLOCK_BYTES:
            raise ValueError(
                f"cannot fold a {self.num_bytes}-byte filter to {num_bytes} bytes: the target must be "
                "the size divided by a power of two, and a multiple of 32 bytes"
            )
        blocks = self._words.reshape(num_bytes // BLOCK_BYTES, factor, 8)
        folded = Sbbf.__new__(Sbbf)
        folded._words = np.bitwise_or.reduce(blocks, axis=1).ravel()
        return folded

    def fold_to_target_fpp(self, fpp: float) -> Sbbf:
        """The smallest fold of this filter whose estimated_fpp() stays within `fpp`.

        Halves the filter by OR-ing adjacent block pairs (arrow-rs's folding) while the folded
        filter's estimated_fpp() is at most `fpp` and the block count is even; stops at one block.
        The same rule as the Scala Sbbf.foldToTargetFpp, so both sides fold to the same size.
        Returns a new filter; this one is unchanged.
        """
        _check_fpp(fpp)
        words = self._words
        while words.shape[0] >= 16 and (words.shape[0] // 8) % 2 == 0:
            pairs = words.reshape(-1, 2, 8)
            folded = (pairs[:, 0, :] | pairs[:, 1, :]).ravel()
            if _estimated_fpp(folded) > fpp:
                break
            words = folded
        result = Sbbf.__new__(Sbbf)
        result._words = words.copy() if words is self._words else words
        return result

    def estimated_fpp(self) -> float:
        """Expected false-positive rate for a value not in the filter, from the bits set:

        mean over blocks of prod over the block's 8 words of (set bits in the word / 32).

        A probe lands in a uniformly random block and tests one uniformly random bit in each of
        its words, so this is the probability that all eight tested bits are set.
        """
        return _estimated_fpp(self._words)


def _estimated_fpp(words: np.ndarray) -> float:
    fractions = _popcount(words).reshape(-1, 8) / 32.0
    return float(np.mean(np.prod(fractions, axis=1)))
