"""Helpers shared by the SBBF test modules: the cross-language vectors and Parquet footers."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hsbloom.readers.parquet_hash import arrow_type_for
from hsbloom.readers.sbbf import read_header

VECTORS = Path(__file__).resolve().parent / "vectors" / "sbbf_vectors.json"


@lru_cache(maxsize=1)
def load_vectors() -> dict[str, list[dict[str, Any]]]:
    return json.loads(VECTORS.read_text(encoding="utf-8"))


def vector_array(spark_type: str, values: list[Any]) -> pa.Array:
    """An Arrow array of the Spark type holding `values` in the vectors' JSON encoding, built
    from raw bits / unscaled integers so nothing is rounded on the way."""
    arrow_type = arrow_type_for(spark_type)
    if spark_type in ("float", "double"):
        width = 32 if spark_type == "float" else 64
        bits = np.array([int(v["bits"], 16) for v in values], dtype=np.uint32 if width == 32 else np.uint64)
        return pa.array(bits.view(np.float32 if width == 32 else np.float64), type=arrow_type)
    if spark_type == "binary":
        return pa.array([bytes.fromhex(v) for v in values], type=arrow_type)
    if spark_type == "string":
        return pa.array(values, type=arrow_type)
    if pa.types.is_decimal(arrow_type):
        raw = b"".join(int(v).to_bytes(16, "little", signed=True) for v in values)
        return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(raw)])
    # Integers, dates (int32 days) and timestamps (int64 microseconds): build the storage type,
    # then reinterpret it as the logical one.
    storage = {"date": pa.int32(), "timestamp": pa.int64(), "timestamp_ntz": pa.int64()}.get(spark_type, arrow_type)
    return pa.array([int(v) for v in values], type=pa.int64()).cast(storage).view(arrow_type)


def column_filter_blobs(path: Path) -> dict[tuple[int, str], bytes]:
    """Every column chunk's serialized Bloom filter in a Parquet file, by (row group, column),
    located through the footer (bloom_filter_offset, and bloom_filter_length when the writer
    recorded it; otherwise the header is parsed to learn the bitset length)."""
    metadata = pq.ParquetFile(path).metadata
    blobs = {}
    with open(path, "rb") as f:
        for rg in range(metadata.num_row_groups):
            for col in range(metadata.num_columns):
                chunk = metadata.row_group(rg).column(col)
                if chunk.bloom_filter_offset is None:
                    continue
                f.seek(chunk.bloom_filter_offset)
                if chunk.bloom_filter_length is not None:
                    blob = f.read(chunk.bloom_filter_length)
                else:
                    prefix = f.read(64)
                    header_length, num_bytes = read_header(prefix)
                    f.seek(chunk.bloom_filter_offset)
                    blob = f.read(header_length + num_bytes)
                blobs[(rg, chunk.path_in_schema)] = blob
    return blobs
