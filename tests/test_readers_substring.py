"""hsbloom.readers.substring: the readers' reading of LIKE patterns and byte n-grams (docs/design/substring.md).

Against tests/vectors/substring_vectors.json, which the jar's SubstringVectorsSuite reads too, and against Spark's
own LIKE and ILIKE: over random values and patterns built to break a substring filter (wildcards, both escape
characters, multi-byte and 4-byte characters, a combining accent, characters whose lower case is longer), every
row Spark matches holds each run the reader reads and each gram those runs require, and the reader refuses no
pattern Spark reads.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from pyspark.sql import Row

from hsbloom.errors import InvalidArgumentError
from hsbloom.readers.substring import gram_hashes, like_runs, literal_runs, required_grams

VECTORS = json.loads((Path(__file__).resolve().parent / "vectors" / "substring_vectors.json").read_text())
PIECES = ["a", "b", "ab", "A", "%", "_", "\\", "!", "\u00e9", "e\u0301", "\u4e2d", "\U0001F600", "\u0130", "\u212a",
          "k", "\u00df", "SS", " "]


def _value(v: dict) -> bytes:
    return bytes.fromhex(v["hex"]) if "hex" in v else v["utf8"].encode("utf-8")


@pytest.mark.parametrize("case", VECTORS["runs"], ids=lambda c: repr(c["pattern"]))
def test_a_pattern_is_read_into_the_runs_of_the_vectors(case):
    assert like_runs(case["pattern"], case["escape"]) == case["runs"]


@pytest.mark.parametrize("case", VECTORS["grams"], ids=lambda c: f"{c['value']}-{c['n']}")
def test_a_value_has_the_grams_of_the_vectors(case):
    assert [f"{int(h):016x}" for h in gram_hashes(_value(case["value"]), case["n"])] == case["grams"]


@pytest.mark.parametrize("case", VECTORS["required"], ids=lambda c: f"{c['runs']}-{c['n']}")
def test_runs_require_the_grams_of_the_vectors(case):
    found = required_grams(case["runs"], case["n"])
    assert (None if found is None else sorted(f"{h:016x}" for h in found)) == case["grams"]


def test_literals_bad_escapes_and_gram_lengths():
    assert literal_runs("ab%_") == ["ab%_"] and literal_runs("") == [] and literal_runs("\udc00") is None
    assert like_runs("a\ud800b%") is None  # a lone surrogate has no UTF-8 form
    with pytest.raises(InvalidArgumentError, match="one character"):
        like_runs("abc", "!!")
    for n in (1, 9, 2.0, True):
        with pytest.raises(InvalidArgumentError, match="a gram is 2 to 8 bytes"):
            gram_hashes(b"abc", n)
    assert issubclass(InvalidArgumentError, ValueError)


def _random_text(rnd: random.Random, most: int) -> str:
    return "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, most)))


def test_whatever_sparks_like_and_ilike_match_holds_the_runs_and_grams_the_reader_reads(spark):
    rnd = random.Random(54)
    cases: dict[str, list] = {escape: [] for escape in ("\\", "!", "%")}
    refused = []
    for _ in range(6000):
        value = _random_text(rnd, 6)
        start = rnd.randint(0, len(value))
        cut = value[start:rnd.randint(start, len(value))]
        pattern = _random_text(rnd, 4) if rnd.random() < 0.5 else "%" + cut + rnd.choice(["%", "_", ""])
        escape = rnd.choice(list(cases))
        # A pattern Spark refuses fails its whole query: those the reader refuses are asked one at a time below.
        (cases[escape] if like_runs(pattern, escape) is not None else refused).append((value, pattern, escape))
    assert len(refused) > 100
    for value, pattern, escape in refused[:20]:  # Spark refuses them too: the reader refuses no pattern Spark reads
        escaped = escape.replace("\\", "\\\\")
        with pytest.raises(Exception, match="(?i)escape"):
            spark.createDataFrame([Row(value=value, pattern=pattern)]).selectExpr(
                f"value LIKE pattern ESCAPE '{escaped}'").collect()
    matched = 0
    for escape, rows in cases.items():
        escaped = escape.replace("\\", "\\\\")
        results = spark.createDataFrame([Row(value=v, pattern=p) for v, p, _ in rows]).selectExpr(
            "value", "pattern", f"value LIKE pattern ESCAPE '{escaped}' AS likes", "lower(value) AS lower_value",
            "lower(pattern) AS lower_pattern", f"value ILIKE pattern ESCAPE '{escaped}' AS ilikes").collect()
        for r in results:
            for matches, value, pattern in ((r.likes, r.value, r.pattern), (r.ilikes, r.lower_value, r.lower_pattern)):
                if not matches:
                    continue
                matched += 1
                runs = like_runs(pattern, escape)
                assert runs is not None, (value, pattern, escape)
                assert all(run in value for run in runs), (value, pattern, escape, runs)
                for n in (2, 3, 4):
                    required = required_grams(runs, n)
                    held = {int(h) for h in gram_hashes(value.encode("utf-8"), n)}
                    assert required is None or required <= held, (value, pattern, escape, n)
    assert matched > 1500
