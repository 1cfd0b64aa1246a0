"""Python values as the hashes a column's filters hold: the exact-type rule of docs/design/exact-types.md.

A value is converted to the column's recorded Spark type exactly or not at all. `hashes_for` returns the
hashes to probe (two for a float/double zero: +0.0 and -0.0 compare equal but hash differently), an empty
list when the value matches no row (SQL NULL), or None when the value cannot be represented exactly in the
column's type (or is NaN, or the type is not one Parquet filters hash): then every file is kept. Each value is
encoded as its Parquet PLAIN bytes and hashed by the `xxhash` package (XXH64, seed 0).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import struct
from typing import Any, Optional

import xxhash

from hsbloom.readers.parquet_hash import min_bytes_for_precision

_INT_RANGES = {
    "tinyint": (-(1 << 7), (1 << 7) - 1),
    "smallint": (-(1 << 15), (1 << 15) - 1),
    "int": (-(1 << 31), (1 << 31) - 1),
    "bigint": (-(1 << 63), (1 << 63) - 1),
}
_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
# Integers up to 2**53 are exact as doubles: a whole float below it names one integer.
_EXACT_DOUBLE_INTEGERS = 1 << 53


def _xxh(data: bytes) -> int:
    return xxhash.xxh64_intdigest(data)


def _scalar(value: Any) -> Any:
    """numpy scalars as the Python values they hold."""
    item = getattr(value, "item", None)
    if item is not None and type(value).__module__ == "numpy":
        return item()
    return value


def is_hashable_type(spark_type: str) -> bool:
    """Whether hsbloom hashes columns of this recorded type (else the column is never probed)."""
    return (
        spark_type in _INT_RANGES
        or spark_type in ("float", "double", "string", "binary", "date", "timestamp", "timestamp_ntz")
        or _DECIMAL.match(spark_type) is not None
    )


def hashes_for(value: Any, spark_type: str) -> Optional[list[int]]:
    """The hashes to probe for `column = value` on a column of `spark_type` (see the module docstring)."""
    value = _scalar(value)
    if value is None:
        return []
    if spark_type in _INT_RANGES:
        number = _whole_number(value)
        low, high = _INT_RANGES[spark_type]
        if number is None or not low <= number <= high:
            return None
        return [_xxh(struct.pack("<q" if spark_type == "bigint" else "<i", number))]
    if spark_type in ("float", "double"):
        return _float_hashes(value, spark_type)
    if spark_type == "string":
        return [_xxh(value.encode("utf-8"))] if isinstance(value, str) and _utf8_encodable(value) else None
    if spark_type == "binary":
        return [_xxh(bytes(value))] if isinstance(value, (bytes, bytearray, memoryview)) else None
    if spark_type == "date":
        if type(value) is not dt.date:  # a datetime is a date subclass: its time would be dropped
            return None
        return [_xxh(struct.pack("<i", (value - _EPOCH_DATE).days))]
    if spark_type in ("timestamp", "timestamp_ntz"):
        micros = _micros(value, spark_type)
        return None if micros is None else [_xxh(struct.pack("<q", micros))]
    match = _DECIMAL.match(spark_type)
    if match:
        return _decimal_hashes(value, int(match.group(1)), int(match.group(2)))
    return None


def _whole_number(value: Any) -> Optional[int]:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT_DOUBLE_INTEGERS:
        return int(value)
    if isinstance(value, decimal.Decimal) and value.is_finite() and value == value.to_integral_value():
        return int(value)
    return None


def _float_hashes(value: Any, spark_type: str) -> Optional[list[int]]:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if abs(value) > _EXACT_DOUBLE_INTEGERS:
            return None
        value = float(value)
    if not isinstance(value, float) or math.isnan(value):
        return None
    fmt = "<d" if spark_type == "double" else "<f"
    if spark_type == "float":
        try:
            narrowed = struct.unpack("<f", struct.pack("<f", value))[0]
        except OverflowError:
            return None
        if narrowed != value:
            return None
    if value == 0.0:
        return [_xxh(struct.pack(fmt, 0.0)), _xxh(struct.pack(fmt, -0.0))]
    return [_xxh(struct.pack(fmt, value))]


def _utf8_encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no column value can equal it
        return False
    return True


def _micros(value: Any, spark_type: str) -> Optional[int]:
    if not isinstance(value, dt.datetime):
        return None
    if spark_type == "timestamp":
        if value.tzinfo is None or value.utcoffset() is None:
            return None  # a local time names no instant without a zone: keep every file
        delta = value - _EPOCH
    else:
        if value.tzinfo is not None:
            return None
        delta = value - _EPOCH.replace(tzinfo=None)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _decimal_hashes(value: Any, precision: int, scale: int) -> Optional[list[int]]:
    if isinstance(value, bool) or not isinstance(value, (int, decimal.Decimal)):
        return None  # a float is not compared as a decimal exactly
    number = decimal.Decimal(value)
    if not number.is_finite():
        return None
    unscaled_exact = number.scaleb(scale, context=decimal.Context(prec=200))
    if unscaled_exact != unscaled_exact.to_integral_value():
        return None  # more digits than the scale: no column value equals it
    unscaled = int(unscaled_exact)
    if abs(unscaled) >= 10**precision:
        return None
    if precision <= 9:
        return [_xxh(struct.pack("<i", unscaled))]
    if precision <= 18:
        return [_xxh(struct.pack("<q", unscaled))]
    return [_xxh(unscaled.to_bytes(min_bytes_for_precision(precision), "big", signed=True))]
