"""Answers with hsbloom off and on, side by side: what the suite's differential checks compare.

hsbloom may only change which files a query reads, never its rows. A query's rows are compared as a sorted list of
their texts (`repr`), a multiset in which NaN equals NaN and -0.0 differs from 0.0, as the values Spark returns do.
"""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import hsbloom


def row_texts(df: Any) -> list[str]:
    """The rows of `df` as a sorted list of their texts."""
    return sorted(repr(tuple(row)) for row in df.collect())


def rows_off_and_on(spark: Any, query: Callable[[], Any]) -> tuple[list[str], list[str]]:
    """The rows of `query()` with hsbloom off, then on (it is left on)."""
    hsbloom.disable(spark)
    off = row_texts(query())
    hsbloom.enable(spark)
    return off, row_texts(query())


@contextmanager
def temp_view(df: Any) -> Iterator[str]:
    """`df` as a temporary view of its session, named afresh, for the length of the block."""
    name = f"compared_{uuid.uuid4().hex}"
    df.createOrReplaceTempView(name)
    try:
        yield name
    finally:
        df.sparkSession.catalog.dropTempView(name)


def union_of(view: str, predicates: list[str]) -> str:
    """One query of the view's rows each predicate selects, as (predicate: its number, id): one SQL statement, so one
    analysis for the batch."""
    scans = [f"SELECT {number} AS predicate, id FROM {view} WHERE ({p})" for number, p in enumerate(predicates)]
    return " UNION ALL ".join(scans)


def selected_ids(spark: Any, df: Any, predicates: list[str], enabled: bool) -> list[Any]:
    """For each predicate, the sorted ids of the rows of `df` it selects, all from one query (`union_of`). When that
    query fails, each predicate runs alone, and one that fails answers ("error", the exception's class): it must
    fail the same way with hsbloom on and off."""
    (hsbloom.enable if enabled else hsbloom.disable)(spark)
    with temp_view(df) as view:
        try:
            rows = spark.sql(union_of(view, predicates)).collect()
        except Exception:  # noqa: BLE001 - some predicate fails (analysis or run): find which, one by one
            return [_ids_alone(df, predicate) for predicate in predicates]
    found: list[list[int]] = [[] for _ in predicates]
    for row in rows:
        found[row.predicate].append(row.id)
    return [sorted(ids) for ids in found]


def _ids_alone(df: Any, predicate: str) -> Any:
    try:
        return sorted(row.id for row in df.where(predicate).select("id").collect())
    except Exception as exc:  # noqa: BLE001 - the failure is the answer
        return ("error", type(exc).__name__)
