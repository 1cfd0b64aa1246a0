"""The package's Parquet hash (hsbloom/readers/parquet_hash.py) against the xxhash package and the Parquet PLAIN encoding, type by type."""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from hsbloom.readers.parquet_hash import (
    UnsupportedTypeError,
    arrow_type_for,
    hash_array,
    hash_scalar,
    min_bytes_for_precision,
    nonnull_hashes,
)
from hsbloom.readers.xxh64 import xxh64_bytes, xxh64_u64


def xxh(data: bytes) -> int:
    return xxhash.xxh64_intdigest(data)


def expected(fmt: str, values) -> np.ndarray:
    return np.array([xxh(struct.pack(fmt, v)) for v in values], dtype=np.uint64)


RNG = np.random.default_rng(20260322)


def test_xxh64_of_empty_input_is_the_published_constant():
    assert hash_scalar(b"", "binary") == 0xEF46DB3751D8E999
    assert hash_scalar("", "string") == 0xEF46DB3751D8E999


def test_every_length_from_0_to_1100_bytes_matches_xxhash():
    # Covers each XXH64 path: stripes (>= 32 bytes), 8-, 4- and 1-byte tails, and the long-value
    # fallback (> 512 bytes).
    values = [RNG.integers(0, 256, size=n, dtype=np.uint8).tobytes() for n in range(1101)]
    got = hash_array(pa.array(values, pa.binary()))
    assert got.tolist() == [xxh(v) for v in values]


def test_mixed_lengths_in_one_array_match_xxhash():
    lengths = RNG.permutation(np.concatenate([RNG.integers(0, 100, 3000), RNG.integers(0, 2000, 50)]))
    values = [RNG.integers(0, 256, size=int(n), dtype=np.uint8).tobytes() for n in lengths]
    assert hash_array(pa.array(values, pa.large_binary())).tolist() == [xxh(v) for v in values]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=200), max_size=40))
def test_xxh64_bytes_matches_xxhash_for_any_values(values):
    data = np.frombuffer(b"".join(values), dtype=np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(v) for v in values])]).astype(np.int64)
    assert xxh64_bytes(data, offsets).tolist() == [xxh(v) for v in values]


@pytest.mark.parametrize(
    "arrow_type, fmt, lo, hi",
    [
        (pa.int8(), "<i", -128, 127),  # widened to INT32
        (pa.int16(), "<i", -32768, 32767),  # widened to INT32
        (pa.int32(), "<i", -(2**31), 2**31 - 1),
        (pa.int64(), "<q", -(2**63), 2**63 - 1),
    ],
)
def test_integers_hash_as_int32_or_int64_plain(arrow_type, fmt, lo, hi):
    values = [lo, lo + 1, -1, 0, 1, hi - 1, hi] + RNG.integers(lo, hi, 500, endpoint=True).tolist()
    got = hash_array(pa.array(values, arrow_type))
    np.testing.assert_array_equal(got, expected(fmt, values))


def test_floats_hash_their_raw_bits_including_nan_payloads_and_negative_zero():
    bits32 = np.array([0, 0x80000000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x7F800000, 1], dtype=np.uint32)
    bits32 = np.concatenate([bits32, RNG.integers(0, 2**32, 300, dtype=np.uint64).astype(np.uint32)])
    got = hash_array(pa.array(bits32.view(np.float32)))
    np.testing.assert_array_equal(got, expected("<I", bits32.tolist()))
    bits64 = np.concatenate(
        [
            np.array([0, 1 << 63, 0x7FF8000000000000, 0xFFF8000000000123, 0x7FF0000000000001], dtype=np.uint64),
            RNG.integers(0, 2**64, 300, dtype=np.uint64),
        ]
    )
    got = hash_array(pa.array(bits64.view(np.float64)))
    np.testing.assert_array_equal(got, expected("<Q", bits64.tolist()))
    assert hash_scalar(0.0, "double") != hash_scalar(-0.0, "double")


def test_strings_hash_their_utf8_bytes_without_length_prefix():
    values = ["", "a", "hello", "naïve", "日本語", "😀", "\U0010ffff", "a\x00b", "x" * 700]
    for arrow_type in (pa.string(), pa.large_string(), pa.string_view()):
        assert hash_array(pa.array(values, arrow_type)).tolist() == [xxh(v.encode()) for v in values]


def test_binary_kinds_agree():
    values = [b"", b"\x00", b"\xff" * 40, bytes(range(256))]
    want = [xxh(v) for v in values]
    for arrow_type in (pa.binary(), pa.large_binary(), pa.binary_view()):
        assert hash_array(pa.array(values, arrow_type)).tolist() == want
    fixed = pa.array([b"abcd", b"\x00\x01\x02\x03"], pa.binary(4))
    assert hash_array(fixed).tolist() == [xxh(b"abcd"), xxh(b"\x00\x01\x02\x03")]


def test_slices_chunked_arrays_and_dictionaries_hash_like_plain_arrays():
    values = [f"value-{i}" * (i % 7) for i in range(300)]
    want = [xxh(v.encode()) for v in values]
    array = pa.array(values)
    assert hash_array(array.slice(17, 100)).tolist() == want[17:117]
    assert hash_array(pa.chunked_array([array.slice(0, 10), array.slice(10)])).tolist() == want
    assert hash_array(array.dictionary_encode()).tolist() == want
    ints = pa.array(np.arange(1000, dtype=np.int64))
    assert hash_array(ints.slice(5, 3)).tolist() == expected("<q", [5, 6, 7]).tolist()
    assert hash_array(pa.chunked_array([], pa.int64())).shape == (0,)


def test_nulls_keep_positions_and_are_dropped_by_nonnull_hashes():
    array = pa.array([1, None, 3, None], pa.int64())
    hashes = hash_array(array)
    assert hashes.tolist() == [xxh(struct.pack("<q", 1)), 0, xxh(struct.pack("<q", 3)), 0]
    assert nonnull_hashes(array).tolist() == [hashes[0], hashes[2]]
    strings = pa.chunked_array([pa.array(["a", None]), pa.array([None, "b"])])
    assert nonnull_hashes(strings).tolist() == [xxh(b"a"), xxh(b"b")]
    assert hash_array(pa.array(["a", None]).dictionary_encode()).tolist() == [xxh(b"a"), 0]


def test_dates_hash_as_int32_days():
    days = [-719162, -1, 0, 1, 19000, 2932896]
    assert hash_array(pa.array(days, pa.int32()).view(pa.date32())).tolist() == expected("<i", days).tolist()
    millis = pa.array([d * 86_400_000 for d in days], pa.int64()).view(pa.date64())
    assert hash_array(millis).tolist() == expected("<i", days).tolist()
    with pytest.raises(ValueError, match="not whole days"):
        hash_array(pa.array([86_400_001], pa.int64()).view(pa.date64()))


def test_timestamps_of_every_unit_hash_as_int64_microseconds():
    micros = [-62135596800000000, -1_000_000, 0, 1_000_000, 1700000000000000]
    want = expected("<q", micros).tolist()
    seconds = [m // 1_000_000 for m in micros]
    assert hash_array(pa.array(seconds, pa.timestamp("s"))).tolist() == want
    assert hash_array(pa.array([m // 1000 for m in micros], pa.timestamp("ms", tz="UTC"))).tolist() == want
    assert hash_array(pa.array(micros, pa.timestamp("us", tz="Europe/Paris"))).tolist() == want
    # (year 1 does not fit in int64 nanoseconds)
    assert hash_array(pa.array([m * 1000 for m in micros[1:]], pa.timestamp("ns"))).tolist() == want[1:]
    # A sub-microsecond part cannot be stored by Spark: refuse rather than truncate.
    with pytest.raises(ValueError, match="sub-microsecond"):
        hash_array(pa.array([1_500], pa.timestamp("ns")))
    # ... but a null slot's content does not matter.
    assert hash_array(pa.array([None, 2_000], pa.timestamp("ns"))).tolist() == [0, xxh(struct.pack("<q", 2))]
    with pytest.raises(ValueError, match="beyond the int64 microsecond range"):
        hash_array(pa.array([10**13], pa.timestamp("s")))


def _unscaled_bytes(unscaled: int, size: int) -> bytes:
    return unscaled.to_bytes(size, "big", signed=True)


@pytest.mark.parametrize("precision, scale", [(1, 0), (9, 2), (10, 0), (18, 4), (19, 0), (20, 2), (28, 6), (38, 10)])
def test_decimals_hash_as_spark_writes_them(precision, scale):
    top = 10**precision - 1
    edges = [0, 1, -1, top, -top, 127, -128, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63)]
    unscaled = [v for v in edges if abs(v) <= top] + [int(v) % (top + 1) * (-1) ** i for i, v in enumerate(RNG.integers(0, 2**62, 50))]
    raw = b"".join(v.to_bytes(16, "little", signed=True) for v in unscaled)
    array = pa.Array.from_buffers(pa.decimal128(precision, scale), len(unscaled), [None, pa.py_buffer(raw)])
    if precision <= 9:
        want = expected("<i", unscaled)
    elif precision <= 18:
        want = expected("<q", unscaled)
    else:
        size = min_bytes_for_precision(precision)
        want = np.array([xxh(_unscaled_bytes(v, size)) for v in unscaled], dtype=np.uint64)
    np.testing.assert_array_equal(hash_array(array), want)
    np.testing.assert_array_equal(hash_array(array.cast(pa.decimal256(precision, scale))), want)


def test_min_bytes_for_precision_table():
    # Spark's Decimal.minBytesForPrecision for 1..38 (also checked against Spark in test_sbbf_oracles).
    assert [min_bytes_for_precision(p) for p in (1, 2, 3, 9, 10, 18, 19, 20, 28, 38)] == [1, 1, 2, 4, 5, 8, 9, 9, 12, 16]


@pytest.mark.parametrize(
    "arrow_type, named",
    [
        (pa.bool_(), "bool"),
        (pa.struct([("a", pa.int32())]), "struct"),
        (pa.map_(pa.string(), pa.int32()), "map"),
        (pa.list_(pa.int32()), "list"),
        (pa.uint8(), "uint8"),
        (pa.float16(), "halffloat"),
        (pa.time64("us"), "time64"),
        (pa.null(), "null"),
    ],
)
def test_unsupported_types_raise_naming_the_type(arrow_type, named):
    with pytest.raises(UnsupportedTypeError, match=named):
        hash_array(pa.array([None], arrow_type))


def test_decimals_beyond_spark_precision_are_refused():
    with pytest.raises(UnsupportedTypeError, match="at most 38"):
        hash_array(pa.array([Decimal(1)], pa.decimal256(40, 0)))
    with pytest.raises(UnsupportedTypeError, match="precision"):
        arrow_type_for("decimal(39,0)")


def test_hash_scalar_by_spark_type_name_or_pyspark_type():
    from pyspark.sql import types as T

    assert hash_scalar(7, "int") == hash_scalar(7, "tinyint") == hash_scalar(7, T.ShortType()) == xxh(struct.pack("<i", 7))
    assert hash_scalar(7, "bigint") == hash_scalar(7, T.LongType()) == xxh(struct.pack("<q", 7))
    assert hash_scalar(dt.date(1970, 1, 2), "date") == xxh(struct.pack("<i", 1))
    ts = dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.timezone.utc)
    assert hash_scalar(ts, "timestamp") == hash_scalar(ts, T.TimestampType()) == xxh(struct.pack("<q", 1_000_000))
    assert hash_scalar(dt.datetime(1970, 1, 1, 0, 0, 1), "timestamp_ntz") == xxh(struct.pack("<q", 1_000_000))
    assert hash_scalar(Decimal("-1.25"), "decimal(9,2)") == xxh(struct.pack("<i", -125))
    assert hash_scalar(Decimal("1.25"), T.DecimalType(20, 2)) == xxh(_unscaled_bytes(125, 9))
    assert hash_scalar(0.5, "float") == xxh(struct.pack("<f", 0.5))
    assert hash_scalar("é", "string") == xxh("é".encode())
    assert hash_scalar(b"\x01", pa.binary()) == xxh(b"\x01")


def test_hash_scalar_refuses_inexact_conversions_and_nulls():
    with pytest.raises(ValueError, match="not exactly representable"):
        hash_scalar(0.1, "float")
    with pytest.raises(ValueError, match="exactly"):
        hash_scalar(Decimal("1.234"), "decimal(9,2)")
    with pytest.raises(ValueError, match="exactly"):
        hash_scalar(300, "byte")
    with pytest.raises(ValueError, match="null"):
        hash_scalar(None, "int")
    with pytest.raises(UnsupportedTypeError, match="boolean"):
        hash_scalar(True, "boolean")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(max_size=600), max_size=30), st.integers(0, (1 << 64) - 1))
def test_seeded_xxh64_bytes_matches_xxhash(values, seed):
    # The seed the reader's row checksums use (XXH64 of `<index>/v__=N`): every length path, including > 512 bytes.
    data = np.frombuffer(b"".join(values), dtype=np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(v) for v in values])]).astype(np.int64)
    assert xxh64_bytes(data, offsets, seed).tolist() == [xxhash.xxh64_intdigest(v, seed) for v in values]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-(1 << 63), (1 << 63) - 1), st.integers(0, (1 << 64) - 1)), max_size=30))
def test_xxh64_u64_with_one_seed_per_value_matches_xxhash(pairs):
    # The zone checksum chain: hashLong(v, previous hash), each row its own seed.
    values = np.array([v for v, _ in pairs], dtype=np.int64)
    seeds = np.array([s for _, s in pairs], dtype=np.uint64)
    assert xxh64_u64(values, seeds).tolist() == [xxhash.xxh64_intdigest(struct.pack("<q", v), s) for v, s in pairs]
