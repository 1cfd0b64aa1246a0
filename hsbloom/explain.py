"""`hs.explain(df)`: what hsbloom does to a query.

The work is in the jar (jvm/src/main/scala/hsbloom/PruningExplain.scala): it
plans the query afresh with and without hsbloom and asks each pruned scan's
file index what it keeps, so the numbers are the ones a real run would use.
"""

from __future__ import annotations

from typing import Any

from hsbloom import jar


def explain_string(df: Any) -> str:
    """The physical plan with and without hsbloom, the indexes used, and files before and after pruning."""
    from pyspark.sql import DataFrame

    if not isinstance(df, DataFrame):
        raise TypeError(f"explain needs a pyspark DataFrame, got {type(df).__name__}")
    return jar.jar_class(df.sparkSession, "pruning_explain").explain(jar.java_dataframe(df))


def run_explained_string(spark: Any, statement: str) -> str:
    """Run the SQL `statement`; what hsbloom pruned while it ran and what the join rules decided.

    For a Delta DELETE, UPDATE or MERGE, which plans its scans only while it runs (docs/upserts.md).
    """
    if not isinstance(statement, str):
        raise TypeError(f"run_explained needs a SQL statement as a str, got {type(statement).__name__}")
    return jar.jar_class(spark, "statement_explain").run(jar.java_session(spark), statement)


def forget_index_listing(spark: Any) -> None:
    """Make the next query re-read which indexes are ACTIVE (the JVM caches it; docs/pruning.md)."""
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
