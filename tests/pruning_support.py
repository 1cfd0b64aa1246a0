"""Helpers for the file-pruning tests: creating indexes and measuring what a scan read."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Sequence

import hsbloom
from pyspark.sql import functions as F


def create_index(
    spark: Any,
    directory: str,
    name: str,
    columns: Sequence[str],
    fpp: float = 0.01,
    fmt: str = "parquet",
    df: Any = None,
) -> str:
    """Index `columns` of the files at `directory` (or of `df`) through the public API; returns the data path."""
    hs = hsbloom.Hyperspace(spark)
    source = df if df is not None else spark.read.format(fmt).load(directory)
    hs.create_index(source, hsbloom.BFIndexConfig(name, list(columns), fpp=fpp, global_filter=False))
    return hs.index(name).data_path


def outcomes(spark, df, predicates: list[str], enabled: bool) -> list:
    """The ids each predicate selects, from one query (a union of one filtered scan per predicate)."""
    (hsbloom.enable if enabled else hsbloom.disable)(spark)
    union = None
    for n, predicate in enumerate(predicates):
        part = df.where(predicate).select(F.lit(n).alias("q"), "id")
        union = part if union is None else union.unionAll(part)
    try:
        rows = union.collect()
    except Exception:  # noqa: BLE001 - one predicate raised: run them one by one
        return [outcome(spark, df, p, enabled) for p in predicates]
    found = [[] for _ in predicates]
    for r in rows:
        found[r.q].append(r.id)
    return [sorted(ids) for ids in found]


def outcome(spark, df, predicate: str, enabled: bool):
    (hsbloom.enable if enabled else hsbloom.disable)(spark)
    try:
        return sorted(r.id for r in df.where(predicate).select("id").collect())
    except Exception as exc:  # noqa: BLE001 - an error must be the same error either way
        return ("error", type(exc).__name__)


from hsbloom.explain import files_read  # noqa: E402,F401  (tests import it from here)


def scan_counts(df: Any) -> tuple[int, int | None, int | None]:
    """Run `df` once: (files read, row groups of files with zones before hsbloom pruning, row groups pruned), the
    counts `files_read` and `row_group_counts` each run the query for, from one run's scan metrics."""
    from hsbloom import jar

    fresh = df.select("*")  # a fresh plan: the metrics are this run's
    fresh.collect()
    plan = jar.java_dataframe(fresh).queryExecution().executedPlan()
    explain = jar.jar_class(df.sparkSession, "pruning_explain")
    optional = lambda value: None if value.isEmpty() else int(value.get())  # noqa: E731
    return int(explain.filesRead(plan)), optional(explain.rowGroupsBeforePruning(plan)), optional(
        explain.rowGroupsPruned(plan))


_SCAN = "org.apache.spark.sql.execution.FileSourceScanExec"


def files_listed(df: Any) -> tuple[list[set[str]], list[dict[str, int]]]:
    """Run `df`; per file scan of its executed plan, in plan order (a union's branches in order), the local paths
    of the files the scan listed, and its hsbloom metrics by name (none when it pruned nothing; "number of files
    read" is the listing's size). The listing is the scan's own
    (`selectedPartitions`): after partition pruning, hsbloom's pruning and any skipping of the source's own (Delta's
    statistics), so the files the Spark rule keeps; `df.inputFiles()` is the relation's whole listing."""
    from hsbloom import jar

    fresh = df.select("*")  # a fresh plan: the listing and metrics are this run's
    fresh.collect()
    plan = jar.java_dataframe(fresh).queryExecution().executedPlan()
    scans: list = []
    metrics: list = []

    def is_scan(node) -> bool:
        c = node.getClass()
        while c is not None:
            if c.getName() == _SCAN:
                return True
            c = c.getSuperclass()
        return False

    def visit(node) -> None:
        name = node.getClass().getSimpleName()
        if name == "AdaptiveSparkPlanExec":
            return visit(node.executedPlan())
        if name.endswith("QueryStageExec"):
            return visit(node.plan())
        if is_scan(node):
            scans.append({f.filePath().toPath().toUri().getPath()
                          for f in node.selectedPartitions().toPartitionArray()})
            found = {}
            for name in ("hsbloomFilesBefore", "hsbloomFilesPruned", "hsbloomRowGroupsBefore", "hsbloomRowGroupsPruned"):
                metric = node.metrics().get(name)
                if not metric.isEmpty():
                    found[name] = int(metric.get().value())
            metrics.append(found)
            return
        children = node.children().iterator()
        while children.hasNext():
            visit(children.next())

    visit(plan)
    return scans, metrics


@contextmanager
def join_on_and_off(spark, directory: str, wanted: list, dim: str):
    """A join of the files in `directory` (probe side, column `key`) with a small table holding `wanted` keys
    and an absent one (build side, written to `dim`), run with hsbloom off and on with the join cost model off,
    so the build-side keys always prune. Yields (the join, rows off, rows on), hsbloom still on."""
    spark.createDataFrame([(k, f"k{k}") for k in wanted] + [(-1, "none")], "key long, name string").coalesce(
        1).write.parquet(dim)

    def join():
        fact, small = spark.read.parquet(directory).alias("f"), spark.read.parquet(dim).alias("d")
        return fact.join(small.where("d.name <> 'x'"), F.col("f.key") == F.col("d.key")).select("f.id", "d.name")

    spark.conf.set("spark.hsbloom.join.costModel", "false")
    try:
        hsbloom.disable(spark)
        off = sorted(tuple(r) for r in join().collect())
        hsbloom.enable(spark)
        on = sorted(tuple(r) for r in join().collect())
        yield join, off, on
    finally:
        spark.conf.unset("spark.hsbloom.join.costModel")
        hsbloom.disable(spark)
