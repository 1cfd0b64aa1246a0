"""`hs.explain(df)` as a string, and the file counts of a run, for tests and benchmarks.

The explain itself is the jar's (`EXPLAIN BLOOMFILTER`, docs/sql.md): it plans the query afresh with and without
hsbloom and asks each pruned scan's file index what it keeps, so the numbers are the ones a real run would use.
The counts read a run's SQL metrics through the JVM of a classic session.
"""

from __future__ import annotations

from typing import Any

from hsbloom import jar
from hsbloom.hyperspace import Hyperspace


def explain_string(df: Any) -> str:
    """What `Hyperspace(df.sparkSession).explain(df)` prints."""
    lines: list[str] = []
    Hyperspace(df.sparkSession).explain(df, redirect_func=lines.append)
    return "\n".join(lines)


def run_explained_string(spark: Any, statement: str) -> str:
    """What `Hyperspace(spark).run_explained(statement)` prints (it runs the statement)."""
    lines: list[str] = []
    Hyperspace(spark).run_explained(statement, redirect_func=lines.append)
    return "\n".join(lines)


def forget_index_listing(spark: Any) -> None:
    """Make the next query re-read which indexes are ACTIVE (the JVM caches it; docs/pruning.md). Every index
    operation does this itself; tests that change an index behind hsbloom's back need it."""
    jar.jar_class(spark, "index_catalog").invalidate()


def files_read(df: Any) -> int:
    """Run `df` and return how many files its scans read (their own "number of files read" metric).

    It runs a new DataFrame over the same plan: Spark resets a plan's metrics
    when the same DataFrame runs again, and the file count is set only once.
    """
    return file_counts(df)[0]


def file_counts(df: Any) -> tuple[int, int | None, int | None]:
    """Run `df`; from its scans' SQL metrics: (files read, files before hsbloom pruning, files pruned by hsbloom).

    The last two are None when no scan carries hsbloom's metrics: hsbloom was
    off, or pruned no file of the query (docs/pruning.md, "Observability").
    """
    explain, plan = _executed(df)
    return (int(explain.filesRead(plan)), _optional(explain.filesBeforePruning(plan)),
            _optional(explain.filesPruned(plan)))


def row_group_counts(df: Any) -> tuple[int | None, int | None]:
    """Run `df`; from its scans' SQL metrics: (row groups before hsbloom pruning, row groups pruned by hsbloom),
    over the files an index with zones kept (docs/design/zones.md); None when no scan pruned a row group."""
    explain, plan = _executed(df)
    return _optional(explain.rowGroupsBeforePruning(plan)), _optional(explain.rowGroupsPruned(plan))


def _executed(df: Any) -> tuple[Any, Any]:
    """Run a copy of `df` (a fresh plan, so its metrics are this run's); (the jar's explain, its executed plan)."""
    fresh = df.select("*")
    fresh.collect()
    return jar.jar_class(df.sparkSession, "pruning_explain"), jar.java_dataframe(fresh).queryExecution().executedPlan()


def _optional(value: Any) -> int | None:
    """A Scala Option of a count as an int, or None."""
    return None if value.isEmpty() else int(value.get())
