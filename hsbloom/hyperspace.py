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

from hsbloom import actions, catalog, explain, recovery, refresh, verify
from hsbloom.catalog import IndexInfo
from hsbloom.config import BFIndexConfig
from hsbloom.failures import hsbloom_errors
from hsbloom.refresh import RefreshResult
from hsbloom.verify import VerifyResult
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
            with hsbloom_errors("create", getattr(config, "index_name", None)):
                actions.create_index(self.spark, df, config)
        finally:
            self._indexes_changed()

    def delete_index(self, name: str, force: bool = False) -> None:
        """Soft-delete an ACTIVE index: queries stop using it; restore_index brings it back.

        With `force=True`, mark the index as not existing whatever state its log is in (a damaged latest
        entry, an operation whose writer cannot be proven gone): queries stop using it, there is no restore,
        and vacuum_index then removes its data so the name can be created again (docs/troubleshooting.md).
        """
        try:
            with hsbloom_errors("delete", name):
                if force:
                    recovery.force_delete(self.spark, name)
                else:
                    actions.delete_index(self.spark, name)
        finally:
            self._indexes_changed()

    def restore_index(self, name: str) -> None:
        """Make a DELETED index ACTIVE again."""
        try:
            with hsbloom_errors("restore", name):
                actions.restore_index(self.spark, name)
        finally:
            self._indexes_changed()

    def vacuum_index(self, name: str) -> None:
        """Remove a DELETED index's data for good (freeing its name), or directories an ACTIVE one no longer reads."""
        try:
            with hsbloom_errors("vacuum", name):
                actions.vacuum_index(self.spark, name)
        finally:
            self._indexes_changed()

    def cancel(self, name: str) -> None:
        """Return an index whose operation was interrupted to the stable state that operation started from."""
        try:
            with hsbloom_errors("cancel", name):
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
            with hsbloom_errors("refresh", name):
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
        with hsbloom_errors("listing indexes"):
            return catalog.indexes_dataframe(self.spark)

    def index(self, name: str) -> IndexInfo:
        """Details of one index and per-column statistics (rows, nulls, distinct values, filter sizes), and
        `damage`: the damaged index files this process has found (by queries or verify_index)."""
        with hsbloom_errors("reading", name):
            return catalog.index_info(self.spark, name)

    def verify_index(self, name: str) -> VerifyResult:
        """Read everything index `name` holds and check it (log entries, file tables, filters, blocks, global
        filters against their checksums). Returns a VerifyResult: `healthy`, and each problem with its file."""
        try:
            with hsbloom_errors("verify", name):
                return verify.verify_index(self.spark, name)
        finally:
            self._indexes_changed()
