"""Golden indexes of the Spark lines: a small Parquet table and the hsbloom index of it that one line's jar wrote,
kept in compat/golden/<line id>/ and used by every other line (compat/test_golden_lines.py): an index is the same on
every Spark, so a cluster upgraded from Spark 3.5 to 4.x keeps its indexes, and the reverse.

An index records its table's absolute path and each file's size and modification time (a file with another is
stale), so a golden table is written at a fixed path, WRITTEN_AT/<line id>/table, and put back there with the
recorded times before it is used.

Regenerate a line's golden index with that line's pyspark and hsbloom installed (dev.sh compat makes such venvs):

    cd compat && ../.venvs/<line id>-pyspark-<release>/bin/python golden_lines.py
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

WRITTEN_AT = Path("/tmp/hsbloom-golden-lines")
GOLDEN = Path(__file__).resolve().parent / "golden"
INDEX = "golden_keys"
FILES = 4
ROWS = 1000
# Every 7th name is NULL; names are unicode, so the string filter hashes multi-byte UTF-8.
COLUMNS = ["id", "id AS key", "CASE WHEN id % 7 = 0 THEN NULL ELSE concat('ключ-', id, '-日本') END AS name"]


def write_table(spark, table: Path, first: int, rows: int, files: int, mode: str = "errorifexists") -> None:
    """`rows` consecutive keys from `first` in `files` files: a key sits in exactly one file."""
    spark.range(first, first + rows, 1, files).selectExpr(*COLUMNS).write.mode(mode).parquet(str(table))


def put_back(golden: Path, system_path: Path) -> Path:
    """The golden table at the path its index records, with its files' recorded times, and the index in
    `system_path`; returns the table's path."""
    recorded = json.loads((golden / "golden.json").read_text())
    table = Path(recorded["table"])
    shutil.rmtree(table.parent, ignore_errors=True)
    shutil.copytree(golden / "table", table)
    for name, mtime_ns in recorded["mtimes_ns"].items():
        os.utime(table / name, ns=(mtime_ns, mtime_ns))
    shutil.copytree(golden / "indexes" / INDEX, system_path / INDEX)
    return table


def generate() -> Path:
    """Write the running line's golden index into compat/golden/<line id>/ (replacing one there)."""
    from pyspark.sql import SparkSession

    import hsbloom
    from hsbloom import BFIndexConfig, Hyperspace
    from hsbloom.spark_lines import running_line

    line = running_line()
    root = WRITTEN_AT / line.id
    shutil.rmtree(root, ignore_errors=True)
    table, system = root / "table", root / "indexes"
    builder = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2").config("spark.hsbloom.system.path", str(system)))
    spark = hsbloom.configure(builder).getOrCreate()
    write_table(spark, table, 0, ROWS, FILES)
    Hyperspace(spark).create_index(spark.read.parquet(str(table)), BFIndexConfig(INDEX, ["key", "name"]))
    version = spark.version
    spark.stop()
    out = GOLDEN / line.id
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    shutil.copytree(table, out / "table")
    shutil.copytree(system, out / "indexes")
    mtimes = {p.name: p.stat().st_mtime_ns for p in sorted(table.iterdir()) if p.is_file()}
    recorded = {"spark": version, "line": line.id, "table": str(table), "mtimes_ns": mtimes}
    (out / "golden.json").write_text(json.dumps(recorded, indent=2) + "\n")
    return out


if __name__ == "__main__":
    print(f"written: {generate()}")
