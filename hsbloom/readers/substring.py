"""What a substring condition needs a value to hold: a LIKE pattern's literal runs, and byte n-grams with their hashes.

The readers' side of the jar's `hsbloom.substring` (docs/design/substring.md), for the substring filters of issue 54:
the same reading of a pattern (`%` any characters, `_` exactly one, the escape character before `%`, `_` or itself a
literal; any other use of it refused, as Spark refuses it) and the same grams (every `n` consecutive bytes of the
UTF-8 form, each hashed as Parquet hashes a BYTE_ARRAY value). tests/vectors/substring_vectors.json ties the two
languages together; tests/test_readers_substring.py also checks the runs against Spark's own LIKE.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from hsbloom.errors import InvalidArgumentError
from hsbloom.readers.literals import utf8_encodable
from hsbloom.readers.xxh64 import xxh64_bytes

__all__ = ["DEFAULT_ESCAPE", "MAX_N", "MAX_PROBED_GRAMS", "MIN_N", "gram_hashes", "like_runs", "literal_runs",
           "probed_grams", "required_grams"]

DEFAULT_ESCAPE = "\\"
# The gram lengths a filter may use, in bytes (the jar's Grams.MinN and MaxN).
MIN_N = 2
MAX_N = 8
# At most this many of a condition's grams are probed (the jar's SubstringCondition.MaxProbedGrams).
MAX_PROBED_GRAMS = 16


def like_runs(pattern: str, escape: str = DEFAULT_ESCAPE) -> Optional[list[str]]:
    """The non-empty literal runs of a LIKE `pattern`, in order; None where Spark refuses the pattern (its escape
    character before another character or at the end) or a run has no UTF-8 form (a lone surrogate)."""
    if len(escape) != 1:
        raise InvalidArgumentError(f"a LIKE escape is one character, got {escape!r}: give one, such as '!'")
    runs: list[str] = []
    run: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == escape:
            if i + 1 < len(pattern) and pattern[i + 1] in ("%", "_", escape):
                run.append(pattern[i + 1])
                i += 2
                continue
            return None
        if c in ("%", "_"):
            if run:
                runs.append("".join(run))
            run = []
        else:
            run.append(c)
        i += 1
    if run:
        runs.append("".join(run))
    return runs if all(utf8_encodable(r) for r in runs) else None


def literal_runs(literal: str) -> Optional[list[str]]:
    """The literal of startswith, endswith or contains as its one run (none when empty); None without a UTF-8 form."""
    if not utf8_encodable(literal):
        return None
    return [literal] if literal else []


def gram_hashes(value: bytes, n: int) -> np.ndarray:
    """The hashes (uint64) of the `n`-byte grams of `value`, in order, repeats included; empty when shorter than n."""
    _check_n(n)
    data = np.frombuffer(value, dtype=np.uint8)
    count = max(len(data) - n + 1, 0)
    if count == 0:
        return np.empty(0, dtype=np.uint64)
    windows = np.lib.stride_tricks.sliding_window_view(data, n).reshape(-1)
    return xxh64_bytes(windows, np.arange(0, count * n + 1, n, dtype=np.int64))


def required_grams(runs: list[str], n: int) -> Optional[set[int]]:
    """The distinct gram hashes every string holding all of `runs` holds; None when no run has `n` bytes (nothing
    to probe: every file is kept)."""
    _check_n(n)
    found: set[int] = set()
    for run in runs:
        encoded = run.encode("utf-8")
        if len(encoded) >= n:
            found.update(int(h) for h in gram_hashes(encoded, n))
    return found or None


def probed_grams(runs: list[bytes], n: int) -> list[int]:
    """The gram hashes a substring condition probes, as the jar's `SubstringCondition` chooses them: the distinct
    grams of `runs` (their bytes) in order of first occurrence, and of more than MAX_PROBED_GRAMS, that many spread
    evenly over them. Any of them missing from a file's filter proves the file holds no match; none (no run has
    `n` bytes): nothing to probe, every file is kept."""
    _check_n(n)
    distinct: dict[int, None] = {}
    for run in runs:
        if len(run) >= n:
            distinct.update((int(h), None) for h in gram_hashes(run, n))
    hashes = list(distinct)
    if len(hashes) <= MAX_PROBED_GRAMS:
        return hashes
    return [hashes[i * len(hashes) // MAX_PROBED_GRAMS] for i in range(MAX_PROBED_GRAMS)]


def _check_n(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or not MIN_N <= n <= MAX_N:
        raise InvalidArgumentError(f"a gram is {MIN_N} to {MAX_N} bytes, got {n!r}")
