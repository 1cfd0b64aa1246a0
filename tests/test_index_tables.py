"""The index tables create_index writes, read back by independent readers.

One index over a generated table of 60 Parquet files and eight column types is
built once for the module. pyarrow reads the index tables and the source
files; the Python SBBF (hsbloom/readers, not the JVM code that wrote the filters)
parses every filter blob and checks values hashed by the Python Parquet hash.
"""

from __future__ import annotations

import datetime
import decimal
import hashlib
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import xxhash

from hsbloom import BFIndexConfig, Hyperspace
from hsbloom.readers.parquet_hash import hash_array
from jar_log import held_files, log_of
from hsbloom.readers.sbbf import Sbbf
from source_support import describe
from stored_filters import file_table, filter_of, rows_with_filters, stripes


def signed(u: int) -> int:
    """An unsigned 64-bit value as the signed long Parquet stores."""
    return u - (1 << 64) if u >= 1 << 63 else u

NUM_FILES = 60
ROWS_PER_FILE = 1000
FPP = 0.01
PROBES = 20_000
COLUMNS = ["k_long", "k_string", "k_int", "k_double", "k_date", "k_ts", "k_decimal", "k_binary"]


def generated_file(file_number: int) -> pa.Table:
    """ROWS_PER_FILE rows of every indexed type; ids run on across files, so files barely overlap."""
    i = np.arange(file_number * ROWS_PER_FILE, (file_number + 1) * ROWS_PER_FILE, dtype=np.int64)
    digests = [hashlib.sha256(str(k).encode()).digest() for k in i]
    return pa.table(
        {
            "k_long": pa.array(i * 7919 + 13),
            "k_string": pa.array([d.hex()[:24] for d in digests]),
            "k_int": pa.array(i % 5000, pa.int32(), mask=i % 17 == 0),  # repeats and nulls
            "k_double": pa.array(i / 8.0),
            "k_date": pa.array(18262 + i % 3000, pa.int32()).cast(pa.date32()),
            "k_ts": pa.array(i * 37_000_001, pa.timestamp("us", tz="UTC")),
            "k_decimal": pa.array([decimal.Decimal(int(k)) / 100 for k in i], pa.decimal128(12, 2)),
            "k_binary": pa.array([d[:20] for d in digests], pa.binary(), mask=i % 11 == 0),
        }
    )


@pytest.fixture(scope="module")
def indexed(spark, module_system_path, tmp_path_factory):
    """(source directory, data directory of the index, its ACTIVE log entry, the files its tables hold), built once.

    The source files are written with pyarrow (fast, and a writer other than Spark's)."""
    source = tmp_path_factory.mktemp("tables") / "events"
    source.mkdir()
    for n in range(NUM_FILES):
        pq.write_table(generated_file(n), source / f"part-{n:05d}.parquet")
    Hyperspace(spark).create_index(spark.read.parquet(str(source)), BFIndexConfig("tables", COLUMNS, fpp=FPP, global_filter=True))
    entry = log_of(spark, module_system_path, "tables").latest()
    assert "files" not in entry.source  # the log entry lists no files: the tables do (hsbloom.index.SourceListing)
    data_path = entry.raw["data_path"]
    files, damaged = held_files(spark, [data_path])
    assert damaged == 0 and len(files) == entry.summary["num_files"]
    return source, Path(data_path.removeprefix("file:")), entry, files


def absent_values(column: str) -> pa.Array:
    """PROBES values of the column's type that the generated table never holds."""
    n = np.arange(PROBES)
    if column == "k_long":
        return pa.array(10**15 + n, pa.int64())
    if column == "k_string":
        return pa.array([f"absent-{k}" for k in n])
    if column == "k_int":
        return pa.array(10**6 + n, pa.int32())
    if column == "k_double":
        return pa.array(1e9 + n * 0.37, pa.float64())
    if column == "k_date":
        return pa.array([datetime.date(2200, 1, 1) + datetime.timedelta(days=int(k)) for k in n], pa.date32())
    if column == "k_ts":
        return pa.array(4_000_000_000_000_000 + n * 1_000_003, pa.timestamp("us", tz="UTC"))
    if column == "k_decimal":
        return pa.array([decimal.Decimal(500_000_000 + int(k)) / 100 for k in n], pa.decimal128(12, 2))
    if column == "k_binary":
        return pa.array([b"\xff\x00absent" + int(k).to_bytes(4, "little") for k in n], pa.binary())
    raise AssertionError(column)


def test_files_table_has_one_row_per_file_and_column_with_its_lineage(spark, indexed):
    source, data, entry, files = indexed
    table = pq.read_table(data / "files")
    # No whole filters: each is stored once, in its blocks (docs/design/build.md).
    assert table.schema.names == [
        "file_id", "file_path", "file_size", "file_mtime", "column", "num_rows", "num_nulls", "ndv",
        "blocks_file", "blocks_offset", "blocks_count", "blocks_position", "bitset_bytes",
        "filter_checksum", "row_checksum", "filter_source",
    ]
    assert len(files) == NUM_FILES and table.num_rows == NUM_FILES * len(COLUMNS)
    assert set(table.column("filter_source").to_pylist()) == {"hashed"}  # no native filters in these files
    # The files read back from the tables are those the build was given: the source's listing, ids by path.
    listing = describe(spark, spark.read.parquet(str(source)), COLUMNS).files
    fingerprints = lambda fs: [(f.file_id, f.path, f.size, f.mtime) for f in fs]  # noqa: E731
    assert fingerprints(files) == fingerprints(listing)
    listed = {f.file_id: f for f in files}
    for row in table.to_pylist():
        f = listed[row["file_id"]]
        assert (row["file_path"], row["file_size"], row["file_mtime"]) == (f.path, f.size, f.mtime)
    pairs = {(r["file_id"], r["column"]) for r in table.select(["file_id", "column"]).to_pylist()}
    assert pairs == {(i, c) for i in listed for c in COLUMNS}


def test_every_row_checksum_is_the_xxh64_of_its_planning_fields_seeded_by_its_directory(indexed):
    """row_checksum, recomputed here from docs/design/integrity.md's recipe with the xxhash package (not the jar)."""
    source, data, entry, files = indexed
    seed = xxhash.xxh64_intdigest(f"{data.parent.name}/{data.name}".encode())

    def text(value: str) -> bytes:
        raw = value.encode()
        return struct.pack(">i", len(raw)) + raw

    for row in pq.read_table(data / "files").to_pylist():
        fields = (
            struct.pack(">q", row["file_id"]) + text(row["file_path"])
            + struct.pack(">qq", row["file_size"], row["file_mtime"]) + text(row["column"])
            + struct.pack(">qq", row["num_rows"], row["num_nulls"]) + text(row["blocks_file"])
            + struct.pack(">qiiiq", row["blocks_offset"], row["blocks_count"], row["blocks_position"],
                          row["bitset_bytes"], row["filter_checksum"])
        )
        assert row["row_checksum"] == signed(xxhash.xxh64_intdigest(fields, seed=seed)), row["file_id"]


def test_blocks_hold_every_block_of_every_filter_with_checksums(spark, indexed):
    """blocks/ (read by query planning, and the only copy of the filters) is the filters' bitsets block-major per
    group (docs/pruning.md), each stripe of block rows followed by its XXH64 checksum (docs/design/integrity.md),
    checked here with the xxhash package; a filter read back from it here is the jar's, and its filter_checksum is
    over it."""
    source, data, entry, files = indexed
    table = pq.read_table(data / "files").to_pylist()
    side_files = {p.name: p.read_bytes() for p in (data / "blocks").glob("*.blocks")}
    groups: dict[tuple[str, int], set[int]] = {}
    for row in table:
        k, j, side = row["blocks_count"], row["blocks_position"], side_files[row["blocks_file"]]
        assert k > 0
        for at, length in stripes(row):
            seed = xxhash.xxh64_intdigest(struct.pack("<q", at), seed=xxhash.xxh64_intdigest(row["blocks_file"].encode()))
            stored = struct.unpack(">Q", side[at + length:at + length + 8])[0]
            assert stored == xxhash.xxh64_intdigest(side[at:at + length], seed=seed)
        # One 8-byte checksum per stripe of at least 256 bytes of blocks (or the whole group, when smaller).
        blocks = k * row["bitset_bytes"]
        assert sum(length + 8 for _, length in stripes(row)) - blocks <= 8 * -(-blocks // 256)
        blob = filter_of(row, side)
        assert Sbbf.from_bytes(blob).num_bytes == row["bitset_bytes"]
        assert row["filter_checksum"] == signed(xxhash.xxh64_intdigest(blob))
        groups.setdefault((row["blocks_file"], row["blocks_offset"]), set()).add(j)
    for (name, offset), positions in groups.items():
        assert positions == set(range(len(positions)))  # every member of a group is a row
    by_jar = {(r.file_id, r.column): bytes(r.filter) for r in file_table(spark, str(data)).collect()}
    by_layout = {(r["file_id"], r["column"]): r["filter"] for r in rows_with_filters(data)}
    assert by_jar == by_layout and len(by_jar) == NUM_FILES * len(COLUMNS)


def test_every_value_of_every_file_is_in_its_filter_and_absent_values_mostly_are_not(indexed):
    source, data, entry, files = indexed
    path_of = {f.file_id: f.path.removeprefix("file:") for f in files}
    probe_hashes = {c: hash_array(absent_values(c)) for c in COLUMNS}
    worst_rate = {c: 0.0 for c in COLUMNS}
    false_positives = {c: 0 for c in COLUMNS}
    files_cache: dict[int, pa.Table] = {}
    for row in rows_with_filters(data):
        values = files_cache.setdefault(row["file_id"], pq.read_table(path_of[row["file_id"]]))[row["column"]]
        blob = row["filter"]
        sbbf = Sbbf.from_bytes(blob)
        assert 32 <= sbbf.num_bytes <= 128 << 20 and sbbf.num_bytes & (sbbf.num_bytes - 1) == 0
        non_null = pc.drop_null(values)
        assert (row["num_rows"], row["num_nulls"]) == (len(values), values.null_count)
        assert sbbf.check(non_null).all(), f"file {row['file_id']} column {row['column']}: a value is missing"
        exact_ndv = len(pc.unique(non_null))
        assert 0.8 * exact_ndv <= row["ndv"] <= 1.2 * exact_ndv + 2, (row["column"], row["ndv"], exact_ndv)
        hits = int(sbbf.check_hashes(probe_hashes[row["column"]]).sum())
        false_positives[row["column"]] += hits
        worst_rate[row["column"]] = max(worst_rate[row["column"]], hits / PROBES)
    print("\nper-file false-positive rate for absent values, fpp", FPP)
    for c in COLUMNS:
        print(f"  {c:10s} mean {false_positives[c] / (PROBES * NUM_FILES):.5f}  worst file {worst_rate[c]:.5f}")
    for c in COLUMNS:
        assert worst_rate[c] <= 1.5 * FPP, (c, worst_rate[c])


def test_global_filter_holds_every_value_of_its_column(indexed):
    source, data, entry, files = indexed
    chunks = pq.read_table(data / "global").to_pylist()
    everything = pq.read_table(source)
    sizes = {}
    for column in COLUMNS:
        parts = sorted((c for c in chunks if c["column"] == column), key=lambda c: c["chunk_index"])
        assert [p["chunk_index"] for p in parts] == list(range(parts[0]["num_chunks"]))
        blob = b"".join(p["chunk"] for p in parts)
        assert len(blob) == parts[0]["filter_bytes"]
        sbbf = Sbbf.from_bytes(blob)
        assert sbbf.check(pc.drop_null(everything[column])).all(), column
        fp_rate = float(sbbf.check_hashes(hash_array(absent_values(column))).mean())
        print(f"\nglobal filter {column}: {sbbf.num_bytes} bytes, false-positive rate {fp_rate:.5f}")
        assert fp_rate <= 1.5 * FPP
        sizes[column] = len(blob)
    summary = entry.summary["columns"]
    assert {c: summary[c]["global_filter_bytes"] for c in COLUMNS} == sizes


def test_index_statistics_match_the_tables(spark, indexed):
    source, data, entry, files = indexed
    info = Hyperspace(spark).index("tables")
    filters = rows_with_filters(data)
    everything = pq.read_table(source)
    assert (info.num_files, info.num_rows) == (NUM_FILES, NUM_FILES * ROWS_PER_FILE)
    # Hadoop counts data files, not its .crc checksum files
    assert info.index_bytes == sum(p.stat().st_size for p in data.rglob("*") if p.is_file() and p.suffix != ".crc")
    for stats in info.columns:
        assert stats.num_rows == NUM_FILES * ROWS_PER_FILE
        assert stats.num_nulls == everything[stats.column].null_count
        assert stats.file_filter_bytes == sum(len(r["filter"]) for r in filters if r["column"] == stats.column)
        exact = len(pc.unique(pc.drop_null(everything[stats.column])))
        assert 0.95 * exact <= stats.ndv <= 1.05 * exact, (stats.column, stats.ndv, exact)
