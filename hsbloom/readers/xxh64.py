"""XXH64 in numpy uint64 arithmetic, many values per call: the hash of whole arrays.

A Python call per value with the `xxhash` package costs ~0.3 us, far more than the hash itself, so whole
arrays are hashed here; tests/test_hashing.py checks it against the `xxhash` package, which also hashes the
rare very long values and every single value (parquet_hash.hash_scalar, the reader's literals).
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np
import xxhash

__all__ = ["xxh64_bytes", "xxh64_u32", "xxh64_u64"]

# XXH64's five primes (the public XXH64 specification).
_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)
_MASK64 = (1 << 64) - 1

# Values are hashed in slices of this many so that the temporaries stay in the CPU cache.
_CHUNK = 1 << 15
# Values longer than this are hashed one call each with the xxhash package: the per-call cost is
# small next to hashing that many bytes, and the vectorized stripe loop would run once per 32 bytes
# of the longest value.
_LONG_VALUE_BYTES = 512





# ---------------------------------------------------------------------------------------------
# XXH64, vectorized. All arithmetic is on uint64 arrays, which wrap modulo 2**64 silently.


def _rotl(x: np.ndarray, r: int, tmp: np.ndarray) -> None:
    """x = rotate-left(x, r), in place."""
    np.right_shift(x, np.uint64(64 - r), out=tmp)
    np.left_shift(x, np.uint64(r), out=x)
    np.bitwise_or(x, tmp, out=x)


def _avalanche(h: np.ndarray, tmp: np.ndarray) -> None:
    np.right_shift(h, np.uint64(33), out=tmp)
    h ^= tmp
    h *= _P2
    np.right_shift(h, np.uint64(29), out=tmp)
    h ^= tmp
    h *= _P3
    np.right_shift(h, np.uint64(32), out=tmp)
    h ^= tmp


def _round(acc: np.ndarray, lane: np.ndarray, tmp: np.ndarray) -> None:
    """XXH64 round: acc = rotl(acc + lane * P2, 31) * P1, in place (lane is clobbered)."""
    lane *= _P2
    acc += lane
    _rotl(acc, 31, tmp)
    acc *= _P1


def _round_from_zero(lane: np.ndarray, tmp: np.ndarray) -> None:
    """lane = XXH64 round(0, lane), in place."""
    lane *= _P2
    _rotl(lane, 31, tmp)
    lane *= _P1


def _mix_u64_lane(h: np.ndarray, lane: np.ndarray, tmp: np.ndarray) -> None:
    """Fold one 8-byte lane of the tail into h (lane is clobbered)."""
    _round_from_zero(lane, tmp)
    h ^= lane
    _rotl(h, 27, tmp)
    h *= _P1
    h += _P4


def _mix_u32_lane(h: np.ndarray, lane: np.ndarray, tmp: np.ndarray) -> None:
    """Fold one 4-byte lane (already widened to uint64) of the tail into h (lane is clobbered)."""
    lane *= _P1
    h ^= lane
    _rotl(h, 23, tmp)
    h *= _P2
    h += _P3


def _mix_byte(h: np.ndarray, byte: np.ndarray, tmp: np.ndarray) -> None:
    byte *= _P5
    h ^= byte
    _rotl(h, 11, tmp)
    h *= _P1


def xxh64_u32(values: np.ndarray) -> np.ndarray:
    """XXH64 (seed 0) of each value's 4 little-endian bytes; `values` is any 4-byte dtype."""
    return _xxh64_fixed(np.ascontiguousarray(values).view(np.uint32), 4, _mix_u32_lane)


def xxh64_u64(values: np.ndarray, seeds: Optional[np.ndarray] = None) -> np.ndarray:
    """XXH64 of each value's 8 little-endian bytes; `values` is any 8-byte dtype. `seeds`: one seed per value
    (uint64; default 0), for chained checksums such as the zone checksum (`hashLong(v, previous)`)."""
    return _xxh64_fixed(np.ascontiguousarray(values).view(np.uint64), 8, _mix_u64_lane, seeds)


def _xxh64_fixed(
    words: np.ndarray, width: int, mix: Callable[[np.ndarray, np.ndarray, np.ndarray], None],
    seeds: Optional[np.ndarray] = None,
) -> np.ndarray:
    """XXH64 of inputs that are exactly one 4- or 8-byte tail lane: seed + P5 + length, one mix
    step, then the avalanche."""
    out = np.empty(words.shape[0], dtype=np.uint64)
    tmp = np.empty(min(_CHUNK, words.shape[0]), dtype=np.uint64)
    lane = np.empty_like(tmp)
    for start in range(0, words.shape[0], _CHUNK):
        h = out[start : start + _CHUNK]
        t, ln = tmp[: h.shape[0]], lane[: h.shape[0]]
        h.fill(_P5 + np.uint64(width))
        if seeds is not None:
            h += seeds[start : start + _CHUNK].astype(np.uint64, copy=False)  # wraps mod 2^64, as XXH64 adds
        np.copyto(ln, words[start : start + _CHUNK], casting="unsafe")  # widen u32 lanes
        mix(h, ln, t)
        _avalanche(h, t)
    return out


def xxh64_bytes(data: np.ndarray, offsets: np.ndarray, seed: int = 0) -> np.ndarray:
    """XXH64 with `seed` of the byte strings data[offsets[i]:offsets[i+1]], without a Python loop.

    `data` is a uint8 array and `offsets` a non-decreasing integer array of n+1 entries (Arrow's
    layout). Values are processed a slice at a time; within a slice, every step of the XXH64
    algorithm (32-byte stripes, then 8-, 4- and 1-byte tail steps) runs over all the values that
    still have bytes for it.
    """
    data = np.ascontiguousarray(data, dtype=np.uint8)
    offsets = np.asarray(offsets, dtype=np.int64)
    n = offsets.shape[0] - 1
    out = np.empty(max(n, 0), dtype=np.uint64)
    if n <= 0:
        return out
    # Unaligned little-endian views that read 8 or 4 bytes starting at any byte position.
    u64_at = _unaligned_view(data, "<u8")
    u32_at = _unaligned_view(data, "<u4")
    for start in range(0, n, _CHUNK):
        stop = min(start + _CHUNK, n)
        begins = offsets[start:stop]
        lengths = offsets[start + 1 : stop + 1] - begins
        out[start:stop] = _xxh64_slice(data, u64_at, u32_at, begins, lengths, seed & _MASK64)
    return out


def _unaligned_view(data: np.ndarray, dtype: str) -> np.ndarray:
    width = np.dtype(dtype).itemsize
    count = max(data.shape[0] - width + 1, 0)
    return np.ndarray(shape=(count,), dtype=dtype, buffer=data, strides=(1,))


def _xxh64_slice(
    data: np.ndarray, u64_at: np.ndarray, u32_at: np.ndarray, begins: np.ndarray, lengths: np.ndarray, seed: int
) -> np.ndarray:
    n = begins.shape[0]
    h = np.empty(n, dtype=np.uint64)
    long_values = np.flatnonzero(lengths > _LONG_VALUE_BYTES)
    stripes = lengths >> 5
    if long_values.size:
        stripes = stripes.copy()
        stripes[long_values] = 0  # hashed separately below
    _stripes(h, u64_at, begins, stripes, seed)
    h += lengths.astype(np.uint64)

    pos = begins + (stripes << 5)
    rest = lengths & 31
    tmp = np.empty(n, dtype=np.uint64)
    for step in range(3):  # up to three 8-byte lanes
        _tail_step(h, tmp, (rest >> 3) > step, lambda p: u64_at[p], pos, 8, _mix_u64_lane)
    _tail_step(h, tmp, (rest & 4) != 0, lambda p: u32_at[p].astype(np.uint64), pos, 4, _mix_u32_lane)
    for step in range(3):  # up to three single bytes
        _tail_step(h, tmp, (rest & 3) > step, lambda p: data[p].astype(np.uint64), pos, 1, _mix_byte)
    _avalanche(h, tmp)

    raw = data.data
    for i in long_values:
        b = int(begins[i])
        h[i] = xxhash.xxh64_intdigest(raw[b : b + int(lengths[i])], seed)
    return h


def _stripes(h: np.ndarray, u64_at: np.ndarray, begins: np.ndarray, stripes: np.ndarray, seed: int) -> None:
    """The 32-byte stripe phase: h = converged accumulators for values >= 32 bytes, seed + P5 otherwise."""
    h.fill(np.uint64((seed + int(_P5)) & _MASK64))
    rows = np.flatnonzero(stripes)
    if rows.size == 0:
        return
    counts = stripes[rows]
    if counts.min() != counts.max():
        # Longest first, so that the values still needing stripe s are a prefix.
        order = np.argsort(-counts, kind="stable")
        rows, counts = rows[order], counts[order]
    m = rows.shape[0]
    acc = [
        np.full(m, np.uint64((seed + int(_P1) + int(_P2)) & _MASK64), dtype=np.uint64),
        np.full(m, np.uint64((seed + int(_P2)) & _MASK64), dtype=np.uint64),
        np.full(m, np.uint64(seed), dtype=np.uint64),
        np.full(m, np.uint64((seed - int(_P1)) & _MASK64), dtype=np.uint64),
    ]
    tmp = np.empty(m, dtype=np.uint64)
    base = begins[rows]
    # Values with more than s stripes: m minus those with at most s.
    at_most = np.cumsum(np.bincount(counts))
    for s in range(int(counts[0])):
        live = m - int(at_most[s])
        p = base[:live] + 32 * s
        for lane in range(4):
            _round(acc[lane][:live], u64_at[p + 8 * lane], tmp[:live])
    merged = np.zeros(m, dtype=np.uint64)
    for lane, r in enumerate((1, 7, 12, 18)):
        v = acc[lane].copy()
        _rotl(v, r, tmp)
        merged += v
    for lane in range(4):
        v = acc[lane]  # mergeRound: acc ^= round(0, v); acc = acc * P1 + P4
        _round_from_zero(v, tmp)
        merged ^= v
        merged *= _P1
        merged += _P4
    h[rows] = merged


def _tail_step(
    h: np.ndarray,
    tmp: np.ndarray,
    wanted: np.ndarray,
    read: Callable[[np.ndarray], np.ndarray],
    pos: np.ndarray,
    width: int,
    mix: Callable[[np.ndarray, np.ndarray, np.ndarray], None],
) -> None:
    """Apply one tail step to the values selected by the boolean mask `wanted`, advancing pos."""
    count = int(np.count_nonzero(wanted))
    if count == 0:
        return
    if count == h.shape[0]:
        mix(h, read(pos), tmp)
        pos += width
        return
    rows = np.flatnonzero(wanted)
    sub = h[rows]
    mix(sub, read(pos[rows]), tmp[:count])
    h[rows] = sub
    pos[rows] += width
