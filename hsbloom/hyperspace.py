"""Hyperspace: the Python entry point for managing hsbloom indexes.

A thin facade over the jar, which owns every index operation and every stored thing: each method sends one of
hsbloom's SQL statements (docs/sql.md) and turns its rows into Python values, so it works the same on a classic
session and on a Spark Connect session, in the style of Delta's `DeltaTable`:

    hs = hsbloom.Hyperspace(spark)
    hs.create_index(spark.read.parquet(path), hsbloom.BFIndexConfig("events_ids", ["user_id"]))
    hs.indexes().show()
"""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from hsbloom import statements
from hsbloom.config import BFIndexConfig
from hsbloom.errors import (
    InvalidArgumentError,
    UnsupportedSourceError,
    raised_as_hsbloom_errors,
    statement_errors_kept,
)
from hsbloom.results import IndexInfo, RefreshResult, VerifyResult
from hsbloom.session import default_jar_path
from hsbloom.session_checks import is_connect_session, require_hsbloom_session

REFRESH_MODES = ("full", "incremental", "quick")


class Hyperspace:
    """Create, list and manage the Bloom filter indexes of a SparkSession's system path."""

    def __init__(self, spark: Any) -> None:
        """Raises HsbloomSessionError, saying how to fix it, if `spark` cannot run hsbloom."""
        require_hsbloom_session(spark, jar_hint=str(default_jar_path()))
        self.spark = spark

    def create_index(self, df: Any, config: BFIndexConfig) -> None:
        """Index `config.indexed_columns` of the files `df` scans (a plain scan of a Parquet, ORC, CSV or JSON path, a
        catalog table over files, a temporary view of one, or a Delta table at a version).

        Raises InvalidConfigError / UnsupportedSourceError before writing anything, IndexExistsError if the name is
        taken, ConcurrentOperationError if another writer is at work on it, and IndexBuildError (with the cause
        chained) if the build fails, after undoing its effects. The index directory gets the source's permission
        (IndexPermissionsError if it cannot: docs/security.md).
        """
        if not isinstance(config, BFIndexConfig):
            raise TypeError(f"create_index needs a BFIndexConfig, got {type(config).__name__}")
        from pyspark.sql import DataFrame

        if not isinstance(df, DataFrame):
            raise UnsupportedSourceError(f"create_index needs a pyspark DataFrame, got {type(df).__name__}")
        options = {
            "expected_num_items": config.expected_num_items,
            "fpp": config.fpp,
            "global_filter": config.global_filter,
            "granularity": config.granularity,
            # Names in backquotes, as the option's comma-separated list takes them (a name may hold a comma).
            "substring_columns": ", ".join(statements.identifier(c) for c in config.substring_columns) or None,
            "ngram_size": config.ngram_size,
            "substring_case_insensitive": config.substring_case_insensitive or None,
        }
        with self._source_view(df) as view:
            statement = statements.create(config.index_name, view, config.indexed_columns, options)
            self._run(df.sparkSession, statement, "create", config.index_name)

    def delete_index(self, name: str, force: bool = False) -> None:
        """Soft-delete an ACTIVE index: queries stop using it; restore_index brings it back.

        With `force=True`, mark the index as not existing whatever state its log is in (a damaged latest entry, an
        operation whose writer cannot be proven gone): queries stop using it, there is no restore, and vacuum_index
        then removes its data so the name can be created again (docs/troubleshooting.md).
        """
        self._run(self.spark, statements.drop(name, bool(force)), "delete", name)

    def restore_index(self, name: str) -> None:
        """Make a DELETED index ACTIVE again."""
        self._run(self.spark, statements.simple("RESTORE", name), "restore", name)

    def vacuum_index(self, name: str) -> None:
        """Remove a DELETED index's data for good (freeing its name), or directories an ACTIVE one no longer reads."""
        self._run(self.spark, statements.simple("VACUUM", name), "vacuum", name)

    def cancel(self, name: str) -> None:
        """Return an index whose operation was interrupted to the stable state that operation started from."""
        self._run(self.spark, statements.simple("CANCEL", name), "cancel", name)

    def refresh_index(self, name: str, mode: str = "full") -> RefreshResult:
        """Bring an index up to date with its source: "full" rebuilds it, "incremental" builds only appended files and
        drops deleted ones, "quick" only records the changes (queries read appended files).

        Returns what was done (`refreshed` is False, and nothing is written, when there was nothing to do). The
        previous version stays in use until the new one is ACTIVE (docs/refresh.md). Every refresh gives the index
        directory the source's permission again (docs/security.md).
        """
        if mode not in REFRESH_MODES:
            raise InvalidArgumentError(f"refresh mode must be one of {', '.join(REFRESH_MODES)}; got {mode!r}")
        [row] = self._run(self.spark, statements.refresh(name, mode), "refresh", name).collect()
        return RefreshResult.from_row(row)

    def explain(self, df: Any, redirect_func: Callable[[str], Any] = print) -> None:
        """Print the plan of `df` with and without hsbloom, the indexes its scans use, and the files each scan lists
        before and after pruning (to `redirect_func`, by default print)."""
        from pyspark.sql import DataFrame

        if not isinstance(df, DataFrame):
            raise TypeError(f"explain needs a pyspark DataFrame, got {type(df).__name__}")
        with self._source_view(df) as view:
            [row] = self._run(df.sparkSession, statements.explain(view), "explain").collect()
        redirect_func(row.plan)

    def run_explained(self, statement: str, redirect_func: Callable[[str], Any] = print) -> None:
        """Run the SQL `statement` (it changes the table if it is a DELETE, UPDATE or MERGE), then print each scan
        hsbloom pruned while it ran, with its files before and after, and what the join rules decided (to
        `redirect_func`, by default print). For statements that plan their scans only while they run, as Delta's
        DELETE, UPDATE and MERGE do (docs/upserts.md)."""
        if not isinstance(statement, str):
            raise TypeError(f"run_explained needs a SQL statement as a str, got {type(statement).__name__}")
        # The statement's own failure (a MERGE Delta refuses, a syntax error) is raised as spark.sql(statement)
        # raises it, not as an hsbloom error: it is the caller's statement, not an index operation, that failed.
        with statement_errors_kept():
            [row] = self._sql(self.spark, statements.explain_analyze(statement), "run_explained").collect()
        redirect_func(row.plan)

    def indexes(self) -> Any:
        """A DataFrame of all indexes: name, indexed_columns, state, source, num_files, index_size (bytes), fpp (of
        each file's filter), damage."""
        return self._run(self.spark, statements.show_indexes(), "listing indexes")

    def index(self, name: str) -> IndexInfo:
        """Details of one index and per-column statistics (rows, nulls, distinct values, filter sizes), and `damage`:
        the damaged index files found so far (by queries or verify_index)."""
        [row] = self._run(self.spark, statements.simple("DESCRIBE", name), "reading", name).collect()
        return IndexInfo.from_row(row)

    def adopted_files(self, name: str) -> list[str]:
        """The source files whose filters index `name` took from their own Parquet Bloom filters instead of hashing
        their values (docs/indexes.md#adopted-native-filters); `index(name).adopted_files` counts them."""
        rows = self._run(self.spark, statements.show_files(name), "reading", name).collect()
        return sorted({r.file_path for r in rows if r.filter_source == "adopted"})

    def verify_index(self, name: str) -> VerifyResult:
        """Read everything index `name` holds and check it (log entries, file tables, filters, blocks, global filters
        against their checksums). Returns a VerifyResult: `healthy`, and each problem with its file."""
        [row] = self._run(self.spark, statements.simple("VERIFY", name), "verify", name).collect()
        return VerifyResult.from_row(row)

    def _run(self, spark: Any, statement: str, operation: str, name: str | None = None) -> Any:
        """Run one of hsbloom's statements; its failures as hsbloom errors."""
        with raised_as_hsbloom_errors(operation, name):
            return self._sql(spark, statement, operation, name)

    def _sql(self, spark: Any, statement: str, operation: str, name: str | None = None) -> Any:
        """`spark.sql(statement)`. On Ctrl-C, the statement's Spark jobs are cancelled (they run in the JVM, which an
        interrupt of Python does not stop)."""
        try:
            return spark.sql(statement)
        except KeyboardInterrupt:
            _interrupt(spark, operation, name)
            raise

    @contextmanager
    def _source_view(self, df: Any) -> Iterator[str]:
        """`df` as a temporary view of its own session for the length of a statement: how a DataFrame reaches a SQL
        statement on a classic session and on Spark Connect alike (the view holds `df`'s analyzed plan)."""
        view = f"hsbloom_source_{uuid.uuid4().hex}"
        df.createOrReplaceTempView(view)
        try:
            yield view
        finally:
            df.sparkSession.catalog.dropTempView(view)


def _interrupt(spark: Any, operation: str, name: str | None) -> None:
    """Cancel what an interrupted statement left running: its operation's job group (classic), or the session's
    operations (Spark Connect: the server runs them)."""
    try:
        if is_connect_session(spark):
            spark.interruptAll()
        elif name is not None:
            spark.sparkContext.cancelJobGroup(f"hsbloom-{operation}-{name}")
    except Exception:  # noqa: BLE001 - the interrupt is what the caller must see
        pass
