"""hsbloom's SBBF against filters other Parquet implementations wrote (tests/vectors/external,
see its README) and against the cross-language vectors computed by parquet-java (tests/vectors)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sbbf_helpers import column_filter_blobs, load_vectors, vector_array

from hsbloom.readers.parquet_hash import hash_array, nonnull_hashes
from hsbloom.readers.sbbf import Sbbf, SbbfFormatError, read_header

# -- tests/vectors/sbbf_vectors.json (parquet-java) -------------------------------------------

BASE_TYPES = [
    "byte", "short", "int", "long", "float", "double", "string", "binary", "date", "timestamp", "timestamp_ntz",
]  # fmt: skip


def _hashes_by_type() -> dict[str, list[dict]]:
    grouped = defaultdict(list)
    for entry in load_vectors()["hashes"]:
        grouped[entry["type"]].append(entry)
    return dict(grouped)


def test_vectors_cover_every_type_with_edge_values():
    grouped = _hashes_by_type()
    assert all(len(grouped[t]) >= 20 for t in BASE_TYPES), {t: len(grouped.get(t, [])) for t in BASE_TYPES}
    decimals = {t for t in grouped if t.startswith("decimal(")}
    assert {int(t[8:].split(",")[0]) for t in decimals} >= {9, 10, 18, 19, 38}
    assert any(e["value"] == "" for e in grouped["string"])
    assert any(ord(c) > 0xFFFF for e in grouped["string"] for c in e["value"])
    assert {"80000000", "7fc00000", "7f800000", "ff800000"} <= {e["value"]["bits"] for e in grouped["float"]}
    assert any(int(e["value"]) < 0 for t in decimals for e in grouped[t])
    sizes = {f["num_bytes"] for f in load_vectors()["filters"]}
    assert {32, 1024, 65536} <= sizes


@pytest.mark.parametrize("spark_type", sorted(_hashes_by_type()))
def test_hashes_equal_parquet_java(spark_type):
    entries = _hashes_by_type()[spark_type]
    got = hash_array(vector_array(spark_type, [e["value"] for e in entries]))
    want = [int(e["hash"], 16) for e in entries]
    mismatches = [(e["value"], f"{g:016x}", e["hash"]) for e, g, w in zip(entries, got.tolist(), want) if g != w]
    assert not mismatches


@pytest.mark.parametrize(
    "case", load_vectors()["filters"], ids=lambda f: f"{f['type']}-{f['num_bytes']}B-{len(f['values'])}values"
)
def test_filters_equal_parquet_java_byte_for_byte(case):
    built = Sbbf(case["num_bytes"])
    built.insert(vector_array(case["type"], case["values"]))
    assert built.to_bytes().hex() == case["filter_hex"]
    read = Sbbf.from_bytes(bytes.fromhex(case["filter_hex"]))
    assert read == built
    assert read.check(vector_array(case["type"], case["values"])).all()
    if case["absent"]:
        assert not read.check(vector_array(case["type"], case["absent"])).any()


def test_arrow_rs_fixture_is_the_first_string_filter():
    bitset = [200, 1, 80, 20, 64, 68, 8, 109, 6, 37, 4, 67, 144, 80, 96, 32, 8, 132, 43, 33, 0, 5, 99, 65, 2, 0, 224, 44, 64, 78, 96, 4]  # fmt: skip
    f = Sbbf(32)
    f.insert(pa.array([f"a{i}" for i in range(10)]))
    assert list(f.bitset) == bitset


# -- tests/vectors/external -------------------------------------------------------------------


def test_parquet_mr_xxhash_filter_file(external_vectors):
    blob = (external_vectors / "bloom_filter.xxhash.bin").read_bytes()
    assert blob[:16].hex() == "1580101c1c00001c1c00001c1c000000"
    assert read_header(blob) == (16, 1024)
    f = Sbbf.from_bytes(blob)
    assert (f.num_bytes, f.popcount) == (1024, 32)
    rebuilt = Sbbf(1024)
    rebuilt.insert(pa.array(["hello", "parquet", "bloom", "filter"]))
    assert rebuilt.to_bytes() == blob


def test_deprecated_murmur3_filter_file_is_rejected(external_vectors):
    blob = (external_vectors / "bloom_filter.bin").read_bytes()
    with pytest.raises(SbbfFormatError, match="deprecated pre-release Parquet Bloom filter format.*MURMUR3"):
        Sbbf.from_bytes(blob)
    with pytest.raises(SbbfFormatError, match="MURMUR3"):
        read_header(blob)


@pytest.mark.parametrize(
    "name, offset, length, bitset_bytes",
    [
        ("data_index_bloom_encoding_stats.parquet", 192, None, 1024),  # parquet-mr 1.13: no length
        ("data_index_bloom_encoding_with_length.parquet", 253, 2064, 2048),  # parquet-rs 49
    ],
)
def test_data_index_files_rebuild_from_their_fourteen_strings(external_vectors, name, offset, length, bitset_bytes):
    path = external_vectors / name
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(0)
    assert (chunk.bloom_filter_offset, chunk.bloom_filter_length) == (offset, length)
    blob = column_filter_blobs(path)[(0, "String")]
    header_length, num_bytes = read_header(blob)
    assert num_bytes == bitset_bytes and len(blob) == header_length + num_bytes
    f = Sbbf.from_bytes(blob)
    assert f.popcount == 112
    strings = pq.read_table(path)["String"]
    assert strings.to_pylist() == [
        "Hello", "This is", "a", "test", "How", "are you", "doing ", "today",
        "the quick", "brown fox", "jumps", "over", "the lazy", "dog",
    ]  # fmt: skip
    rebuilt = Sbbf(bitset_bytes)
    rebuilt.insert(strings)
    assert rebuilt.to_bytes() == blob
    assert f.check(strings).all()
    assert not f.check(pa.array(["b", "c", "d", "Hello_Not_Exists"])).any()


@pytest.mark.parametrize("letter, value", [("a", 1), ("b", 2), ("c", 3)])
def test_duckdb_single_value_filters(external_vectors, letter, value):
    path = external_vectors / f"duckdb_multi_bloom_{letter}.parquet"
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(0)
    assert (chunk.bloom_filter_offset, chunk.bloom_filter_length) == (51, 47)
    blob = column_filter_blobs(path)[(0, "a")]
    rebuilt = Sbbf(32)
    rebuilt.insert(pa.array([value], pa.int32()))
    assert rebuilt.to_bytes() == blob
    assert pq.read_table(path)["a"].to_pylist() == [value]


@pytest.mark.parametrize(
    "name, message",
    [
        ("duckdb_bloom_filter_bad_numbytes.parquet", "numBytes is 10000; a Bloom filter bitset must be a positive multiple of 32"),
        ("duckdb_bloom_filter_bad_length_range.parquet", "numBytes is 10000; a Bloom filter bitset must be a positive multiple of 32"),
        ("duckdb_bloom_filter_short_numbytes.parquet", "numBytes=256, but 512 bytes follow the 16-byte header"),
    ],
)
def test_corrupt_duckdb_filters_are_refused(external_vectors, name, message):
    path = external_vectors / name
    blobs = column_filter_blobs(path)
    with pytest.raises(SbbfFormatError, match=message):
        Sbbf.from_bytes(blobs.pop((0, "r")))
    # The corrupt first header is 2 bytes longer than the one DuckDB wrote, so every later filter
    # sits 2 bytes past the offset the footer records: each of those must be refused too.
    for key, blob in blobs.items():
        assert blob[2:4] == bytes.fromhex("1540"), key  # a real 32-byte header, 2 bytes late
        with pytest.raises(SbbfFormatError):
            Sbbf.from_bytes(blob)


def test_bad_length_range_points_past_the_end_of_the_file(external_vectors):
    path = external_vectors / "duckdb_bloom_filter_bad_length_range.parquet"
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(0)
    assert chunk.bloom_filter_offset + chunk.bloom_filter_length > path.stat().st_size


def test_impala_file_all_sixteen_filters_rebuild(external_vectors):
    path = external_vectors / "impala_parquet-bloom-filtering.parquet"
    parquet = pq.ParquetFile(path)
    blobs = column_filter_blobs(path)
    assert len(blobs) == 16
    for (rg, column), blob in blobs.items():
        assert read_header(blob) == (16, 512)
        values = parquet.read_row_group(rg, columns=[column])[column]
        rebuilt = Sbbf(512)
        rebuilt.insert(values)
        assert rebuilt.to_bytes() == blob, (rg, column, values.type)
    first = parquet.read_row_group(0, columns=["int64_col"])["int64_col"]
    assert sorted(set(first.to_pylist())) == list(range(0, 127, 2))
    second = parquet.read_row_group(1, columns=["int64_col"])["int64_col"]
    assert sorted(set(second.to_pylist())) == list(range(100))


def test_column_filter_blobs_skip_chunks_without_filters(tmp_path):
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"x": [1, 2, 3], "y": ["a", "b", "c"]}), path, bloom_filter_options={"y": {"ndv": 3}})
    blobs = column_filter_blobs(path)
    assert list(blobs) == [(0, "y")]
    assert Sbbf.from_bytes(blobs[(0, "y")]).check(pa.array(["a", "b", "c"])).all()
    assert np.array_equal(nonnull_hashes(pa.array(["a", None])), hash_array(pa.array(["a"])))
