"""The Parquet Bloom filter hash of Arrow values: XXH64 (seed 0) of each value's PLAIN encoding.

A value is hashed the way Spark's Parquet writer (parquet-java) hashes it when it writes a
column-chunk Bloom filter, so a filter built here is byte-identical to the one parquet-java,
Arrow or DuckDB would write for the same values:

- byte, short, int, date       -> INT32 (byte/short widened), 4 bytes little-endian
- long, timestamp, timestamp_ntz -> INT64, 8 bytes little-endian (timestamps in microseconds)
- float, double                -> the raw IEEE bits, little-endian (NaN payloads and -0.0 kept as is,
                                  exactly like parquet-java's ByteBuffer.putFloat/putDouble)
- string, binary               -> the bytes, without the 4-byte length prefix of PLAIN
- decimal(p, s)                -> unscaled value as INT32 (p <= 9), INT64 (p <= 18), else big-endian
                                  two's complement in Spark's minBytesForPrecision(p) bytes (FLBA)

XXH64 is written out here in numpy uint64 arithmetic instead of calling the `xxhash` package per
value: a Python call per value costs ~0.3 us, far more than the hash itself, while the vectorized
form hashes 10M int64 values in well under a second (docs/sbbf.md has the figures). The `xxhash`
package stays the reference the tests compare against, and hashes the rare very long values.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa
import xxhash

__all__ = [
    "UnsupportedTypeError",
    "arrow_type_for",
    "hash_array",
    "hash_scalar",
    "min_bytes_for_precision",
    "nonnull_hashes",
    "xxh64_bytes",
    "xxh64_u32",
    "xxh64_u64",
]

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

_MAX_DECIMAL_PRECISION = 38
_MICROS = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": None}
_MS_PER_DAY = 86_400_000


class UnsupportedTypeError(TypeError):
    """A column type that Parquet Bloom filters (and so hsbloom) cannot hash."""


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


def _mix_u64_lane(h: np.ndarray, lane: np.ndarray, tmp: np.ndarray) -> None:
    """Fold one 8-byte lane of the tail into h (lane is clobbered)."""
    lane *= _P2
    _rotl(lane, 31, tmp)
    lane *= _P1
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
    words = np.ascontiguousarray(values).view(np.uint32)
    out = np.empty(words.shape[0], dtype=np.uint64)
    tmp = np.empty(min(_CHUNK, words.shape[0]), dtype=np.uint64)
    lane = np.empty_like(tmp)
    for start in range(0, words.shape[0], _CHUNK):
        h = out[start : start + _CHUNK]
        t, ln = tmp[: h.shape[0]], lane[: h.shape[0]]
        h.fill(_P5 + np.uint64(4))
        np.copyto(ln, words[start : start + _CHUNK], casting="unsafe")
        _mix_u32_lane(h, ln, t)
        _avalanche(h, t)
    return out


def xxh64_u64(values: np.ndarray) -> np.ndarray:
    """XXH64 (seed 0) of each value's 8 little-endian bytes; `values` is any 8-byte dtype."""
    words = np.ascontiguousarray(values).view(np.uint64)
    out = np.empty(words.shape[0], dtype=np.uint64)
    tmp = np.empty(min(_CHUNK, words.shape[0]), dtype=np.uint64)
    lane = np.empty_like(tmp)
    for start in range(0, words.shape[0], _CHUNK):
        h = out[start : start + _CHUNK]
        t, ln = tmp[: h.shape[0]], lane[: h.shape[0]]
        h.fill(_P5 + np.uint64(8))
        np.copyto(ln, words[start : start + _CHUNK])
        _mix_u64_lane(h, ln, t)
        _avalanche(h, t)
    return out


def xxh64_bytes(data: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """XXH64 (seed 0) of the byte strings data[offsets[i]:offsets[i+1]], without a Python loop.

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
        out[start:stop] = _xxh64_slice(data, u64_at, u32_at, begins, lengths)
    return out


def _unaligned_view(data: np.ndarray, dtype: str) -> np.ndarray:
    width = np.dtype(dtype).itemsize
    count = max(data.shape[0] - width + 1, 0)
    return np.ndarray(shape=(count,), dtype=dtype, buffer=data, strides=(1,))


def _xxh64_slice(
    data: np.ndarray, u64_at: np.ndarray, u32_at: np.ndarray, begins: np.ndarray, lengths: np.ndarray
) -> np.ndarray:
    n = begins.shape[0]
    h = np.empty(n, dtype=np.uint64)
    long_values = np.flatnonzero(lengths > _LONG_VALUE_BYTES)
    stripes = lengths >> 5
    if long_values.size:
        stripes = stripes.copy()
        stripes[long_values] = 0  # hashed separately below
    _stripes(h, u64_at, begins, stripes)
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
        h[i] = xxhash.xxh64_intdigest(raw[b : b + int(lengths[i])])
    return h


def _stripes(h: np.ndarray, u64_at: np.ndarray, begins: np.ndarray, stripes: np.ndarray) -> None:
    """The 32-byte stripe phase: h = converged accumulators for values >= 32 bytes, P5 otherwise."""
    h.fill(_P5)
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
        np.full(m, np.uint64((int(_P1) + int(_P2)) & _MASK64), dtype=np.uint64),
        np.full(m, _P2, dtype=np.uint64),
        np.zeros(m, dtype=np.uint64),
        np.full(m, np.uint64((-int(_P1)) & _MASK64), dtype=np.uint64),
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
        v *= _P2
        _rotl(v, 31, tmp)
        v *= _P1
        merged ^= v
        merged *= _P1
        merged += _P4
    h[rows] = merged


def _tail_step(h, tmp, wanted, read, pos, width, mix) -> None:
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


# ---------------------------------------------------------------------------------------------
# Arrow arrays -> the Parquet physical value -> hash.


def min_bytes_for_precision(precision: int) -> int:
    """Bytes of the FIXED_LEN_BYTE_ARRAY Spark uses for a decimal of this precision.

    The smallest n with 2**(8n - 1) >= 10**precision (Spark's Decimal.minBytesForPrecision).
    """
    n = 1
    while 2 ** (8 * n - 1) < 10**precision:
        n += 1
    return n


def hash_array(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The Parquet Bloom filter hash of every value, as a uint64 array of len(values).

    One hash per position, so results line up with the input rows; at a null position the hash is
    0 and means nothing (use `values.is_valid()`; `Sbbf.insert` skips nulls, `Sbbf.check` answers
    False for them). Raises UnsupportedTypeError for types Parquet Bloom filters do not cover
    (boolean, nested, interval, ...) and ValueError for values that cannot be converted exactly
    (e.g. a nanosecond timestamp that is not a whole number of microseconds).
    """
    if isinstance(values, pa.ChunkedArray):
        parts = [hash_array(chunk) for chunk in values.chunks]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)
    if not isinstance(values, pa.Array):
        raise TypeError(f"hash_array expects a pyarrow Array or ChunkedArray, not {type(values).__name__}")
    if pa.types.is_dictionary(values.type):
        hashes = hash_array(values.dictionary)[_fixed(values.indices.fill_null(0), np.int64, cast=True)]
    else:
        hashes = _hash_plain(values)
    if values.null_count:
        hashes[~_valid_mask(values)] = 0
    return hashes


def _valid_mask(values: pa.Array) -> np.ndarray:
    return values.is_valid().to_numpy(zero_copy_only=False)


def _fixed(values: pa.Array, dtype: Any, *, cast: bool = False) -> np.ndarray:
    """The data buffer of a fixed-width array as numpy (zero-copy; null slots hold anything)."""
    if cast:
        values = values.cast(pa.from_numpy_dtype(np.dtype(dtype)))
    data = values.buffers()[1]
    if len(values) == 0 or data is None:
        return np.empty(0, dtype=dtype)
    return np.frombuffer(data, dtype=dtype, count=values.offset + len(values))[values.offset :]


def _hash_plain(values: pa.Array) -> np.ndarray:
    t = values.type
    if pa.types.is_int8(t) or pa.types.is_int16(t):
        # INT8/INT16 are stored widened to INT32 (sign-extended).
        return xxh64_u32(_fixed(values, t.to_pandas_dtype()).astype(np.int32))
    if pa.types.is_int32(t) or pa.types.is_date32(t):
        return xxh64_u32(_fixed(values, np.int32))
    if pa.types.is_int64(t):
        return xxh64_u64(_fixed(values, np.int64))
    if pa.types.is_float32(t):
        return xxh64_u32(_fixed(values, np.uint32))  # raw IEEE bits
    if pa.types.is_float64(t):
        return xxh64_u64(_fixed(values, np.uint64))  # raw IEEE bits
    if pa.types.is_date64(t):
        return xxh64_u32(_date64_to_days(values))
    if pa.types.is_timestamp(t):
        return xxh64_u64(_timestamp_to_micros(values))
    if pa.types.is_decimal(t):
        return _hash_decimal(values)
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        return _hash_plain(values.cast(pa.large_binary()))
    if (
        pa.types.is_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_string(t)
        or pa.types.is_large_binary(t)
    ):
        return _hash_var_binary(values)
    if pa.types.is_fixed_size_binary(t):
        return _hash_fixed_binary(_fixed_width_rows(values, t.byte_width))
    raise UnsupportedTypeError(_unsupported_message(t))


def _unsupported_message(t: pa.DataType) -> str:
    if pa.types.is_boolean(t):
        why = "Parquet has no Bloom filter for BOOLEAN columns (two values need no filter)"
    elif pa.types.is_nested(t):
        why = "nested columns (struct, map, list) have no single value to hash; index a leaf column"
    else:
        why = "it is not a type Spark writes to Parquet with a Bloom filter"
    return (
        f"cannot hash values of type {t}: {why}. Supported: byte, short, int, long, float, double, "
        "string, binary, date, timestamp, timestamp_ntz, decimal"
    )


def _date64_to_days(values: pa.Array) -> np.ndarray:
    ms = _fixed(values, np.int64)
    days, rem = np.divmod(ms, _MS_PER_DAY)
    _reject_inexact(values, ms, rem != 0, "date64 milliseconds that are not whole days")
    return days.astype(np.int32)


def _timestamp_to_micros(values: pa.Array) -> np.ndarray:
    unit = values.type.unit
    raw = _fixed(values, np.int64)
    factor = _MICROS[unit]
    if factor == 1:
        return raw
    if factor is None:  # nanoseconds: exact only for whole microseconds
        micros, rem = np.divmod(raw, 1000)
        _reject_inexact(values, raw, rem != 0, "timestamp[ns] values with a sub-microsecond part")
        return micros
    limit = np.iinfo(np.int64).max // factor
    _reject_inexact(values, raw, np.abs(raw) > limit, f"timestamp[{unit}] values beyond the int64 microsecond range")
    return raw * factor


def _reject_inexact(values: pa.Array, raw: np.ndarray, bad: np.ndarray, what: str) -> None:
    """Raise ValueError if any non-null value is flagged `bad`, quoting the first one's raw number."""
    if values.null_count:
        bad = bad & _valid_mask(values)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"cannot hash {what} exactly as Spark stores them "
            f"(first: raw value {int(raw[first])} of type {values.type} at position {first})"
        )


def _hash_decimal(values: pa.Array) -> np.ndarray:
    t = values.type
    if t.precision > _MAX_DECIMAL_PRECISION:
        raise UnsupportedTypeError(
            f"cannot hash values of type {t}: Spark decimals have at most {_MAX_DECIMAL_PRECISION} digits"
        )
    rows = _fixed_width_rows(values, t.byte_width)
    if t.precision <= 9:  # INT32 unscaled: the low 4 little-endian bytes
        return xxh64_u32(np.ascontiguousarray(rows[:, :4]).view(np.uint32).ravel())
    if t.precision <= 18:  # INT64 unscaled
        return xxh64_u64(np.ascontiguousarray(rows[:, :8]).view(np.uint64).ravel())
    size = min_bytes_for_precision(t.precision)  # FLBA: big-endian two's complement
    return _hash_fixed_binary(rows[:, :size][:, ::-1])


def _fixed_width_rows(values: pa.Array, width: int) -> np.ndarray:
    """The data buffer of a fixed-width array as an (n, width) uint8 matrix (zero-copy)."""
    if len(values) == 0:
        return np.empty((0, width), dtype=np.uint8)
    data = np.frombuffer(values.buffers()[1], dtype=np.uint8)
    return data[values.offset * width : (values.offset + len(values)) * width].reshape(-1, width)


def _hash_fixed_binary(rows: np.ndarray) -> np.ndarray:
    n, width = rows.shape
    offsets = np.arange(n + 1, dtype=np.int64) * width
    return xxh64_bytes(np.ascontiguousarray(rows).ravel(), offsets)


def _hash_var_binary(values: pa.Array) -> np.ndarray:
    large = pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)
    bufs = values.buffers()
    n = len(values)
    if n == 0:
        return np.empty(0, dtype=np.uint64)
    offsets = np.frombuffer(bufs[1], dtype=np.int64 if large else np.int32, count=values.offset + n + 1)
    offsets = offsets[values.offset :].astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.empty(0, np.uint8)
    return xxh64_bytes(data, offsets)


# ---------------------------------------------------------------------------------------------
# One value at a time, by Spark type name.

_SPARK_NAMES: dict[str, pa.DataType] = {
    "byte": pa.int8(),
    "tinyint": pa.int8(),
    "short": pa.int16(),
    "smallint": pa.int16(),
    "int": pa.int32(),
    "integer": pa.int32(),
    "long": pa.int64(),
    "bigint": pa.int64(),
    "float": pa.float32(),
    "real": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "binary": pa.binary(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ltz": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
}
_DECIMAL_NAME = re.compile(r"^decimal\s*(?:\(\s*(\d+)\s*,\s*(-?\d+)\s*\))?$")


def arrow_type_for(spark_type: Any) -> pa.DataType:
    """The Arrow type that holds a Spark type's values: accepts a Spark type name such as
    "int", "timestamp_ntz" or "decimal(20,2)", a pyspark DataType, or an Arrow type."""
    if isinstance(spark_type, pa.DataType):
        return spark_type
    if hasattr(spark_type, "simpleString"):  # a pyspark.sql.types.DataType
        spark_type = spark_type.simpleString()
    if not isinstance(spark_type, str):
        raise TypeError(f"expected a Spark type name, pyspark DataType or pyarrow DataType, not {spark_type!r}")
    name = spark_type.strip().lower()
    if name in _SPARK_NAMES:
        return _SPARK_NAMES[name]
    match = _DECIMAL_NAME.match(name)
    if match:
        precision, scale = (int(match.group(1)), int(match.group(2))) if match.group(1) else (10, 0)
        if not 1 <= precision <= _MAX_DECIMAL_PRECISION:
            raise UnsupportedTypeError(f"decimal precision must be 1..{_MAX_DECIMAL_PRECISION}, got {spark_type}")
        return pa.decimal128(precision, scale)
    raise UnsupportedTypeError(_unsupported_message_for_name(spark_type))


def _unsupported_message_for_name(name: str) -> str:
    return (
        f"cannot hash values of Spark type {name!r}. Supported: "
        + ", ".join(sorted(set(_SPARK_NAMES)))
        + ", decimal(p,s)"
    )


def hash_scalar(value: Any, spark_type: Any) -> int:
    """The Parquet Bloom filter hash (an unsigned 64-bit int) of one value of a Spark type.

    The value is converted to the type exactly or not at all: a float that float32 cannot hold
    exactly, or a decimal with more digits than the scale, raises ValueError.
    """
    if value is None:
        raise ValueError("a null has no Bloom filter hash (Parquet filters hold only non-null values)")
    arrow_type = arrow_type_for(spark_type)
    try:
        array = pa.array([value], type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError) as exc:
        raise ValueError(f"cannot convert {value!r} exactly to {arrow_type}: {exc}") from exc
    if pa.types.is_float32(arrow_type) and isinstance(value, float):
        stored = array[0].as_py()
        if stored != value and not (np.isnan(stored) and np.isnan(value)):
            raise ValueError(f"{value!r} is not exactly representable as a float (float32)")
    return int(hash_array(array)[0])


def nonnull_hashes(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The hashes of the non-null values only, in order: what a Parquet writer inserts."""
    hashes = hash_array(values)
    if values.null_count:
        valid = values.is_valid()
        if isinstance(valid, pa.ChunkedArray):
            valid = pa.concat_arrays(valid.chunks)
        hashes = hashes[valid.to_numpy(zero_copy_only=False)]
    return hashes
