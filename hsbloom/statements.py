"""The SQL text of hsbloom's statements (docs/sql.md), as the Python facade sends them.

Python reaches the jar through SQL only, on a classic session and on Spark Connect alike: every value is quoted
here, identifiers in backquotes and literals as SQL strings, so nothing a caller passes can change a statement's
meaning.
"""

from __future__ import annotations

import math
from typing import Sequence


def identifier(name: str) -> str:
    """`name` as a quoted SQL identifier (backquotes doubled)."""
    return "`" + name.replace("`", "``") + "`"


def literal(value: object) -> str:
    """A SQL literal for a bool, int, float or str. A NaN or infinite float, which SQL has no number for, is sent as
    the string the jar reads it from ('NaN', 'Infinity'), so the jar's range check refuses it by its value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return literal("NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity"))
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    raise TypeError(f"no SQL literal for {type(value).__name__}")


def create(name: str, source_view: str, columns: Sequence[str], options: dict[str, object]) -> str:
    given = ", ".join(f"{key} = {literal(value)}" for key, value in options.items() if value is not None)
    return (
        f"CREATE BLOOMFILTER INDEX {identifier(name)} ON {identifier(source_view)} "
        f"({', '.join(identifier(c) for c in columns)})" + (f" OPTIONS ({given})" if given else "")
    )


def refresh(name: str, mode: str) -> str:
    return f"REFRESH BLOOMFILTER INDEX {identifier(name)} {mode.upper()}"


def drop(name: str, force: bool) -> str:
    return f"DROP BLOOMFILTER INDEX {identifier(name)}" + (" FORCE" if force else "")


def simple(verb: str, name: str) -> str:
    """RESTORE, VACUUM, CANCEL, DESCRIBE, VERIFY of one index."""
    return f"{verb} BLOOMFILTER INDEX {identifier(name)}"


def show_indexes() -> str:
    return "SHOW BLOOMFILTER INDEXES"


def show_files(name: str) -> str:
    return f"SHOW FILES IN BLOOMFILTER INDEX {identifier(name)}"


def explain(source_view: str) -> str:
    return f"EXPLAIN BLOOMFILTER SELECT * FROM {identifier(source_view)}"


def explain_analyze(statement: str) -> str:
    return f"EXPLAIN BLOOMFILTER ANALYZE {statement}"
