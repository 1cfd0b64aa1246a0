"""The golden file of exact literals (tests/vectors/exact_literals.json) as Python values, and each reader's own
comparison of a column with a literal: what tests/test_exact_literals.py and tests/test_readers.py check the
reader's rules with.

A case names a column type, a literal (its Python kind and text) and the column values the reader may probe
(`reader`) and those the jar probes (`spark`). `neighbours` gives, for a case, the column values a reader could
take as equal to the literal by some rounding, cut or cast (the literal rounded every way, the values next to
it, the type's ends): a table of them shows which rows a reader's `column == literal` matches.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
from pathlib import Path
from typing import Any, Optional

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

GOLDEN = Path(__file__).resolve().parent / "vectors" / "exact_literals.json"
KEEP = "keep"
_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")
_INTS = {"tinyint": (pa.int8(), 8), "smallint": (pa.int16(), 16), "int": (pa.int32(), 32), "bigint": (pa.int64(), 64)}
_EPOCH = dt.datetime(1970, 1, 1)
_WIDE = decimal.Context(prec=400)


def cases() -> list[dict]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))["cases"]


def case_id(case: dict) -> str:
    return f"{case['column']}={case['kind']}:{case['literal']!r}"


def literal(case: dict) -> Any:
    """The case's literal as the Python value of its kind."""
    kind, text = case["kind"], case["literal"]
    if kind == "int":
        return int(text)
    if kind in ("np.int64", "np.int8", "np.uint64"):
        return getattr(np, kind[3:])(int(text))
    if kind == "float":
        return float(text)
    if kind in ("np.float64", "np.float32", "np.float16"):
        return getattr(np, kind[3:])(text)
    if kind == "decimal":
        return decimal.Decimal(text)
    if kind == "str":
        return text
    if kind == "np.str_":
        return np.str_(text)
    if kind == "bytes":
        return bytes.fromhex(text)
    if kind == "bytearray":
        return bytearray.fromhex(text)
    if kind == "np.bytes_":
        return np.bytes_(bytes.fromhex(text))
    if kind == "date":
        return dt.date.fromisoformat(text)
    if kind in ("datetime", "datetime_utc"):
        return dt.datetime.fromisoformat(text)
    if kind == "np.datetime64[D]":
        return np.datetime64(text, "D")
    if kind == "np.datetime64[ns]":
        return np.datetime64(text, "ns")
    if kind == "pd.Timestamp":
        return pd.Timestamp(text)
    if kind == "bool":
        return text == "true"
    if kind == "null":
        return None
    raise AssertionError(f"unknown kind {kind}")


def value(text: str, column: str) -> Any:
    """A column value's text in the golden file as the reader's column values are (literals.column_values)."""
    if column in _INTS:
        return int(text)
    if column in ("float", "double"):
        return float(text)
    match = _DECIMAL.match(column)
    if match:
        return decimal.Decimal(text).quantize(decimal.Decimal(1).scaleb(-int(match.group(2))), context=_WIDE)
    if column == "string":
        return text
    if column == "binary":
        return bytes.fromhex(text)
    if column == "date":
        return dt.date.fromisoformat(text)
    return micros(dt.datetime.fromisoformat(text))


def verdict(answer: Any, column: str) -> Any:
    """KEEP, or the set of column values (as `value` gives them)."""
    return answer if isinstance(answer, str) else {value(v, column) for v in answer}


def micros(t: dt.datetime) -> int:
    t = t.astimezone(dt.timezone.utc).replace(tzinfo=None) if t.tzinfo else t
    delta = t - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


_FIRST_MICRO = micros(dt.datetime(1, 1, 1))
_LAST_MICRO = micros(dt.datetime(9999, 12, 31, 23, 59, 59, 999999))


def arrow_type(column: str) -> pa.DataType:
    if column in _INTS:
        return _INTS[column][0]
    match = _DECIMAL.match(column)
    if match:
        return pa.decimal128(int(match.group(1)), int(match.group(2)))
    return {"float": pa.float32(), "double": pa.float64(), "string": pa.string(), "binary": pa.binary(),
            "date": pa.date32(), "timestamp": pa.timestamp("us", "UTC"), "timestamp_ntz": pa.timestamp("us")}[column]


def to_arrow_value(v: Any, column: str) -> Any:
    """A column value (as `value` gives it) as pyarrow takes it for the column's type."""
    if column == "timestamp":
        return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=v)
    if column == "timestamp_ntz":
        return _EPOCH + dt.timedelta(microseconds=v)
    return v


def neighbours(case: dict) -> list:
    """Column values a reader might take as equal to the case's literal, and the case's own values."""
    column, lit = case["column"], literal(case)
    found = []
    for answer in (case["reader"], case["spark"]):
        if isinstance(answer, list):
            found += [value(v, column) for v in answer]
    if column in _INTS:
        found += _int_neighbours(lit, _INTS[column][1])
    elif column in ("float", "double"):
        found += _float_neighbours(lit, column == "float")
    elif _DECIMAL.match(column):
        p, s = (int(g) for g in _DECIMAL.match(column).groups())
        found += _decimal_neighbours(lit, p, s)
    elif column in ("string", "binary"):
        texts = ["", "a", "1", "5", "true", "1.5", "2020-01-01"]
        if isinstance(lit, str) and _encodable(lit):
            texts += [lit, lit.strip()]
        if isinstance(lit, (bytes, bytearray, np.bytes_)):
            texts.append(bytes(lit).decode("utf-8", "replace"))
        raw = [t.encode("utf-8") for t in texts] + ([bytes(lit)] if isinstance(lit, (bytes, bytearray)) else [])
        found += texts if column == "string" else raw
    elif column == "date":
        found += _date_neighbours(lit)
    else:
        found += _timestamp_neighbours(lit, column == "timestamp")
    unique, seen = [], set()
    for v in found:
        key = (type(v), repr(v))
        if key not in seen:
            seen.add(key)
            unique.append(v)
    return unique


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _numbers(lit: Any) -> list:
    """The literal as exact numbers, when it is one (fractions for floats and decimals)."""
    if isinstance(lit, (bool, np.bool_)) or lit is None:
        return [1, 0]
    if isinstance(lit, (int, np.integer)):
        return [int(lit)]
    if isinstance(lit, (float, np.floating)):
        return [decimal.Decimal(float(lit))] if math.isfinite(float(lit)) else []
    if isinstance(lit, decimal.Decimal):
        return [lit] if lit.is_finite() else []
    return []


def _int_neighbours(lit: Any, bits: int) -> list:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    out = [0, 1, -1, low, high, 1 << 24, (1 << 24) + 1, 1 << 53, (1 << 53) + 1, -(1 << 53) - 1]
    for n in _numbers(lit):
        for whole in {math.floor(n), math.ceil(n), int(n)}:
            out += [whole + d for d in (-2, -1, 0, 1, 2)]
    return [v for v in out if low <= v <= high]


def _float_neighbours(lit: Any, narrow: bool) -> list:
    kind = np.float32 if narrow else np.float64
    out = [0.0, -0.0, math.inf, -math.inf, math.nan, float(np.finfo(kind).max), float(np.finfo(kind).smallest_subnormal),
           16777216.0, 16777218.0, 2.0**53, 2.0**53 + 2]
    candidates = []
    if isinstance(lit, (int, np.integer, float, np.floating, decimal.Decimal)) and not isinstance(lit, (bool, np.bool_)):
        try:
            candidates.append(float(lit))
        except OverflowError:
            pass
    with np.errstate(over="ignore"):
        for c in candidates:
            rounded = kind(c)
            out += [float(rounded), float(np.nextafter(rounded, kind(math.inf))),
                    float(np.nextafter(rounded, kind(-math.inf)))]
    return out


def _decimal_neighbours(lit: Any, precision: int, scale: int) -> list:
    with decimal.localcontext(_WIDE):
        unit = decimal.Decimal(1).scaleb(-scale)
        biggest = decimal.Decimal(10**precision - 1).scaleb(-scale)
        out = [decimal.Decimal(0).quantize(unit), biggest, -biggest]
        for n in _numbers(lit):
            for rounding in (decimal.ROUND_HALF_UP, decimal.ROUND_HALF_EVEN, decimal.ROUND_DOWN, decimal.ROUND_UP):
                q = decimal.Decimal(n).quantize(unit, rounding)
                out += [q - unit, q, q + unit]
        return [v for v in out if abs(v) <= biggest]


def _date_neighbours(lit: Any) -> list:
    out = [dt.date(1970, 1, 1), dt.date.min, dt.date.max, dt.date(2020, 1, 1)]
    if isinstance(lit, np.datetime64):
        lit = pd.Timestamp(lit).to_pydatetime()
    if isinstance(lit, dt.datetime):
        lit = (lit.astimezone(dt.timezone.utc) if lit.tzinfo else lit).date()
    if isinstance(lit, dt.date):
        out += [dt.date.fromordinal(lit.toordinal() + d) for d in (-1, 0, 1)
                if dt.date.min.toordinal() <= lit.toordinal() + d <= dt.date.max.toordinal()]
    return out


def _timestamp_neighbours(lit: Any, aware: bool) -> list:
    out = [0, _FIRST_MICRO, _LAST_MICRO]
    if isinstance(lit, np.datetime64):
        lit = pd.Timestamp(lit)
    if isinstance(lit, dt.datetime):
        base = micros(lit)
        if isinstance(lit, pd.Timestamp):
            base = micros(lit.floor("us").to_pydatetime())
        if lit.tzinfo is not None:  # its wall-clock time too, as a reader without zones would see it
            out.append(micros(lit.replace(tzinfo=None)))
        out += [base - 1, base, base + 1, base + 2]
    elif isinstance(lit, dt.date):
        out.append(micros(dt.datetime.combine(lit, dt.time())))
    return [v for v in out if _FIRST_MICRO <= v <= _LAST_MICRO]


def reader_matches(case: dict) -> dict:
    """Per reader (pyarrow, polars, duckdb): the neighbours its own `column == literal` matches, by position in
    `neighbours(case)`; None where the reader refuses the comparison (an error is not a wrong answer)."""
    column, lit = case["column"], literal(case)
    probes = neighbours(case)
    table = pa.table({"i": pa.array(range(len(probes)), pa.int64()),
                      "c": pa.array([to_arrow_value(v, column) for v in probes], arrow_type(column))})
    out: dict = {}
    try:
        out["pyarrow"] = table.filter(pc.field("c") == lit)["i"].to_pylist()
    except Exception:  # noqa: BLE001 - pyarrow refuses many mixed comparisons (its safe casts)
        out["pyarrow"] = None
    try:
        out["polars"] = pl.from_arrow(table).filter(pl.col("c") == lit)["i"].to_list()
    except Exception:  # noqa: BLE001
        out["polars"] = None
    connection = duckdb.connect()
    try:
        connection.register("t", table)
        out["duckdb"] = [r[0] for r in connection.execute("SELECT i FROM t WHERE c = ?", [lit]).fetchall()]
    except Exception:  # noqa: BLE001 - DuckDB takes no numpy scalar as a parameter
        out["duckdb"] = None
    finally:
        connection.close()
    return {reader: None if ids is None else [probes[i] for i in ids] for reader, ids in out.items()}


def within(matched: list, allowed: Any) -> Optional[list]:
    """The matched values outside `allowed` (a set of column values; NaN is never allowed), or None if none."""
    if allowed == KEEP:
        return None
    outside = [v for v in matched if (isinstance(v, float) and math.isnan(v)) or v not in allowed]
    return outside or None


def spark_literal(case: dict) -> str:
    """The case's literal as Spark SQL writes a value of its Python kind (as ExactLiteralsSuite writes it)."""
    kind, text = case["kind"], case["literal"]
    if kind in ("int", "np.int64", "np.int8", "np.uint64"):
        return text
    if kind in ("float", "np.float64"):
        return f"CAST('{text}' AS DOUBLE)"
    if kind == "np.float32":
        return f"CAST('{text}' AS FLOAT)"
    if kind == "decimal":
        return f"{text}BD"
    if kind in ("str", "np.str_"):
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if kind in ("bytes", "bytearray", "np.bytes_"):
        return f"X'{text}'"
    if kind == "date":
        return f"DATE '{text}'"
    if kind == "datetime":
        return f"TIMESTAMP_NTZ '{text}'"
    if kind == "datetime_utc":
        return f"TIMESTAMP '{text}'"
    if kind == "bool":
        return text
    if kind == "null":
        return "NULL"
    raise AssertionError(f"no Spark literal for kind {kind}")
