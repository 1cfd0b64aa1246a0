"""Reading Scala source as text, for the tests that check the jar's sources (test_scala_layout, test_code_references)."""

from __future__ import annotations


def block_comment_end(text: str, start: int) -> int:
    """The index just past the `*/` that closes the `/*` at `start` (Scala's block comments nest), or len(text)."""
    depth, i, n = 1, start + 2, len(text)
    while i < n and depth:
        if text.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif text.startswith("*/", i):
            depth, i = depth - 1, i + 2
        else:
            i += 1
    return i
