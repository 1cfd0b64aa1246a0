"""Python values as the hashes a column's filters hold: which column values a literal can equal, in any reader.

The rules are docs/design/exact-types.md's, for every reader the files are handed to: Spark, DuckDB, Polars and
pyarrow. `column_values(value, type)` answers with the column values that may compare equal to `value` in
any of them, an empty list when none can (a whole float out of an int column's range, a decimal with more
digits than the column's scale, SQL NULL), or None when that is not known (a double at or beyond 2^53 for a
bigint: several longs round to it; NaN; a naive datetime for a `timestamp`): then every file is kept.
`hashes_for` hashes those values as the column's Parquet PLAIN bytes (XXH64, seed 0, by the `xxhash`
package), both zeros for a float zero. tests/vectors/exact_literals.json holds the boundary cases, with the
jar's answer beside the reader's; the tests check both languages and each reader's own comparison against it.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import struct
from typing import Any, Optional

import numpy as np
import xxhash

from hsbloom.readers.parquet_hash import min_bytes_for_precision

_INT_RANGES = {
    "tinyint": (-(1 << 7), (1 << 7) - 1),
    "smallint": (-(1 << 15), (1 << 15) - 1),
    "int": (-(1 << 31), (1 << 31) - 1),
    "bigint": (-(1 << 63), (1 << 63) - 1),
}
# Significand bits of the binary floats: an integer below 2^bits in magnitude converts exactly, and no other
# integer converts to the same value; at 2^bits and beyond, several do (2^53 + 1 rounds to 2^53 as a double).
_DOUBLE_BITS = 53
_FLOAT_BITS = 24
# Decimals of at most this many digits convert to double within 1.5 ulp, less than half a step of their scale,
# so one decimal at most converts to a given double (exact-types.md; the jar's DecimalDigitsExactInDouble).
_DECIMAL_DIGITS_EXACT_IN_DOUBLE = 15
_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_EXACT = decimal.Context(prec=400)


def _xxh(data: bytes) -> int:
    return xxhash.xxh64_intdigest(data)


class _Float(float):
    """A binary float literal of `bits` significand bits (a numpy float32 or float16; a Python float is 53)."""

    bits: int


def _literal(value: Any) -> Any:
    """`value` as the Python value it stands for; numpy floats narrower than double keep their width (a float32
    compared with a long is compared as a float32 by Spark); numpy values with no plain Python equal are None."""
    if not isinstance(value, np.generic):
        return value
    if isinstance(value, np.floating) and not isinstance(value, np.float64):
        narrow = _Float(float(value))
        narrow.bits = np.finfo(type(value)).nmant + 1
        return narrow
    if isinstance(value, (np.datetime64, np.timedelta64)):
        item = value.item()
        return item if isinstance(item, (dt.date, dt.datetime)) else _Unknown
    return value.item()


class _Unknown:
    """A literal no rule applies to (a numpy datetime64 in nanoseconds): every file is kept."""


def _bits(value: float) -> int:
    return getattr(value, "bits", _DOUBLE_BITS)


def is_hashable_type(spark_type: str) -> bool:
    """Whether hsbloom hashes columns of this recorded type (else the column is never probed)."""
    return (
        spark_type in _INT_RANGES
        or spark_type in ("float", "double", "string", "binary", "date", "timestamp", "timestamp_ntz")
        or _DECIMAL.match(spark_type) is not None
    )


def column_values(value: Any, spark_type: str) -> Optional[list]:
    """The values of a `spark_type` column that may compare equal to `value` in Spark, DuckDB, Polars or
    pyarrow ([] when none can; None when unknown). Values are ints, floats, Decimals at the column's scale,
    strs, bytes, dates, and ints of microseconds since 1970-01-01 (UTC, or local for timestamp_ntz)."""
    value = _literal(value)
    if value is None:
        return []  # `= NULL` is never true
    if value is _Unknown or isinstance(value, bool):
        return None  # DuckDB and Polars compare true with 1; Spark casts the column to boolean
    if spark_type in _INT_RANGES:
        return _integers(value, *_INT_RANGES[spark_type])
    if spark_type in ("float", "double"):
        return _floats(value, _FLOAT_BITS if spark_type == "float" else _DOUBLE_BITS)
    if spark_type == "string":
        if not isinstance(value, str):
            return None
        return [str(value)] if utf8_encodable(value) else []  # a lone surrogate equals no stored string
    if spark_type == "binary":
        if isinstance(value, (bytes, bytearray, memoryview)):
            return [bytes(value)]
        if isinstance(value, str):  # every reader compares a binary column with the string's UTF-8 bytes
            return [value.encode("utf-8")] if utf8_encodable(value) else []
        return None
    if spark_type == "date":
        return _dates(value)
    if spark_type in ("timestamp", "timestamp_ntz"):
        micros = _micros(value, spark_type)
        return None if micros is None else [micros]
    match = _DECIMAL.match(spark_type)
    if match:
        return _decimals(value, int(match.group(1)), int(match.group(2)))
    return None


def hashes_for(value: Any, spark_type: str) -> Optional[list[int]]:
    """The hashes to probe for `column = value` on a column of `spark_type`: those of `column_values` (a zero
    float as both zeros: they compare equal but hash differently); [] when no value can match; None: keep."""
    values = column_values(value, spark_type)
    if values is None:
        return None
    return [h for v in values for h in _hashes(v, spark_type)]


def _hashes(value: Any, spark_type: str) -> list[int]:
    if spark_type in _INT_RANGES:
        return [_xxh(struct.pack("<q" if spark_type == "bigint" else "<i", value))]
    if spark_type in ("float", "double"):
        fmt = "<f" if spark_type == "float" else "<d"
        if value == 0.0:
            return [_xxh(struct.pack(fmt, 0.0)), _xxh(struct.pack(fmt, -0.0))]
        return [_xxh(struct.pack(fmt, value))]
    if spark_type == "string":
        return [_xxh(value.encode("utf-8"))]
    if spark_type == "binary":
        return [_xxh(value)]
    if spark_type == "date":
        return [_xxh(struct.pack("<i", (value - _EPOCH_DATE).days))]
    if spark_type in ("timestamp", "timestamp_ntz"):
        return [_xxh(struct.pack("<q", value))]
    precision, scale = (int(g) for g in _DECIMAL.match(spark_type).groups())
    unscaled = int(value.scaleb(scale, context=_EXACT))
    if precision <= 9:
        return [_xxh(struct.pack("<i", unscaled))]
    if precision <= 18:
        return [_xxh(struct.pack("<q", unscaled))]
    return [_xxh(unscaled.to_bytes(min_bytes_for_precision(precision), "big", signed=True))]


def _integers(value: Any, low: int, high: int) -> Optional[list]:
    """An integer column: every reader compares an int or a Decimal exactly, and a float as a float of its own
    width (Spark) or as a double (DuckDB, Polars); both are exact below 2^bits."""
    if isinstance(value, int):
        return [value] if low <= value <= high else []
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if abs(value) < 2.0 ** _bits(value):
            return [int(value)] if value.is_integer() and low <= value <= high else []
        # At 2^bits and beyond several integers round to the literal, unless the column has none that large.
        return [] if max(-low, high) < 2 ** _bits(value) else None
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return None
        whole = value.to_integral_value()
        return [int(whole)] if value == whole and low <= whole <= high else []
    return None


def _floats(value: Any, column_bits: int) -> Optional[list]:
    """A float or double column. A literal that is exactly one of the column's values equals that one; an int
    is rounded to the column's type by every reader (the nearest value, as Spark's, DuckDB's and Polars'
    casts do); a double that is not exactly a float is rounded to float by Polars and compared as a double by
    Spark and DuckDB, and a Decimal that is not exact is rounded by DuckDB: unknown."""
    if isinstance(value, int):
        # int to float32 goes through double below 2^53, exactly, so the one rounding is the nearest float.
        limit = (1 << 63) if column_bits == _DOUBLE_BITS else (1 << _DOUBLE_BITS)
        if not -limit <= value < limit:
            return None
        return [_narrowed(float(value), column_bits)]
    if isinstance(value, float):
        if math.isnan(value):
            return None  # NaN = NaN is true in Spark, DuckDB and Polars, and NaN has many bit patterns
        exact = _narrowed(value, column_bits)
        return [exact] if exact == value else None
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return None
        exact = _narrowed(float(value), column_bits)
        return [exact] if math.isfinite(exact) and decimal.Decimal(exact) == value else None
    return None


def _narrowed(value: float, column_bits: int) -> float:
    """`value` rounded to the column's float type (to the nearest, infinity past the largest float)."""
    if column_bits == _DOUBLE_BITS:
        return value
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def _decimals(value: Any, precision: int, scale: int) -> Optional[list]:
    """A decimal column: an int or Decimal equals the column value of the same number, if the column's
    precision and scale hold it; a double is compared as a double, which for at most 15 digits one decimal
    at most converts to: the double rounded to the scale, if it converts back to the double."""
    if isinstance(value, float):
        if math.isnan(value) or precision > _DECIMAL_DIGITS_EXACT_IN_DOUBLE:
            return None
        if math.isinf(value):
            return []
        rounded = decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-scale), decimal.ROUND_HALF_UP,
                                                  context=_EXACT)
        if float(rounded) != value or abs(rounded.scaleb(scale, context=_EXACT)) >= 10**precision:
            return []
        return [rounded]
    if isinstance(value, int):
        value = decimal.Decimal(value)
    if not isinstance(value, decimal.Decimal) or not value.is_finite():
        return None
    unscaled = value.scaleb(scale, context=_EXACT)
    if unscaled != unscaled.to_integral_value() or abs(unscaled) >= 10**precision:
        return []  # more digits than the scale, or more than the precision: no column value equals it
    return [value.quantize(decimal.Decimal(1).scaleb(-scale), context=_EXACT)]


def _dates(value: Any) -> Optional[list]:
    """A date column: a date equals itself; a local datetime is compared as the date's midnight by every reader
    (a datetime at another time equals no date); an aware one is a date only in some time zone: unknown."""
    if type(value) is dt.date:
        return [value]
    if not isinstance(value, dt.datetime) or value.tzinfo is not None or getattr(value, "nanosecond", 0):
        return None
    return [value.date()] if value.time() == dt.time() else []


def utf8_encodable(value: str) -> bool:
    """Whether `value` has a UTF-8 form (holds no lone surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


def _micros(value: Any, spark_type: str) -> Optional[int]:
    """Microseconds of an aware datetime (timestamp) or a naive one (timestamp_ntz); a date is midnight for
    timestamp_ntz (no zone involved). Nanoseconds (a pandas Timestamp) are cut by the readers, toward zero or
    down depending on the reader: unknown."""
    if type(value) is dt.date and spark_type == "timestamp_ntz":
        value = dt.datetime.combine(value, dt.time())
    if not isinstance(value, dt.datetime) or getattr(value, "nanosecond", 0):
        return None
    if spark_type == "timestamp":
        if value.tzinfo is None or value.utcoffset() is None:
            return None  # a local time names no instant without a zone
        delta = value - _EPOCH
    else:
        if value.tzinfo is not None:
            return None
        delta = value - _EPOCH.replace(tzinfo=None)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
