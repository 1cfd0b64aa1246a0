"""Hyperspace: the user-facing entry point for managing hsbloom indexes.

A thin facade over hsbloom.actions (operations that change an index, each a
step of its operation log) and hsbloom.catalog (reading what exists), in the
style of Delta's `DeltaTable` and Hyperspace's `Hyperspace` class:

    hs = hsbloom.Hyperspace(spark)
    hs.create_index(spark.read.parquet(path), hsbloom.BFIndexConfig("events_ids", ["user_id"]))
    hs.indexes().show()
"""

from __future__ import annotations

from typing import Any, Callable

from hsbloom import actions, catalog, explain, refresh
from hsbloom.catalog import IndexInfo
from hsbloom.config import BFIndexConfig
from hsbloom.refresh import RefreshResult
from hsbloom.session import default_jar_path
from hsbloom.session_checks import require_hsbloom_session


class Hyperspace:
    """Create, list and manage the Bloom filter indexes of a SparkSession's system path."""

    def __init__(self, spark: Any) -> None:
        """Raises HsbloomSessionError, saying how to fix it, if `spark` cannot run hsbloom."""
        require_hsbloom_session(spark, jar_hint=str(default_jar_path()))
        self.spark = spark

    def create_index(self, df: Any, config: BFIndexConfig) -> None:
        """Index `config.indexed_columns` of the files `df` scans (a plain scan of a Parquet, ORC,
        CSV or JSON path, a catalog table over files, or a Delta table at a version).

        Raises InvalidConfigError / UnsupportedSourceError before writing anything, IndexExistsError
        if the name is taken, ConcurrentOperationError if another writer is at work on it, and
        IndexBuildError (with the cause chained) if the build fails, after undoing its effects.
        """
        try:
            actions.create_index(self.spark, df, config)
        finally:
            self._indexes_changed()

    def delete_index(self, name: str) -> None:
        """Soft-delete an ACTIVE index: queries stop using it; restore_index brings it back."""
        try:
            actions.delete_index(self.spark, name)
        finally:
            self._indexes_changed()

    def restore_index(self, name: str) -> None:
        """Make a DELETED index ACTIVE again."""
        try:
            actions.restore_index(self.spark, name)
        finally:
            self._indexes_changed()

    def vacuum_index(self, name: str) -> None:
        """Remove a DELETED index's data for good (freeing its name), or directories an ACTIVE one no longer reads."""
        try:
            actions.vacuum_index(self.spark, name)
        finally:
            self._indexes_changed()

    def cancel(self, name: str) -> None:
        """Return an index whose operation was interrupted to the stable state that operation started from."""
        try:
            actions.cancel(self.spark, name)
        finally:
            self._indexes_changed()

    def refresh_index(self, name: str, mode: str = "full") -> RefreshResult:
        """Bring an index up to date with its source: "full" rebuilds it, "incremental" builds only appended
        files and drops deleted ones, "quick" only records the changes (queries read appended files).

        Returns what was done (`refreshed` is False, and nothing is written, when there was nothing to do).
        The previous version stays in use until the new one is ACTIVE (docs/refresh.md).
        """
        try:
            return refresh.refresh_index(self.spark, name, mode)
        finally:
            self._indexes_changed()

    def explain(self, df: Any, redirect_func: Callable[[str], Any] = print) -> None:
        """Print the plan of `df` with and without hsbloom, the indexes its scans use, and the
        files each scan lists before and after pruning (to `redirect_func`, by default print)."""
        redirect_func(explain.explain_string(df))

    def _indexes_changed(self) -> None:
        """Queries of this process see an index operation at once (others within the refresh interval)."""
        explain.forget_index_listing(self.spark)

    def indexes(self) -> Any:
        """A DataFrame of all indexes: name, indexed_columns, state, source, num_files, index_size (bytes), fpp."""
        return catalog.indexes_dataframe(self.spark)

    def index(self, name: str) -> IndexInfo:
        """Details of one index and per-column statistics (rows, nulls, distinct values, filter sizes)."""
        return catalog.index_info(self.spark, name)
