"""TPC-H tables for hsbloom: generated as Parquet by `tpchgen-cli`, read as views, indexed on their keys.

Used by tests/test_tpch.py (scale factor 0.01) and bench/tpch.py (scale factor 1).
`tpchgen-cli` is the Rust TPC-H generator, installed with the `dev` extra.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import hsbloom
from hsbloom.errors import IndexExistsError

TABLES = ["lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region"]

# The key columns indexed, per table (one index per table).
INDEXED_KEYS: dict[str, list[str]] = {
    "lineitem": ["l_orderkey", "l_partkey", "l_suppkey"],
    "orders": ["o_orderkey", "o_custkey"],
    "customer": ["c_custkey"],
    "part": ["p_partkey"],
    "partsupp": ["ps_partkey", "ps_suppkey"],
    "supplier": ["s_suppkey"],
}


def generator() -> str:
    """The `tpchgen-cli` executable: beside this interpreter (a virtual environment), else on the PATH."""
    beside = Path(sys.executable).parent / "tpchgen-cli"
    found = str(beside) if beside.exists() else shutil.which("tpchgen-cli")
    if found is None:
        raise RuntimeError("tpchgen-cli is not installed: it comes with hsbloom's dev extra "
                           "(pip install -e '.[dev]', or ./dev.sh build)")
    return found


def generate(directory: Path, scale_factor: float, parts: int) -> Path:
    """Writes every table as `directory/<table>/<table>.<n>.parquet` (at most `parts` files each), once.

    A `_SUCCESS` marker is written last, so an interrupted run is redone rather than reused.
    """
    done = directory / "_SUCCESS"
    if done.exists():
        return directory
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    subprocess.run([generator(), "parquet", f"--scale-factor={scale_factor}", f"--parts={parts}",
                    f"--output-dir={directory}"], check=True, capture_output=True, text=True)
    done.touch()
    return directory


def table_path(directory: Path, table: str) -> str:
    """Where a table's files are: a directory of parts, or (for a one-part table) one file."""
    folder = directory / table
    return str(folder if folder.is_dir() else directory / f"{table}.parquet")


def register_views(spark: Any, directory: Path) -> None:
    """Each table as a temporary view of its name, read afresh (so hsbloom's rules see the plain relation)."""
    for table in TABLES:
        spark.read.parquet(table_path(directory, table)).createOrReplaceTempView(table)


def create_indexes(spark: Any, directory: Path, prefix: str) -> None:
    """One index per table on its key columns (`prefix` + table name), with global filters (every join feature on);
    an existing one is kept, rebuilt when an older hsbloom wrote it (planning would not use it)."""
    hs = hsbloom.Hyperspace(spark)
    for table, columns in INDEXED_KEYS.items():
        try:
            hs.create_index(spark.read.parquet(table_path(directory, table)),
                            hsbloom.BFIndexConfig(f"{prefix}{table}", columns, global_filter=True))
        except IndexExistsError:
            if hs.index(f"{prefix}{table}").needs_full_refresh:
                hs.refresh_index(f"{prefix}{table}", mode="full")


def canonical(rows: list[Any]) -> list[tuple]:
    """Rows as plain tuples, in the order the query gave them (every query orders its output or gives one row)."""
    return [tuple(r) for r in rows]

