"""Hyperspace: the user-facing entry point for managing hsbloom indexes.

A thin facade over hsbloom.operations and hsbloom.refresh (what changes an
index, each a step of its operation log) and hsbloom.index.catalog (reading
what exists), in the
style of Delta's `DeltaTable` and Hyperspace's `Hyperspace` class:

    hs = hsbloom.Hyperspace(spark)
    hs.create_index(spark.read.parquet(path), hsbloom.BFIndexConfig("events_ids", ["user_id"]))
    hs.indexes().show()
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

from hsbloom import explain
from hsbloom.config import BFIndexConfig
from hsbloom.errors import hsbloom_errors
from hsbloom.index import catalog
from hsbloom.index.catalog import IndexInfo
from hsbloom.operations import create, lifecycle, recovery, verify
from hsbloom.operations.verify import VerifyResult
from hsbloom.refresh import RefreshResult, refresh_index
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
        IndexBuildError (with the cause chained) if the build fails, after undoing its effects. The index
        directory gets the source's permission (IndexPermissionsError if it cannot: docs/security.md).
        """
        with self._operation("create", getattr(config, "index_name", None)):
            create.create_index(self.spark, df, config)

    def delete_index(self, name: str, force: bool = False) -> None:
        """Soft-delete an ACTIVE index: queries stop using it; restore_index brings it back.

        With `force=True`, mark the index as not existing whatever state its log is in (a damaged latest
        entry, an operation whose writer cannot be proven gone): queries stop using it, there is no restore,
        and vacuum_index then removes its data so the name can be created again (docs/troubleshooting.md).
        """
        with self._operation("delete", name):
            if force:
                recovery.force_delete(self.spark, name)
            else:
                lifecycle.delete_index(self.spark, name)

    def restore_index(self, name: str) -> None:
        """Make a DELETED index ACTIVE again."""
        with self._operation("restore", name):
            lifecycle.restore_index(self.spark, name)

    def vacuum_index(self, name: str) -> None:
        """Remove a DELETED index's data for good (freeing its name), or directories an ACTIVE one no longer reads."""
        with self._operation("vacuum", name):
            lifecycle.vacuum_index(self.spark, name)

    def cancel(self, name: str) -> None:
        """Return an index whose operation was interrupted to the stable state that operation started from."""
        with self._operation("cancel", name):
            lifecycle.cancel(self.spark, name)

    def refresh_index(self, name: str, mode: str = "full") -> RefreshResult:
        """Bring an index up to date with its source: "full" rebuilds it, "incremental" builds only appended
        files and drops deleted ones, "quick" only records the changes (queries read appended files).

        Returns what was done (`refreshed` is False, and nothing is written, when there was nothing to do).
        The previous version stays in use until the new one is ACTIVE (docs/refresh.md). Every refresh gives
        the index directory the source's permission again (docs/security.md).
        """
        with self._operation("refresh", name):
            return refresh_index(self.spark, name, mode)

    def explain(self, df: Any, redirect_func: Callable[[str], Any] = print) -> None:
        """Print the plan of `df` with and without hsbloom, the indexes its scans use, and the
        files each scan lists before and after pruning (to `redirect_func`, by default print)."""
        redirect_func(explain.explain_string(df))

    def run_explained(self, statement: str, redirect_func: Callable[[str], Any] = print) -> None:
        """Run the SQL `statement` (it changes the table if it is a DELETE, UPDATE or MERGE), then print
        each scan hsbloom pruned while it ran, with its files before and after, and what the join rules
        decided (to `redirect_func`, by default print). For statements that plan their scans only while
        they run, as Delta's DELETE, UPDATE and MERGE do (docs/upserts.md)."""
        redirect_func(explain.run_explained_string(self.spark, statement))

    @contextmanager
    def _operation(self, operation: str, name: str | None) -> Iterator[None]:
        """Run one operation: its failures as hsbloom errors, and queries of this process see its effect at once
        (other processes within the catalog's refresh interval)."""
        try:
            with hsbloom_errors(operation, name):
                yield
        finally:
            explain.forget_index_listing(self.spark)

    def indexes(self) -> Any:
        """A DataFrame of all indexes: name, indexed_columns, state, source, num_files, index_size (bytes), fpp (of
        each file's filter)."""
        with hsbloom_errors("listing indexes"):
            return catalog.indexes_dataframe(self.spark)

    def index(self, name: str) -> IndexInfo:
        """Details of one index and per-column statistics (rows, nulls, distinct values, filter sizes), and
        `damage`: the damaged index files this process has found (by queries or verify_index)."""
        with hsbloom_errors("reading", name):
            return catalog.index_info(self.spark, name)

    def adopted_files(self, name: str) -> list[str]:
        """The source files whose filters index `name` took from their own Parquet Bloom filters instead of
        hashing their values (docs/indexes.md#adopted-native-filters); `index(name).adopted_files` counts them."""
        with hsbloom_errors("reading", name):
            return catalog.adopted_file_paths(self.spark, name)

    def verify_index(self, name: str) -> VerifyResult:
        """Read everything index `name` holds and check it (log entries, file tables, filters, blocks, global
        filters against their checksums). Returns a VerifyResult: `healthy`, and each problem with its file."""
        with self._operation("verify", name):
            return verify.verify_index(self.spark, name)
