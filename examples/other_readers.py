"""Look up one key of the quickstart's table with DuckDB, Polars or pyarrow, reading only the files hsbloom's
index keeps (no Spark, no JVM).

Run examples/quickstart.py first (it writes the table and its index under examples/data/), then
`python examples/other_readers.py --reader duckdb` (or polars, pyarrow). Needs `pip install 'hsbloom[readers]'`
and the reader (duckdb, polars). docs/readers.md is the guide.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hsbloom.readers import Pruned, eq, open_index
from hsbloom.readers.adapters import duckdb_relation, polars_frame, pyarrow_dataset

DATA = Path(__file__).resolve().parent / "data"


def with_duckdb(pruned: Pruned, user_id: int) -> list:
    # A relation of the kept files (an empty one with the table's columns when none is kept), then the whole filter.
    relation = duckdb_relation(pruned)
    return relation.filter(f"user_id = {user_id}").select("user_id, trace_id").fetchall()


def with_polars(pruned: Pruned, user_id: int) -> list:
    import polars as pl

    return polars_frame(pruned).filter(pl.col("user_id") == user_id).select("user_id", "trace_id").collect().rows()


def with_pyarrow(pruned: Pruned, user_id: int) -> list:
    import pyarrow.compute as pc

    table = pyarrow_dataset(pruned).to_table(filter=pc.field("user_id") == user_id, columns=["user_id", "trace_id"])
    return table.to_pylist()


READERS = {"duckdb": with_duckdb, "polars": with_polars, "pyarrow": with_pyarrow}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reader", choices=sorted(READERS), default="duckdb")
    parser.add_argument("--index", default=str(DATA / "warehouse" / "_hsbloom" / "events_keys"))
    parser.add_argument("--user-id", type=int, help="the key to look up (default: one from the table; try an absent "
                        "one: the index keeps no file and each reader answers with no rows)")
    args = parser.parse_args()
    index = open_index(args.index)  # once per process: loads and checks the index
    user_id = args.user_id
    if user_id is None:  # a key that exists: the first row of one file
        import pyarrow.dataset as ds

        first = ds.dataset(index.list_source().files[0].path, format="parquet").head(1, columns=["user_id"])
        user_id = first["user_id"][0].as_py()
    pruned = index.prune(eq("user_id", user_id))  # per query: lists the table, probes the index
    print(pruned.explain())
    rows = READERS[args.reader](pruned, user_id)
    print(f"{args.reader}: {len(rows)} row(s) for user_id = {user_id}: {rows[:3]}")


if __name__ == "__main__":
    main()
