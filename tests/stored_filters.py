"""The file filters of an index version, read back from where they are stored: once, block by block, in the side
files under `blocks/` (docs/design/build.md). Two readers: the jar's (`IndexTables.readFileTable`, what a refresh
copies with) and one written here from the documented layout alone (an oracle of the layout)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pyspark.sql import DataFrame

from hsbloom import jar
from hsbloom.readers.sbbf_header import header_bytes
from jvm_classes import jvm_class


def file_table(spark: Any, data_path: str) -> DataFrame:
    """The file table of `data_path` with each row's `filter` read back whole by the jar (checksums checked)."""
    table = jvm_class(spark, "index_tables").readFileTable(jar.java_session(spark), str(data_path))
    return DataFrame(table, spark)


# Bytes of block rows per checksummed stripe (FilterBlocks.StripeBytes).
STRIPE_BYTES = 512


def stripes(row: dict[str, Any]) -> list[tuple[int, int]]:
    """(offset in the side file, bytes before the checksum) of each stripe of `row`'s group: consecutive block rows
    (block b of every member), about STRIPE_BYTES of them and at least one, then an 8-byte checksum."""
    k, blocks = row["blocks_count"], row["bitset_bytes"] // 32
    per_stripe = max(1, STRIPE_BYTES // (k * 32))
    found, at = [], row["blocks_offset"]
    for first in range(0, blocks, per_stripe):
        data = (min(blocks, first + per_stripe) - first) * k * 32
        found.append((at, data))
        at += data + 8
    return found


def block_offset(row: dict[str, Any], b: int) -> int:
    """Where block `b` of `row`'s filter is in its side file."""
    k = row["blocks_count"]
    per_stripe = max(1, STRIPE_BYTES // (k * 32))
    stripe_at = stripes(row)[b // per_stripe][0]
    return stripe_at + ((b % per_stripe) * k + row["blocks_position"]) * 32


def filter_of(row: dict[str, Any], side_file: bytes) -> bytes:
    """The Parquet serialization of `row`'s filter (b"" when it has no blocks), from its side file's bytes."""
    if row["blocks_count"] == 0:
        return b""
    blocks = []
    for b in range(row["bitset_bytes"] // 32):
        at = block_offset(row, b)
        blocks.append(side_file[at:at + 32])
    return header_bytes(row["bitset_bytes"]) + b"".join(blocks)


def rows_with_filters(data_dir: Path, table: str = "files") -> list[dict[str, Any]]:
    """The rows of `<data_dir>/<table>` (files or zones), each with its `filter` read back from `blocks/`."""
    side_files = {p.name: p.read_bytes() for p in (data_dir / "blocks").glob("*.blocks")}
    rows = pq.read_table(data_dir / table).to_pylist()
    for row in rows:
        row["filter"] = filter_of(row, side_files.get(row["blocks_file"], b""))
    return rows
