"""File pruning never changes an answer: randomized predicates over every supported type, rule on vs off.

The data is 40 Parquet files with values drawn so that a key sits in one or a
few files; literals are drawn half from the data and half fresh, and written
in other types too (int vs bigint vs decimal vs string vs double, date vs
string vs timestamp), so the analyzer's casts are exercised.
"""

from __future__ import annotations

import math
import random
from collections import Counter
import struct
from decimal import Decimal

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

import hsbloom
from pruning_support import create_index, files_read, outcome, outcomes

NUM_FILES = 40
ROWS_PER_FILE = 100
SEED = 20240611
COLUMNS = ["b", "s", "i", "l", "f", "d", "str", "bin", "dt", "ts", "ntz", "dec1", "dec2", "dec3"]
RAW_SCHEMA = T.StructType(
    [
        T.StructField("id", T.LongType()),
        T.StructField("b", T.ByteType()),
        T.StructField("s", T.ShortType()),
        T.StructField("i", T.IntegerType()),
        T.StructField("l", T.LongType()),
        T.StructField("f", T.FloatType()),
        T.StructField("d", T.DoubleType()),
        T.StructField("str", T.StringType()),
        T.StructField("bin", T.BinaryType()),
        T.StructField("dt_days", T.IntegerType()),
        T.StructField("ts_us", T.LongType()),
        T.StructField("ntz_us", T.LongType()),
        T.StructField("dec1", T.DecimalType(5, 2)),
        T.StructField("dec2", T.DecimalType(18, 3)),
        T.StructField("dec3", T.DecimalType(30, 4)),
    ]
)
SPECIAL_STRINGS = ["", "ü", "日本語", "emoji 🎉", "it's", "back\\slash", "  padded  ", "NULL"]
SPECIAL_FLOATS = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1.0, -1.5]


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def random_value(rng: random.Random, column: str):
    """A fresh value of a column's type (raw form: days/micros for dates and timestamps)."""
    if column == "b":
        return rng.randint(-128, 127)
    if column == "s":
        return rng.randint(-32768, 32767)
    if column == "i":
        return rng.randint(-(2**31), 2**31 - 1)
    if column == "l":
        return rng.randint(-(2**63), 2**63 - 1)
    if column == "f":
        return rng.choice(SPECIAL_FLOATS) if rng.random() < 0.1 else f32(rng.uniform(-1e6, 1e6))
    if column == "d":
        return rng.choice(SPECIAL_FLOATS) if rng.random() < 0.1 else rng.uniform(-1e12, 1e12)
    if column == "str":
        if rng.random() < 0.15:
            return rng.choice(SPECIAL_STRINGS)
        return "".join(rng.choice("abcxyzé€😀'") for _ in range(rng.randint(1, 12)))
    if column == "bin":
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 8)))
    if column == "dt":
        return rng.randint(-25000, 50000)
    if column in ("ts", "ntz"):
        return rng.randint(-(10**15), 4 * 10**15)
    if column == "dec1":
        return Decimal(rng.randint(-99999, 99999)).scaleb(-2)
    if column == "dec2":
        return Decimal(rng.randint(-(10**18) + 1, 10**18 - 1)).scaleb(-3)
    if column == "dec3":
        return Decimal(rng.randint(-(10**30) + 1, 10**30 - 1)).scaleb(-4)
    raise AssertionError(column)


@pytest.fixture(scope="module")
def typed(spark, tmp_path_factory):
    """40 files of every supported type, with an index on every column. Yields (df, {column: values})."""
    rng = random.Random(SEED)
    rows = []
    for n in range(NUM_FILES * ROWS_PER_FILE):
        row = [n]
        for column in COLUMNS:
            row.append(None if rng.random() < 0.08 else random_value(rng, column))
        rows.append(tuple(row))
    directory = str(tmp_path_factory.mktemp("typed") / "data")
    raw = spark.createDataFrame(rows, RAW_SCHEMA).repartitionByRange(NUM_FILES, "id")
    raw.select(
        "id", "b", "s", "i", "l", "f", "d", "str", "bin",
        F.expr("date_from_unix_date(dt_days)").alias("dt"),
        F.expr("timestamp_micros(ts_us)").alias("ts"),
        F.expr("cast(timestamp_micros(ntz_us) as timestamp_ntz)").alias("ntz"),
        "dec1", "dec2", "dec3",
    ).write.parquet(directory)
    create_index(spark, directory, "typed_all", COLUMNS)
    df = spark.read.parquet(directory)
    collected = df.collect()
    values = {c: [r[c] for r in collected] for c in COLUMNS}
    yield df, values, rng
    hsbloom.disable(spark)


def sql_string(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def render(column: str, value, rng: random.Random) -> str:
    """`value` as a SQL literal for comparing with `column`, in a randomly chosen spelling/type."""
    if value is None:
        return "NULL"
    if column in ("b", "s", "i", "l"):
        spellings = [str(value), f"{value}L", f"{value}BD", f"{value}.0BD", f"'{value}'", f"CAST({value} AS DOUBLE)"]
        if -128 <= value <= 127:
            spellings.append(f"CAST({value} AS TINYINT)")
        if abs(value) < 2**31:
            spellings.append(f"CAST({value} AS INT)")
        if column != "l" or abs(value) < 2**53:
            spellings.append(f"{value}.0D")
        spellings.append(f"{value}.5BD")  # never equal to an integer
        return rng.choice(spellings)
    if column in ("f", "d"):
        if math.isnan(value):
            return rng.choice(["CAST('NaN' AS DOUBLE)", "CAST('NaN' AS FLOAT)"])
        if math.isinf(value):
            return f"CAST('{'-' if value < 0 else ''}Infinity' AS {'FLOAT' if column == 'f' else 'DOUBLE'})"
        text = repr(value)
        spellings = [f"CAST('{text}' AS DOUBLE)", f"CAST('{text}' AS FLOAT)", f"{text}D" if "e" not in text else text]
        if value == int(value) and abs(value) < 1e15:
            spellings += [str(int(value)), f"{int(value)}L", f"{int(value)}BD"]
        if value == 0.0:
            spellings += ["-0.0D", "0.0D", "CAST('-0.0' AS FLOAT)"]
        return rng.choice(spellings)
    if column == "str":
        return sql_string(value)
    if column == "bin":
        spellings = [f"X'{value.hex()}'"]
        try:
            text = value.decode("ascii")
            if text.isprintable():
                spellings.append(sql_string(text))
        except UnicodeDecodeError:
            pass
        return rng.choice(spellings)
    if column == "dt":
        text = value.isoformat() if hasattr(value, "isoformat") else str(value)
        return rng.choice([f"DATE'{text}'", f"'{text}'", f"TIMESTAMP'{text} 00:00:00'"])
    if column in ("ts", "ntz"):
        text = value.isoformat(sep=" ")
        kind = "TIMESTAMP" if column == "ts" else "TIMESTAMP_NTZ"
        return rng.choice([f"{kind}'{text}'", f"'{text}'", f"DATE'{value.date().isoformat()}'",
                           f"TIMESTAMP'{text}'", f"TIMESTAMP_NTZ'{text}'"])
    if column.startswith("dec"):
        spellings = [f"{value}BD", f"CAST('{value}' AS DECIMAL(38, 10))", f"CAST('{value}' AS DOUBLE)"]
        if value == value.to_integral_value() and abs(value) < 2**62:
            spellings.append(str(int(value)))
        return rng.choice(spellings)
    raise AssertionError(column)


def python_value(column: str, raw):
    """A raw random value (days / micros) as the Python object Spark returns for the column."""
    import datetime as dt

    if raw is None:
        return None
    if column == "dt":
        return dt.date(1970, 1, 1) + dt.timedelta(days=raw)
    if column in ("ts", "ntz"):
        return dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=raw)
    return raw


def pick(values, column, rng):
    """Half the time a value from the data, else a fresh one."""
    if rng.random() < 0.5:
        present = [v for v in values[column] if v is not None]
        return rng.choice(present)
    return python_value(column, random_value(rng, column))


def random_leaf(values, rng) -> str:
    column = rng.choice(COLUMNS)
    kind = rng.choices(["eq", "eq_rev", "in", "big_in", "nullsafe", "nullsafe_null", "isnull", "notnull", "range", "not"],
                       weights=[12, 4, 8, 1, 4, 2, 4, 2, 2, 2])[0]
    lit = lambda: render(column, pick(values, column, rng), rng)  # noqa: E731
    if kind == "eq":
        return f"`{column}` = {lit()}"
    if kind == "eq_rev":
        return f"{lit()} = `{column}`"
    if kind == "in":
        items = [lit() for _ in range(rng.randint(1, 12))] + (["NULL"] if rng.random() < 0.2 else [])
        return f"`{column}` IN ({', '.join(items)})"
    if kind == "big_in":
        n = rng.choice([20, 100, 5000])
        items = [render(column, pick(values, column, rng), random.Random(0)) for _ in range(n)]
        return f"`{column}` IN ({', '.join(items)})"
    if kind == "nullsafe":
        return f"`{column}` <=> {lit()}"
    if kind == "nullsafe_null":
        return f"`{column}` <=> NULL"
    if kind == "isnull":
        return f"`{column}` IS NULL"
    if kind == "notnull":
        return f"`{column}` IS NOT NULL"
    if kind == "range":
        return f"`{column}` >= {lit()}"
    return f"NOT ({column} = {lit()})"


def random_predicate(values, rng, depth: int = 0) -> str:
    if depth >= 2 or rng.random() < 0.45:
        return random_leaf(values, rng)
    op = rng.choice(["AND", "OR"])
    return f"({random_predicate(values, rng, depth + 1)}) {op} ({random_predicate(values, rng, depth + 1)})"


def test_random_predicates_same_rows_with_and_without_pruning(spark, typed):
    df, values, _ = typed
    rng = random.Random(SEED + 1)
    mismatches = []
    answered = 0
    for _ in range(8):
        predicates = [random_predicate(values, rng) for _ in range(12)]
        offs = outcomes(spark, df, predicates, enabled=False)
        ons = outcomes(spark, df, predicates, enabled=True)
        for predicate, off, on in zip(predicates, offs, ons):
            if on != off:
                mismatches.append((predicate[:300], off if isinstance(off, tuple) else len(off),
                                   on if isinstance(on, tuple) else len(on)))
            answered += not isinstance(off, tuple)
    assert mismatches == []
    assert answered >= 80  # the generator writes valid SQL, so nearly every predicate runs


@pytest.mark.parametrize("column", COLUMNS)
def test_lookup_of_a_present_value_reads_fewer_files(spark, typed, column):
    df, values, _ = typed
    present = [v for v in values[column] if v is not None and not (isinstance(v, float) and math.isnan(v))]
    counts = Counter(present)
    value = min(counts, key=lambda v: (counts[v], repr(v)))  # the rarest value: it sits in few files
    predicate = df[column] == F.lit(value) if column not in ("f",) else df[column] == F.lit(value).cast("float")
    hsbloom.disable(spark)
    expected = sorted(r.id for r in df.where(predicate).collect())
    read_off = files_read(df.where(predicate))
    hsbloom.enable(spark)
    got = sorted(r.id for r in df.where(predicate).collect())
    read_on = files_read(df.where(predicate))
    assert got == expected and got
    assert read_off == NUM_FILES
    assert read_on < read_off, f"{column} = {value!r} read {read_on} of {read_off} files"


@pytest.mark.parametrize("size", [1, 10, 5000])
def test_in_lists_agree_and_short_ones_prune(spark, typed, size):
    """An IN of n values passes a file's filter with probability about 1 - (1 - fpp)^n, so
    5,000 values at fpp 0.01 read every file; the answer must still be the same."""
    df, values, _ = typed
    rng = random.Random(size)
    present = [v for v in values["l"] if v is not None][:1]
    items = present + [random_value(rng, "l") for _ in range(size - 1)]
    predicate = f"l IN ({', '.join(f'{v}L' for v in items)})"
    hsbloom.disable(spark)
    expected = sorted(r.id for r in df.where(predicate).collect())
    hsbloom.enable(spark)
    assert sorted(r.id for r in df.where(predicate).collect()) == expected
    assert len(expected) >= 1
    if size <= 10:
        assert files_read(df.where(predicate)) < NUM_FILES // 2


def test_zero_matches_both_signs_and_nan_never_prunes(spark, typed):
    df, values, _ = typed
    for predicate in ["d = 0.0D", "d = -0.0D", "f = CAST('-0.0' AS FLOAT)", "d IN (0.0D, 1.5D)",
                      "d = CAST('NaN' AS DOUBLE)", "f = CAST('NaN' AS FLOAT)", "d <=> CAST('NaN' AS DOUBLE)"]:
        off = outcome(spark, df, predicate, enabled=False)
        on = outcome(spark, df, predicate, enabled=True)
        assert on == off, predicate
        assert off, f"the data holds rows for {predicate}"
    hsbloom.enable(spark)
    assert files_read(df.where("d = CAST('NaN' AS DOUBLE)")) == NUM_FILES


def test_literals_no_column_value_can_equal_prune_everything(spark, typed):
    df, _, _ = typed
    hsbloom.enable(spark)
    # cast(l as double) = 2.5 cannot hold for any long; 2^60 is out of an int's range.
    for predicate in ["cast(l as double) = 2.5D", "cast(i as bigint) = 1152921504606846976"]:
        assert df.where(predicate).count() == 0
        assert files_read(df.where(predicate)) == 0, predicate


def one_present(values, column):
    return next(v for v in values[column] if v is not None)


@pytest.mark.parametrize("ansi", ["false", "true"])
def test_mixed_type_in_lists_and_numeric_coercions_prune_exactly(spark, typed, ansi):
    """With ANSI off, Spark compares `i IN ('205', 305)` and `dt IN ('2020-07-24', DATE ...)` as strings: a
    canonical literal ('205') is one value's text, a non-canonical one ('0205', ' 205', '2020-7-24') no value's;
    `dec1 = 205.25D` is compared as doubles. With ANSI on, the strings are cast to the column's type instead."""
    df, values, _ = typed
    i, dt, dec = one_present(values, "i"), one_present(values, "dt"), one_present(values, "dec1")
    pruned = [
        f"i IN ('{i}', 305)",
        f"dt IN ('{dt.isoformat()}', DATE '2020-01-02')",
        f"dec1 = {float(dec)}D",
        f"dec1 IN ({float(dec)}D, 1.5D)",
    ]
    adversarial = [
        f"i IN ('0{abs(i)}', '{i}.0')", f"i IN (' {i}', '+{abs(i)}')", f"i = '{i} '",
        f"dt = '{dt.year}-{dt.month}-{dt.day}'", f"dt IN ('{dt.isoformat()}T00:00:00', '{dt.isoformat()}')",
        "dec1 = CAST('NaN' AS DOUBLE)", "dec1 IN (-0.0D, 0.0D)", f"dec1 = {float(dec) + 0.001}D",
        "dec1 = 1e300D", "dec2 = 1.5D", "dec1 IN ('1.50', 2)", f"i IN ({i}, '{i}', {i}L, {i}.0D, NULL)",
    ]
    # Strings no value's type can hold: null with ANSI off, an error with ANSI on (the same error either way).
    invalid = ["i IN ('99999999999', 'x')", f"dt IN ('{dt.isoformat()} ', 'x')"]
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    try:
        predicates = pruned + adversarial
        # One query each way (a union of one filtered scan per predicate); the invalid ones one by one.
        offs = outcomes(spark, df, predicates, enabled=False) + [outcome(spark, df, p, False) for p in invalid]
        ons = outcomes(spark, df, predicates, enabled=True) + [outcome(spark, df, p, True) for p in invalid]
        predicates = predicates + invalid
        assert [p for p, off, on in zip(predicates, offs, ons) if off != on] == []
        if ansi == "false":
            hsbloom.enable(spark)
            for p in pruned:
                assert offs[predicates.index(p)], p
                assert files_read(df.where(p)) < NUM_FILES // 2, p
    finally:
        spark.conf.unset("spark.sql.ansi.enabled")
        hsbloom.disable(spark)


def test_an_in_list_of_20000_values_is_probed_whole(spark, typed):
    """No count bounds an IN list: all 20,000 values are probed (at fpp 0.01 each absent value passes a file's
    filter 1 time in 100, so here every file may match; the answer is the one the data gives)."""
    from hsbloom.explain import explain_string

    df, values, _ = typed
    present = one_present(values, "i")
    taken = set(values["i"])
    absent = [v for v in range(-(2**31), -(2**31) + 40_000, 2) if v not in taken][:19_999]
    predicate = f"i IN ({', '.join(map(str, [present, *absent]))})"  # one SQL text: no py4j call per value
    wanted = set([present, *absent])
    hsbloom.enable(spark)
    found = sorted(r.i for r in df.where(predicate).select("i").collect())
    assert found == sorted(v for v in values["i"] if v in wanted) and found
    assert "Probe(i, 20000 hash(es))" in explain_string(df.where(predicate))
