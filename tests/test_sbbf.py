"""The package's SBBF (hsbloom/readers/sbbf.py): construction, serialization, insert/check, union and folding, false positives."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hsbloom.readers.sbbf as sbbf_module
from hsbloom.readers.sbbf import (
    MAX_BYTES,
    SALTS,
    Sbbf,
    SbbfFormatError,
    header_bytes,
    optimal_num_bits,
    optimal_num_bytes,
    read_header,
)

RNG = np.random.default_rng(7)


def reference_bitset(num_bytes: int, hashes) -> bytes:
    """The Parquet spec's insert, one hash at a time in plain Python integers."""
    words = [0] * (num_bytes // 4)
    z = num_bytes // 32
    for h in map(int, hashes):
        block = ((h >> 32) * z) >> 32
        key = h & 0xFFFFFFFF
        for i, salt in enumerate(map(int, SALTS)):
            words[block * 8 + i] |= 1 << (((key * salt) & 0xFFFFFFFF) >> 27)
    return np.array(words, dtype="<u4").tobytes()


def random_hashes(n: int) -> np.ndarray:
    return RNG.integers(0, 2**64, n, dtype=np.uint64)


# -- construction and sizing ----------------------------------------------------------------


def test_sizing_matches_arrow_rs_tables():
    table = {
        (0.1, 10): 57, (0.01, 10): 96, (0.001, 10): 146,
        (0.1, 100): 577, (0.01, 100): 968, (0.001, 100): 1460,
        (0.1, 1000): 5772, (0.01, 1000): 9681, (0.001, 1000): 14607,
        (0.1, 10000): 57725, (0.01, 10000): 96815, (0.001, 10000): 146076,
        (0.1, 100000): 577254, (0.01, 100000): 968152, (0.001, 100000): 1460769,
        (0.1, 1000000): 5772541, (0.01, 1000000): 9681526, (0.001, 1000000): 14607697,
    }  # fmt: skip
    assert {key: optimal_num_bits(key[1], key[0]) for key in table} == table
    sizes = {0: 32, 9: 32, 31: 32, 32: 32, 33: 64, 99: 128, 1024: 1024, 999_000_000: 128 * 1024 * 1024}
    assert {n: optimal_num_bytes(n) for n in sizes} == sizes


def test_for_ndv_builds_power_of_two_filters_as_arrow_rs_sizes_them():
    # arrow-rs's module table: (ndv, fpp) -> blocks.
    table = {(10_000, 0.1): 256, (10_000, 0.01): 512, (100_000, 0.001): 8192, (1_000_000, 1e-6): 262_144}
    assert {key: Sbbf.for_ndv(*key).num_blocks for key in table} == table
    assert Sbbf.for_ndv(0, 0.01).num_bytes == 32
    assert Sbbf.for_ndv(10**12, 0.01).num_bytes == MAX_BYTES
    for bad in (0.0, 1.0, -0.5, float("nan")):
        with pytest.raises(ValueError, match="strictly between 0 and 1"):
            Sbbf.for_ndv(100, bad)
    with pytest.raises(ValueError, match="ndv"):
        Sbbf.for_ndv(-1, 0.01)


def test_constructor_takes_an_exact_size():
    f = Sbbf(96)  # any multiple of 32 is a valid Parquet filter
    assert (f.num_bytes, f.num_blocks, f.popcount, f.bitset) == (96, 3, 0, bytes(96))
    for bad in (0, 16, 33, -32, MAX_BYTES + 32):
        with pytest.raises(ValueError, match="multiple of 32"):
            Sbbf(bad)
    with pytest.raises(TypeError):
        Sbbf(32.0)


def test_from_bitset_wraps_and_copies_little_endian_words():
    raw = bytearray(range(32))
    f = Sbbf.from_bitset(raw)
    raw[0] = 0xFF
    assert f.bitset == bytes(range(32))
    assert f.popcount == sum(bin(b).count("1") for b in range(32))
    with pytest.raises(SbbfFormatError, match="bitset length is 40"):
        Sbbf.from_bitset(bytes(40))


# -- serialization ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "num_bytes, header_length",
    [(32, 15), (1024, 16), (32768, 17), (4 * 1024 * 1024, 18), (MAX_BYTES, 19)],
)
def test_header_is_15_to_19_bytes_and_round_trips(num_bytes, header_length):
    header = header_bytes(num_bytes)
    assert len(header) == header_length
    assert read_header(header + b"rest is ignored") == (header_length, num_bytes)
    assert header.endswith(bytes.fromhex("1c1c00001c1c00001c1c000000"))


def test_to_bytes_and_from_bytes_round_trip():
    f = Sbbf(1024)
    f.insert(pa.array(["hello", "parquet", "bloom", "filter"]))
    blob = f.to_bytes()
    assert blob[:16].hex() == "1580101c1c00001c1c00001c1c000000"
    assert Sbbf.from_bytes(blob) == f
    assert Sbbf.from_bytes(memoryview(blob)) == f
    assert Sbbf.from_bytes(bytearray(blob)).bitset == f.bitset


def _header(fields: bytes) -> bytes:
    return fields + b"\x00"


GOOD_UNIONS = bytes.fromhex("1c1c0000") * 3


@pytest.mark.parametrize(
    "blob, message",
    [
        (b"", "truncated"),
        (bytes.fromhex("1580"), "truncated"),
        (bytes.fromhex("158010"), "truncated"),
        (_header(bytes.fromhex("158010")), "lacks required field\\(s\\): algorithm, hash, compression"),
        (_header(bytes.fromhex("2c1c0000") + bytes.fromhex("1c1c0000") * 2), "lacks required field\\(s\\): numBytes$"),
        (_header(bytes.fromhex("158010") + bytes.fromhex("1c2c0000") + bytes.fromhex("1c1c0000") * 2), "algorithm is union member 2"),
        (_header(bytes.fromhex("158010") + bytes.fromhex("1c1c0000") + bytes.fromhex("1c2c0000") + bytes.fromhex("1c1c0000")), "hash is union member 2"),
        (_header(bytes.fromhex("158010") + bytes.fromhex("1c1c0000") * 2 + bytes.fromhex("1c2c0000")), "compression is union member 2"),
        (_header(bytes.fromhex("158010") + bytes.fromhex("1c00") + bytes.fromhex("1c1c0000") * 2), "algorithm union is empty"),
        (_header(bytes.fromhex("15ff0f") + GOOD_UNIONS), "numBytes is -1024"),
        (_header(bytes.fromhex("15a09c01") + GOOD_UNIONS), "numBytes is 10000"),
        (_header(bytes.fromhex("158080808002") + GOOD_UNIONS), "numBytes is 268435456.*at most 134217728"),
        (_header(bytes.fromhex("16808010") + GOOD_UNIONS), "wrong Thrift type 6"),
        (bytes.fromhex("5fff"), "unknown Thrift type 15"),
    ],
)
def test_corrupt_headers_are_rejected_with_what_is_wrong(blob, message):
    with pytest.raises(SbbfFormatError, match=message):
        read_header(blob)
    with pytest.raises(SbbfFormatError, match=message):
        Sbbf.from_bytes(blob)


def test_unknown_fields_from_later_format_versions_are_skipped():
    # Field 1 (numBytes=32), then a field 5 (an i64) and field 6 (a binary) a later format might add.
    fields = bytes.fromhex("1540") + GOOD_UNIONS + bytes.fromhex("16" + "02") + bytes.fromhex("18" + "03616263")
    assert read_header(_header(fields)) == (len(fields) + 1, 32)


def test_bitset_length_must_match_the_header():
    blob = Sbbf(64).to_bytes()
    with pytest.raises(SbbfFormatError, match="numBytes=64, but 63 bytes follow the 16-byte header"):
        Sbbf.from_bytes(blob[:-1])
    with pytest.raises(SbbfFormatError, match="numBytes=64, but 96 bytes follow"):
        Sbbf.from_bytes(blob + bytes(32))


def test_the_pre_release_murmur3_format_is_named_in_the_error():
    legacy = (1024).to_bytes(4, "little") + bytes(8) + bytes(1024)
    with pytest.raises(SbbfFormatError, match="deprecated pre-release .* MURMUR3"):
        Sbbf.from_bytes(legacy)


# -- insert and check -----------------------------------------------------------------------


@pytest.mark.parametrize("num_bytes, count", [(32, 3), (32, 1000), (1024, 5), (1024, 20_000), (96, 300), (65536, 100)])
def test_insert_sets_exactly_the_spec_bits(num_bytes, count):
    hashes = random_hashes(count)
    f = Sbbf(num_bytes)
    f.insert_hashes(hashes)
    assert f.bitset == reference_bitset(num_bytes, hashes)
    assert f.check_hashes(hashes).all()


def test_large_filters_are_filled_window_by_window(monkeypatch):
    monkeypatch.setattr(sbbf_module, "_SCRATCH_WINDOW_BLOCKS", 64)
    hashes = random_hashes(30_000)
    f = Sbbf(65536)  # 2048 blocks: 32 windows
    f.insert_hashes(hashes)
    assert f.bitset == reference_bitset(65536, hashes)


def test_int64_hashes_from_the_jvm_are_accepted_and_other_dtypes_refused():
    hashes = random_hashes(100)
    a, b = Sbbf(1024), Sbbf(1024)
    a.insert_hashes(hashes)
    b.insert_hashes(hashes.view(np.int64))
    assert a == b
    assert b.check_hashes(hashes.view(np.int64)).all()
    with pytest.raises(TypeError, match="uint64"):
        a.insert_hashes(np.arange(3, dtype=np.int32))


def test_check_matches_the_spec_for_present_and_absent_hashes():
    f = Sbbf(256)
    inserted = random_hashes(40)
    f.insert_hashes(inserted)
    probes = np.concatenate([inserted, random_hashes(2000)])
    words = np.frombuffer(f.bitset, dtype="<u4").astype(np.int64)
    want = []
    for h in map(int, probes):
        block = ((h >> 32) * f.num_blocks) >> 32
        key = h & 0xFFFFFFFF
        want.append(all(words[block * 8 + i] >> (((key * int(s)) & 0xFFFFFFFF) >> 27) & 1 for i, s in enumerate(SALTS)))
    assert f.check_hashes(probes).tolist() == want
    assert not all(want)  # the probe set does exercise absent answers


def test_insert_skips_nulls_and_check_answers_false_for_them():
    with_nulls = pa.array(["a", None, "b", None])
    f, g = Sbbf(64), Sbbf(64)
    f.insert(with_nulls)
    g.insert(pa.array(["a", "b"]))
    assert f == g
    assert f.check(with_nulls).tolist() == [True, False, True, False]
    assert f.check(pa.chunked_array([pa.array(["a"]), pa.array([None, "b"], pa.string())])).tolist() == [True, False, True]


value_strategies = {
    pa.int8(): st.integers(-128, 127),
    pa.int16(): st.integers(-(2**15), 2**15 - 1),
    pa.int32(): st.integers(-(2**31), 2**31 - 1),
    pa.int64(): st.integers(-(2**63), 2**63 - 1),
    pa.float32(): st.floats(width=32, allow_nan=True),
    pa.float64(): st.floats(allow_nan=True),
    pa.string(): st.text(max_size=80),
    pa.binary(): st.binary(max_size=80),
    pa.date32(): st.dates(),
    pa.timestamp("us", tz="UTC"): st.integers(-(2**62), 2**62),
    pa.timestamp("us"): st.integers(-(2**62), 2**62),
    pa.decimal128(9, 2): st.decimals(min_value=-9999999, max_value=9999999, places=2, allow_nan=False),
    pa.decimal128(18, 3): st.decimals(min_value=-(10**14), max_value=10**14, places=3, allow_nan=False),
    pa.decimal128(38, 6): st.decimals(min_value=-(10**31), max_value=10**31, places=6, allow_nan=False),
}
typed_values = st.sampled_from(sorted(value_strategies, key=str)).flatmap(
    lambda t: st.tuples(st.just(t), st.lists(st.one_of(st.none(), value_strategies[t]), max_size=300))
)


@settings(max_examples=120, deadline=None)
@given(typed_values, st.sampled_from([32, 64, 1024, 8192]), st.sampled_from([0.5, 0.01]))
def test_no_false_negatives_ever(typed, num_bytes, fold_fpp):
    arrow_type, values = typed
    array = pa.array(values, type=arrow_type)
    f = Sbbf(num_bytes)
    f.insert(array)
    valid = array.is_valid().to_numpy(zero_copy_only=False)
    assert f.check(array)[valid].all()
    assert Sbbf.from_bytes(f.to_bytes()).check(array)[valid].all()
    assert f.fold_to_target_fpp(fold_fpp).check(array)[valid].all()
    merged = Sbbf(num_bytes).union(f)
    assert merged.check(array)[valid].all()


@pytest.mark.parametrize("bits_per_value, spec_fpp", [(6.0, 0.10), (10.5, 0.01), (16.9, 0.001)])
def test_false_positive_rate_matches_the_parquet_spec_table(bits_per_value, spec_fpp):
    num_bytes = 256 * 1024
    n = int(num_bytes * 8 / bits_per_value)
    f = Sbbf(num_bytes)
    f.insert(pa.array(np.arange(n, dtype=np.int64)))
    probes = pa.array(np.arange(n, n + 4_000_000, dtype=np.int64))  # never inserted
    measured = float(f.check(probes).mean())
    assert abs(measured / spec_fpp - 1) < 0.15, measured
    assert abs(f.estimated_fpp() / spec_fpp - 1) < 0.15


# -- union and folding ------------------------------------------------------------------------


def test_union_is_bitwise_or_of_equal_sizes():
    a_hashes, b_hashes = random_hashes(300), random_hashes(300)
    a, b, both = Sbbf(1024), Sbbf(1024), Sbbf(1024)
    a.insert_hashes(a_hashes)
    b.insert_hashes(b_hashes)
    both.insert_hashes(np.concatenate([a_hashes, b_hashes]))
    before = a.bitset
    assert a.union(b) == both
    assert a.bitset == before  # union leaves its operands alone
    a.merge(b)
    assert a == both
    with pytest.raises(ValueError, match="different sizes \\(1024 and 2048 bytes\\)"):
        a.union(Sbbf(2048))


def test_fold_equals_a_fresh_build_at_the_smaller_size():
    values = pa.array(RNG.integers(-(2**63), 2**63, 5000, dtype=np.int64))
    big = Sbbf(64 * 1024)
    big.insert(values)
    for size in (32 * 1024, 1024, 32):
        fresh = Sbbf(size)
        fresh.insert(values)
        assert big.fold(size) == fresh
    odd = Sbbf(96 * 2)  # 6 blocks: halving keeps the spec's block mapping for any even count
    odd.insert(values)
    fresh = Sbbf(96)
    fresh.insert(values)
    assert odd.fold(96) == fresh
    for bad in (48, 3 * 1024, 128 * 1024, 0):
        with pytest.raises(ValueError, match="cannot fold"):
            big.fold(bad)


def test_fold_to_target_fpp_folds_while_the_estimated_rate_stays_within_target():
    values = pa.array(np.arange(1000, dtype=np.int64))
    big = Sbbf(1024 * 1024)
    big.insert(values)
    folded = big.fold_to_target_fpp(0.01)
    fresh = Sbbf(folded.num_bytes)
    fresh.insert(values)
    assert folded == fresh
    assert big.num_bytes == 1024 * 1024  # a new filter; the original is untouched
    # The smallest fold within target: the next one would exceed it.
    assert folded.estimated_fpp() <= 0.01 < folded.fold(folded.num_bytes // 2).estimated_fpp()
    assert folded.num_bytes == Sbbf.for_ndv(1000, 0.01).num_bytes  # 2 KiB, what sizing would give
    # arrow-rs stops on a per-block bound, mean((set bits / 256)^8), which is never below
    # estimated_fpp() (AM-GM) and on random data picks the same size.
    fill = np.unpackbits(np.frombuffer(folded.bitset, np.uint8)).reshape(-1, 256).mean(axis=1)
    assert folded.estimated_fpp() <= float(np.mean(fill**8)) <= 0.01


def test_fold_to_target_fpp_of_an_empty_or_tiny_filter():
    assert Sbbf(1 << 20).fold_to_target_fpp(0.01).num_bytes == 32
    single = Sbbf(32)
    single.insert_hashes(random_hashes(3))
    assert single.fold_to_target_fpp(0.5) == single
    full = Sbbf(1024)
    full.insert_hashes(random_hashes(100_000))
    assert full.fold_to_target_fpp(0.01) == full  # too full to fold at all
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        full.fold_to_target_fpp(1.5)


def test_estimated_fpp_is_the_mean_over_blocks_of_the_product_of_word_fill():
    assert Sbbf(64).estimated_fpp() == 0.0
    assert Sbbf.from_bitset(b"\xff" * 64).estimated_fpp() == 1.0
    # Block 0: every word half full -> 0.5**8; block 1: one word empty -> 0.
    half = np.array([0x0000FFFF] * 8 + [0xFFFFFFFF] * 7 + [0], dtype="<u4").tobytes()
    assert Sbbf.from_bitset(half).estimated_fpp() == pytest.approx(0.5**8 / 2)


def test_repr_copy_and_equality():
    f = Sbbf(32)
    f.insert(pa.array([1, 2, 3]))
    g = f.copy()
    assert g == f and g is not f
    g.insert(pa.array([4]))
    assert g != f
    assert repr(f) == f"Sbbf(num_bytes=32, popcount={f.popcount})"
    assert f != Sbbf(64)
