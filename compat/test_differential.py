"""hsbloom never changes an answer, over every indexable type, with ANSI off and on; and a lookup of a value the
table holds reads fewer files than all.

One table of 8 Parquet files (500 rows each) holds a column of each type hsbloom indexes, one index covers them all.
Values include nulls, NaN, +-0.0, infinities, empty, unicode and quoted strings. 200 seeded random predicates, with
literals half from the data and half fresh, each written in a randomly chosen type or spelling (an int literal on a
bigint column, a string on an int, a double on an int, a date string, ...) so that Spark's casts of each version
and ANSI mode are exercised, run with hsbloom off and on in batches of 25 (one query per batch and setting). A
catalog table's CHAR and VARCHAR columns, and comparisons under collations, are compared the same way.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import struct
from collections import defaultdict
from decimal import Decimal

import pytest
from pyspark.sql import types as T

import hsbloom
from compare import selected_ids, temp_view, union_of
from hsbloom.errors import UnsupportedSourceError
from hsbloom.explain import file_counts

NUM_FILES = 8
ROWS_PER_FILE = 500
SEED = 52
PREDICATES = 200
BATCH = 25
NULL_SHARE = 0.08
# column -> its Spark type; the index covers all of them.
TYPES = {
    "b": "tinyint", "s": "smallint", "i": "int", "l": "bigint", "f": "float", "d": "double",
    "dec": "decimal(9,2)", "wdec": "decimal(30,4)", "str": "string", "bin": "binary",
    "dt": "date", "ts": "timestamp", "ntz": "timestamp_ntz",
}  # fmt: skip
COLUMNS = list(TYPES)
# Dates and timestamps are drawn as days and microseconds since the epoch, and converted by Spark when written.
RAW_SCHEMA = T.StructType(
    [T.StructField("id", T.LongType())]
    + [T.StructField(c, T.IntegerType() if c == "dt" else T.LongType()) for c in ("dt", "ts", "ntz")]
    + [T.StructField(c, t) for c, t in [
        ("b", T.ByteType()), ("s", T.ShortType()), ("i", T.IntegerType()), ("l", T.LongType()),
        ("f", T.FloatType()), ("d", T.DoubleType()), ("dec", T.DecimalType(9, 2)),
        ("wdec", T.DecimalType(30, 4)), ("str", T.StringType()), ("bin", T.BinaryType()),
    ]]
)  # fmt: skip
# é precomposed and decomposed: two strings that look alike, and must not match each other.
SPECIAL_STRINGS = ["", "ü", "日本語", "emoji 🎉", "it's", "back\\slash", "  padded  ", "NULL", "ß", "\u00e9", "e\u0301"]
SPECIAL_FLOATS = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1.0, -1.5]
EPOCH = dt.datetime(1970, 1, 1)


def f32(x: float) -> float:
    """`x` rounded to a 32-bit float, as a float column stores it."""
    return struct.unpack("f", struct.pack("f", x))[0]


def fresh_value(rng: random.Random, column: str):
    """A random value of the column's type (days or microseconds for dates and timestamps)."""
    if column == "b":
        return rng.randint(-128, 127)
    if column == "s":
        return rng.randint(-(2**15), 2**15 - 1)
    if column in ("i", "l"):
        bits = 31 if column == "i" else 63
        # A third small, so that integer literals of other types (double, string) meet values in range of them.
        return rng.randint(-(10**6), 10**6) if rng.random() < 0.3 else rng.randint(-(2**bits), 2**bits - 1)
    if column == "f":
        return rng.choice(SPECIAL_FLOATS) if rng.random() < 0.1 else f32(rng.uniform(-1e6, 1e6))
    if column == "d":
        return rng.choice(SPECIAL_FLOATS) if rng.random() < 0.1 else rng.uniform(-1e12, 1e12)
    if column == "dec":
        return Decimal(rng.randint(-(10**9) + 1, 10**9 - 1)).scaleb(-2)
    if column == "wdec":
        return Decimal(rng.randint(-(10**30) + 1, 10**30 - 1)).scaleb(-4)
    if column == "str":
        if rng.random() < 0.15:
            return rng.choice(SPECIAL_STRINGS)
        return "".join(rng.choice("abcxyzé€😀'") for _ in range(rng.randint(1, 10)))
    if column == "bin":
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 8)))
    if column == "dt":
        return rng.randint(-25_000, 50_000)
    if column in ("ts", "ntz"):
        return rng.randint(-(10**15), 4 * 10**15)
    raise AssertionError(column)


class Table:
    """The table's rows as drawn (raw values), and which files hold each value of a column."""

    def __init__(self, rows: list[dict]):
        self.rows = rows
        self.present = {c: [r[c] for r in rows if r[c] is not None] for c in COLUMNS}

    def files_holding(self, column: str, value) -> set[int]:
        return {r["id"] // ROWS_PER_FILE for r in self.rows if r[column] is not None and r[column] == value}

    def rarest(self, column: str, wanted=lambda v: True):
        """A value of the column held by the fewest files (NaN left out: it equals nothing)."""
        files: dict = defaultdict(set)
        for r in self.rows:
            v = r[column]
            if v is not None and not (isinstance(v, float) and math.isnan(v)) and wanted(v):
                files[v].add(r["id"] // ROWS_PER_FILE)
        return min(files, key=lambda v: (len(files[v]), repr(v)))


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    """The table written and indexed on every column; yields (its DataFrame, its rows)."""
    rng = random.Random(SEED)
    rows = [
        {"id": n, **{c: None if rng.random() < NULL_SHARE else fresh_value(rng, c) for c in COLUMNS}}
        for n in range(NUM_FILES * ROWS_PER_FILE)
    ]
    path = str(tmp_path_factory.mktemp("differential") / "typed")
    # parallelize keeps the rows in order in 8 slices: file k holds ids 500k to 500k + 499.
    raw = spark.createDataFrame(
        spark.sparkContext.parallelize([tuple(r[f.name] for f in RAW_SCHEMA.fields) for r in rows], NUM_FILES),
        RAW_SCHEMA,
    )
    raw.selectExpr(
        "id", "b", "s", "i", "l", "f", "d", "dec", "wdec", "str", "bin",
        "date_from_unix_date(dt) AS dt", "timestamp_micros(ts) AS ts",
        "cast(timestamp_micros(ntz) AS timestamp_ntz) AS ntz",
    ).write.parquet(path)  # fmt: skip
    df = spark.read.parquet(path)
    assert dict(df.dtypes) == {"id": "bigint", **TYPES} and len(df.inputFiles()) == NUM_FILES
    hsbloom.Hyperspace(spark).create_index(df, hsbloom.BFIndexConfig("typed", COLUMNS))
    return df, Table(rows)


def sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def timestamp_text(micros: int) -> str:
    return (EPOCH + dt.timedelta(microseconds=micros)).isoformat(sep=" ")


def date_text(days: int) -> str:
    return (dt.date(1970, 1, 1) + dt.timedelta(days=days)).isoformat()


def literal(column: str, value, rng: random.Random, in_list: bool = False) -> str:
    """`value` as a SQL literal to compare `column` with, in a spelling and type chosen at random (for a binary
    column's IN list always binary: Spark refuses a string among binary items)."""
    if value is None:
        return "NULL"
    if column in ("b", "s", "i", "l"):
        spellings = [str(value), f"{value}L", f"{value}BD", f"'{value}'", f"CAST({value} AS DOUBLE)", f"{value}.5BD"]
        if abs(value) < 2**53:
            spellings.append(f"{value}.0D")
        for kind, bits in (("TINYINT", 8), ("SMALLINT", 16), ("INT", 32)):
            if -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
                spellings.append(f"CAST({value} AS {kind})")
        if rng.random() < 0.1:  # a string no value prints as, or one ANSI casts to the value
            spellings += [f"'0{abs(value)}'", f"' {value}'", f"'{value}.0'"]
        return rng.choice(spellings)
    if column in ("f", "d"):
        kind = "FLOAT" if column == "f" else "DOUBLE"
        if math.isnan(value):
            return rng.choice(["CAST('NaN' AS DOUBLE)", "CAST('NaN' AS FLOAT)"])
        if math.isinf(value):
            return f"CAST('{'-' if value < 0 else ''}Infinity' AS {kind})"
        text = repr(value)
        spellings = [f"CAST('{text}' AS DOUBLE)", f"CAST('{text}' AS {kind})", f"{text}D" if "e" not in text else text]
        if value == int(value) and abs(value) < 1e15:
            spellings += [str(int(value)), f"{int(value)}L", f"{int(value)}BD", f"'{int(value)}'"]
        if value == 0.0:
            spellings += ["-0.0D", "0.0D", "CAST('-0.0' AS FLOAT)"]
        return rng.choice(spellings)
    if column in ("dec", "wdec"):
        spellings = [f"{value}BD", f"CAST('{value}' AS DECIMAL(38, 10))", f"CAST('{value}' AS DOUBLE)", f"'{value}'"]
        if value == value.to_integral_value():
            spellings.append(str(int(value)))
        return rng.choice(spellings)
    if column == "str":
        return sql_string(value)
    if column == "bin":
        spellings = [f"X'{value.hex()}'"]
        if not in_list and value.isascii() and value.decode().isprintable():
            spellings.append(sql_string(value.decode()))
        return rng.choice(spellings)
    if column == "dt":
        text = date_text(value)
        return rng.choice([f"DATE'{text}'", f"'{text}'", f"TIMESTAMP'{text} 00:00:00'"])
    if column in ("ts", "ntz"):
        text = timestamp_text(value)
        day = text[:10]
        return rng.choice([f"TIMESTAMP'{text}'", f"TIMESTAMP_NTZ'{text}'", f"'{text}'", f"DATE'{day}'"])
    raise AssertionError(column)


def random_leaf(table: Table, rng: random.Random) -> str:
    column = rng.choice(COLUMNS)

    def value():
        return rng.choice(table.present[column]) if rng.random() < 0.5 else fresh_value(rng, column)

    kind = rng.choices(["=", "= reversed", "in", "<=>", "<=> null", "is null", "is not null", ">=", "not ="],
                       weights=[12, 4, 8, 4, 1, 3, 1, 2, 2])[0]  # fmt: skip
    if kind == "=":
        return f"`{column}` = {literal(column, value(), rng)}"
    if kind == "= reversed":
        return f"{literal(column, value(), rng)} = `{column}`"
    if kind == "in":
        items = [literal(column, value(), rng, in_list=True) for _ in range(rng.randint(1, 8))]
        return f"`{column}` IN ({', '.join(items + (['NULL'] if rng.random() < 0.2 else []))})"
    if kind == "<=>":
        return f"`{column}` <=> {literal(column, value(), rng)}"
    if kind == "<=> null":
        return f"`{column}` <=> NULL"
    if kind == "is null":
        return f"`{column}` IS NULL"
    if kind == "is not null":
        return f"`{column}` IS NOT NULL"
    if kind == ">=":
        return f"`{column}` >= {literal(column, value(), rng)}"
    return f"NOT (`{column}` = {literal(column, value(), rng)})"


def random_predicate(table: Table, rng: random.Random, depth: int = 0) -> str:
    if depth == 2 or rng.random() < 0.45:
        return random_leaf(table, rng)
    operator = rng.choice(["AND", "OR"])
    return f"({random_predicate(table, rng, depth + 1)}) {operator} ({random_predicate(table, rng, depth + 1)})"


@pytest.mark.parametrize("ansi", ["false", "true"])
def test_random_predicates_select_the_same_rows_with_hsbloom_on_and_off(spark, table, ansi):
    df, rows = table
    rng = random.Random(SEED + 1)  # the same 200 predicates with ANSI off and on
    predicates = [random_predicate(rows, rng) for _ in range(PREDICATES)]
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    differing, answered, nonempty = [], 0, 0
    for start in range(0, PREDICATES, BATCH):
        batch = predicates[start : start + BATCH]
        off = selected_ids(spark, df, batch, enabled=False)
        on = selected_ids(spark, df, batch, enabled=True)
        differing += [(p[:300], a, b) for p, a, b in zip(batch, off, on) if a != b]
        answered += sum(isinstance(a, list) for a in off)
        nonempty += sum(isinstance(a, list) and len(a) > 0 for a in off)
    assert differing == []
    # Nearly every predicate is valid SQL that runs, and many select rows: the comparison is not of empty answers.
    assert answered >= 0.8 * PREDICATES and nonempty >= 0.3 * PREDICATES, (answered, nonempty)
    # And hsbloom pruned: the first batch's scans read fewer files than all.
    hsbloom.enable(spark)
    with temp_view(df) as view:
        read, _, _ = file_counts(spark.sql(union_of(view, predicates[:BATCH])))
    assert read < BATCH * NUM_FILES, read


def typed_literal(column: str, value) -> str:
    """`value` as a literal of the column's own type."""
    if column in ("b", "s"):
        return f"CAST({value} AS {TYPES[column].upper()})"
    if column == "i":
        return str(value)
    if column == "l":
        return f"{value}L"
    if column == "f":
        return f"CAST('{value!r}' AS FLOAT)"
    if column == "d":
        return f"CAST('{value!r}' AS DOUBLE)"
    if column in ("dec", "wdec"):
        return f"CAST('{value}' AS {TYPES[column].upper()})"
    if column == "str":
        return sql_string(value)
    if column == "bin":
        return f"X'{value.hex()}'"
    if column == "dt":
        return f"DATE'{date_text(value)}'"
    return f"{'TIMESTAMP' if column == 'ts' else 'TIMESTAMP_NTZ'}'{timestamp_text(value)}'"


def point_lookups(rows: Table) -> list[tuple[str, str, object]]:
    """(column, predicate, value) of lookups that must prune: each column's rarest value in its own type, then
    literals of other types that every Spark casts exactly (docs/pruning.md, "Which filters prune")."""
    lookups = [(c, f"`{c}` = {typed_literal(c, v)}", v) for c in COLUMNS for v in [rows.rarest(c)]]
    small = lambda v: abs(v) < 10**6  # noqa: E731
    b, s, i, l = rows.rarest("b"), rows.rarest("s"), rows.rarest("i", small), rows.rarest("l", small)
    f = rows.rarest("f", lambda v: v != 0 and math.isfinite(v))
    dec, day = rows.rarest("dec"), rows.rarest("dt")
    return lookups + [
        ("b", f"b = {b}", b),  # an int literal on a tinyint column
        ("s", f"s = {s}L", s),  # a bigint literal on a smallint column
        ("i", f"i = '{i}'", i),  # a string on an int column
        ("i", f"i = {i}.0D", i),  # a double on an int column
        ("l", f"l = {l}", l),  # an int literal on a bigint column
        ("f", f"f = {f!r}D", f),  # a double on a float column
        ("dec", f"dec = {float(dec)!r}D", dec),  # a double on a decimal column
        ("dt", f"dt = '{date_text(day)}'", day),  # a string on a date column
        ("dt", f"dt IN ('{date_text(day)}', DATE'1066-10-14')", day),  # a mixed IN list
    ]


@pytest.mark.parametrize("ansi", ["false", "true"])
def test_a_lookup_of_a_held_value_reads_only_files_that_may_hold_it(spark, table, ansi):
    df, rows = table
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    lookups = point_lookups(rows)
    predicates = [predicate for _, predicate, _ in lookups]
    answers_off = selected_ids(spark, df, predicates, enabled=False)
    assert selected_ids(spark, df, predicates, enabled=True) == answers_off
    hsbloom.enable(spark)
    for (column, predicate, value), answer in zip(lookups, answers_off):
        holding = rows.files_holding(column, value)
        assert answer and 0 < len(holding) < NUM_FILES, (predicate, answer, holding)
        read, before, _ = file_counts(df.where(predicate))
        assert before == NUM_FILES and len(holding) <= read < NUM_FILES, (predicate, read, before, holding)


def test_nan_is_never_pruned_and_a_zero_finds_both_signs(spark, table):
    """NaN equals itself in Spark's comparisons, and 0.0 equals -0.0, yet their bits differ: a filter that hashed
    the bits would miss them."""
    df, rows = table
    negative = {r["id"] for r in rows.rows if r["d"] == 0.0 and math.copysign(1, r["d"]) < 0}
    positive = {r["id"] for r in rows.rows if r["d"] == 0.0 and math.copysign(1, r["d"]) > 0}
    nans = {r["id"] for r in rows.rows if r["d"] is not None and math.isnan(r["d"])}
    assert negative and positive and nans
    predicates = ["d = 0.0D", "d = -0.0D", "d IN (-0.0D, 12.5D)", "f = CAST('-0.0' AS FLOAT)",
                  "d = CAST('NaN' AS DOUBLE)", "d <=> CAST('NaN' AS DOUBLE)", "f = CAST('NaN' AS FLOAT)"]  # fmt: skip
    off = selected_ids(spark, df, predicates, enabled=False)
    assert selected_ids(spark, df, predicates, enabled=True) == off
    assert set(off[0]) == set(off[1]) == negative | positive
    assert set(off[4]) == nans
    hsbloom.enable(spark)
    assert file_counts(df.where("d = CAST('NaN' AS DOUBLE)"))[0] == NUM_FILES


# A catalog table's CHAR and VARCHAR columns, and comparisons under collations (Spark 4): each compares other bytes
# than the ones stored (CHAR pads with spaces when read; a collation makes 'ab' equal 'AB'), so a filter probed with
# the literal's own bytes would skip files that hold matches.
PADDED_ROWS = [
    "(1, 'ab', 'ab', 'ab')", "(2, 'ab  ', 'ab  ', 'ab  ')", "(3, 'AB', 'AB', 'AB')", "(4, '', '', '')",
    "(5, 'ü', 'ü', 'ü')", "(6, NULL, NULL, NULL)", "(7, 'aB ', 'aB ', 'aB ')", "(8, 'x', 'x', 'x')",
]  # fmt: skip
PADDED_PREDICATES = [
    "c = 'ab'", "c = 'ab    '", "c = 'ab        '", "c IN ('ab', 'AB')", "c = ''", "c <=> 'ü'", "c IS NULL",
    "v = 'ab'", "v = 'ab  '", "v IN ('ab  ', '')", "s = 'ab'", "s = 'ab  '", "s = 'aB '",
]  # fmt: skip
# Collations exist from Spark 4.0.
COLLATED_PREDICATES = [
    "s COLLATE UTF8_LCASE = 'ab'", "collate(s, 'UTF8_LCASE') IN ('AB', 'x')", "s = collate('AB', 'UNICODE_CI')",
    "c COLLATE UTF8_LCASE = 'AB'", "v COLLATE UNICODE_CI = 'Ab  '", "s COLLATE UTF8_BINARY = 'ab'",
]  # fmt: skip


def test_char_padding_and_collations_select_the_same_rows_with_hsbloom_on_and_off(spark):
    """A CHAR column read with padding is refused (the files hold other values than queries compare); read as stored,
    it is indexed, and every comparison selects the same rows as without hsbloom."""
    spark.sql("CREATE TABLE padded (id BIGINT, c CHAR(6), v VARCHAR(8), s STRING) USING parquet")
    hs = hsbloom.Hyperspace(spark)
    try:
        for start in range(0, len(PADDED_ROWS), 2):  # a file or two per insert
            spark.sql(f"INSERT INTO padded VALUES {', '.join(PADDED_ROWS[start : start + 2])}")
        with pytest.raises(UnsupportedSourceError, match="column 'c' is a CHAR column that Spark pads"):
            hs.create_index(spark.table("padded"), hsbloom.BFIndexConfig("padded", ["c", "v", "s"]))
        spark.conf.set("spark.sql.readSideCharPadding", "false")
        hs.create_index(spark.table("padded"), hsbloom.BFIndexConfig("padded", ["c", "v", "s"]))
        df = spark.table("padded")
        collations = int(spark.version.split(".")[0]) >= 4
        predicates = PADDED_PREDICATES + (COLLATED_PREDICATES if collations else [])
        off = selected_ids(spark, df, predicates, enabled=False)
        assert selected_ids(spark, df, predicates, enabled=True) == off
        assert [p for p, answer in zip(predicates, off) if not isinstance(answer, list)] == []  # all ran
        assert sum(1 for answer in off if answer) >= len(predicates) // 2, off
    finally:
        spark.sql("DROP TABLE IF EXISTS padded")
