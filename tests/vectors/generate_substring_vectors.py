"""Write tests/vectors/substring_vectors.json: LIKE patterns read into literal runs, and values' byte n-grams hashed.

    .venv/bin/python tests/vectors/generate_substring_vectors.py        # rewrites the file (deterministic)

The runs are this file's table, each read by hand from Spark's LIKE (`StringUtils.escapeLikeRegex`: `%` any
characters, `_` one, the escape character before `%`, `_` or itself a literal, anything else refused); the jar's
suite also fuzzes its reading against Spark's own matching. The gram hashes are XXH64 (seed 0) of each gram's
bytes by the `xxhash` package, neither language's own XXH64. The jar's SubstringVectorsSuite and the readers'
tests/test_readers_substring.py check themselves against the file; tests/vectors/README.md gives its format.
"""

from __future__ import annotations

import json
from pathlib import Path

import xxhash

OUTPUT = Path(__file__).resolve().parent / "substring_vectors.json"

# (pattern, escape, runs or None where Spark refuses the pattern)
RUNS = [
    ("abc", "\\", ["abc"]),
    ("%abc%", "\\", ["abc"]),
    ("a_c%de", "\\", ["a", "c", "de"]),
    ("a\\%b\\_c\\\\d", "\\", ["a%b_c\\d"]),
    ("a!%b!!c%", "!", ["a%b!c"]),
    ("a\\%b", "!", ["a\\", "b"]),
    ("", "\\", []),
    ("%_%__%", "\\", []),
    ("ab\\", "\\", None),
    ("a\\bc", "\\", None),
    ("%!x", "!", None),
    ("\u00e9t\u00e9%\u4e2d\u6587_\U0001F600", "\\", ["\u00e9t\u00e9", "\u4e2d\u6587", "\U0001F600"]),
    ("e\u0301%", "\\", ["e\u0301"]),
    ("%@example.org", "\\", ["@example.org"]),
    ("/api/v2/orders/1234%", "\\", ["/api/v2/orders/1234"]),
    ("100!%%", "!", ["100%"]),
    ("%%", "%", ["%"]),
    ("a%_b", "%", ["a_b"]),
]

# (value as UTF-8, or hex for bytes that are not UTF-8; n)
GRAMS = [
    ("abcdef", 2), ("abcdef", 3), ("abcdef", 8), ("abc", 4), ("", 2), ("a", 2),
    ("\u00e9t\u00e9 \u4e2d\u6587 \U0001F600", 3), ("\u0130stanbul", 2), ("e\u0301x", 2),
    (bytes.fromhex("ff6162e4b8"), 2),
]

# (runs, n): the required grams
REQUIRED = [
    (["abcd", "x"], 3), (["ab", "x"], 3), ([], 2), (["abab"], 2), (["\u00e9\u00e9"], 4), (["/api/v2/orders/"], 4),
]


def _hash(gram: bytes) -> str:
    return f"{xxhash.xxh64_intdigest(gram, seed=0):016x}"


def _grams(value: bytes, n: int) -> list[str]:
    return [_hash(value[i:i + n]) for i in range(len(value) - n + 1)]


def _value(v: str | bytes) -> dict:
    return {"hex": v.hex()} if isinstance(v, bytes) else {"utf8": v}


def vectors() -> dict:
    required = []
    for runs, n in REQUIRED:
        grams = sorted({h for run in runs if len(run.encode()) >= n for h in _grams(run.encode(), n)})
        required.append({"runs": runs, "n": n, "grams": grams or None})
    return {
        "runs": [{"pattern": p, "escape": e, "runs": r} for p, e, r in RUNS],
        "grams": [{"value": _value(v), "n": n, "grams": _grams(v if isinstance(v, bytes) else v.encode(), n)}
                  for v, n in GRAMS],
        "required": required,
    }


def render(found: dict) -> str:
    """One entry a line, as sbbf_vectors.json is written."""
    parts = [",\n".join(f"{json.dumps(key)}: [\n" + ",\n".join(json.dumps(entry) for entry in entries) + "\n]"
                        for key, entries in found.items())]
    return "{\n" + parts[0] + "\n}\n"


if __name__ == "__main__":
    OUTPUT.write_text(render(vectors()))
