"""Look up one key of the quickstart's table with duckdb, reading only the files hsbloom's index keeps (no Spark).

Run examples/quickstart.py first (it writes the table and its index under examples/data/), then
`python examples/readers_duckdb.py` (needs `pip install 'hsbloom[readers]' duckdb`). docs/readers.md is the guide.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pyarrow.dataset as ds

from hsbloom.readers import eq, open_index
from hsbloom.readers.adapters import file_list, pyarrow_dataset  # noqa: F401  (the one this reader uses)

DATA = Path(__file__).resolve().parent / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index", default=str(DATA / "warehouse" / "_hsbloom" / "events_keys"))
    parser.add_argument("--user-id", type=int, help="the key to look up (default: one from the table)")
    args = parser.parse_args()
    index = open_index(args.index)  # once per process: loads and checks the index
    user_id = args.user_id
    if user_id is None:  # a key that exists: the first row of one file
        first = ds.dataset(index.list_source().files[0].path, format="parquet").head(1, columns=["user_id"])
        user_id = first["user_id"][0].as_py()
    pruned = index.prune(eq("user_id", user_id))  # per query: lists the table, probes the index
    print(pruned.explain())
    import duckdb

    files = file_list(pruned)
    listing = "[" + ", ".join(repr(f) for f in files) + "]"
    rows = duckdb.sql(f"SELECT user_id, trace_id FROM read_parquet({listing}) WHERE user_id = {user_id}").fetchall()
    print(f"{len(rows)} row(s) for user_id = {user_id}: {rows[:3]}")


if __name__ == "__main__":
    main()
