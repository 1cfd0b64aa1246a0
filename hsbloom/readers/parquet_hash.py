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

The hash of arrays is hsbloom/readers/xxh64.py (vectorized); one value at a time (hash_scalar) goes through the
`xxhash` package. The jar hashes on the JVM (its hsbloom.sbbf.ParquetHash); the tests compare the two, and
both with parquet-java's and pyarrow's own filters (tests/vectors).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa

from hsbloom.readers.xxh64 import xxh64_bytes, xxh64_u32, xxh64_u64

__all__ = [
    "UnsupportedTypeError",
    "arrow_type_for",
    "hash_array",
    "hash_scalar",
    "min_bytes_for_precision",
    "nonnull_hashes",
]

_MAX_DECIMAL_PRECISION = 38
_MICROS = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": None}
_MS_PER_DAY = 86_400_000


class UnsupportedTypeError(TypeError):
    """A column type that Parquet Bloom filters (and so hsbloom) cannot hash."""


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

