"""Exact literals (#50): the column values the reader probes for `column = literal`, for every indexed type and
every kind of literal a Python caller passes, are those tests/vectors/exact_literals.json names (the jar's side of
the same file: ExactLiteralsSuite), and no reader the files are handed to (pyarrow, DuckDB, Polars) matches a row
of a value the reader would skip. The boundary values: +-2^53 and their neighbours, +-2^63 and beyond, the float
edges, decimals at and beyond the column's scale and precision, NaN, +-0.0, the ends of the date and timestamp
ranges, numpy scalars, strings and bytes, dates and datetimes with and without a zone.
"""

from __future__ import annotations

import pytest
from exact_literals import KEEP, case_id, cases, literal, reader_matches, verdict, within

from hsbloom.readers.literals import column_values, hashes_for

CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_reader_probes_the_values_the_golden_file_names(case):
    got = column_values(literal(case), case["column"])
    assert (KEEP if got is None else set(got)) == verdict(case["reader"], case["column"])
    assert (hashes_for(literal(case), case["column"]) is None) == (got is None)


@pytest.mark.parametrize("case", [c for c in CASES if c["reader"] != KEEP], ids=case_id)
def test_no_reader_matches_a_value_the_reader_would_skip(case):
    allowed = verdict(case["reader"], case["column"])
    refused = 0
    for reader, matched in reader_matches(case).items():
        if matched is None:
            refused += 1
            continue
        assert within(matched, allowed) is None, f"{reader} matches {within(matched, allowed)}"
    assert refused < 3, "no reader compares the column with the literal: the case shows nothing"


def test_the_golden_file_covers_every_type_and_kind_with_answers_of_each_sort():
    columns = {c["column"] for c in CASES}
    assert columns >= {"tinyint", "smallint", "int", "bigint", "float", "double", "decimal(10,2)", "decimal(38,1)",
                       "string", "binary", "date", "timestamp", "timestamp_ntz"}
    kinds = {c["kind"] for c in CASES}
    assert kinds >= {"int", "float", "decimal", "str", "bytes", "date", "datetime", "datetime_utc", "bool", "null",
                     "np.int64", "np.float32", "np.float16", "np.str_", "np.bytes_", "np.datetime64[D]", "pd.Timestamp"}
    for column in columns:
        answers = [c["reader"] for c in CASES if c["column"] == column]
        assert KEEP in answers and any(a and a != KEEP for a in answers), column
    assert any(c["reader"] != c["spark"] and c["spark"] not in ("-", "error") for c in CASES)
    assert all(c["why"] for c in CASES if c["reader"] != c["spark"] and c["spark"] not in ("-", "error"))


def test_at_two_to_the_53_duckdb_and_polars_match_the_next_long_too():
    """The defect of #50: 2^53 as a double names two longs in DuckDB and Polars, so it keeps every file."""
    case = {"column": "bigint", "kind": "float", "literal": "9007199254740992.0", "reader": KEEP, "spark": KEEP}
    matched = reader_matches(case)
    assert 2**53 in matched["duckdb"] and 2**53 + 1 in matched["duckdb"]
    assert 2**53 + 1 in matched["polars"]
    assert column_values(2.0**53, "bigint") is None and column_values(2.0**53 - 1, "bigint") == [2**53 - 1]
