"""hsbloom's SBBF byte for byte against live writers: parquet-java through the JVM gateway, the
filters pyarrow's Parquet writer produces, and the filters Spark writes into Parquet files."""

from __future__ import annotations

import math
import random
import struct
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sbbf_helpers import column_filter_blobs, load_vectors, vector_array

from hsbloom.readers.parquet_hash import hash_array, min_bytes_for_precision
from hsbloom.readers.sbbf import Sbbf, read_header
from jvm_classes import jvm_class

sys.path.insert(0, str(Path(__file__).resolve().parent / "vectors"))
from generate_vectors import ParquetJava  # noqa: E402

TYPES = [
    "byte", "short", "int", "long", "float", "double", "string", "binary", "date", "timestamp",
    "timestamp_ntz", "decimal(9,2)", "decimal(10,0)", "decimal(18,4)", "decimal(19,0)", "decimal(38,10)",
]  # fmt: skip


@pytest.fixture(scope="module")
def parquet_java(spark) -> ParquetJava:
    return ParquetJava(spark)


def random_values(spark_type: str, rng: random.Random, count: int) -> list:
    """Random values in the vectors' JSON encoding (see tests/vectors/README.md)."""
    if spark_type in ("byte", "short", "int", "date"):
        bits = {"byte": 8, "short": 16, "int": 32, "date": 22}[spark_type]
        return [rng.randint(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) for _ in range(count)]
    if spark_type in ("long", "timestamp", "timestamp_ntz"):
        return [str(rng.randint(-(2**63), 2**63 - 1)) for _ in range(count)]
    if spark_type in ("float", "double"):
        width = 32 if spark_type == "float" else 64
        # Raw bit patterns: NaNs with payloads, infinities, subnormals and -0.0 all turn up.
        special = [0, 1 << (width - 1), (1 << width) - 1] if width == 32 else [0, 1 << 63, (1 << 64) - 1]
        return [{"bits": f"{b:0{width // 4}x}"} for b in special + [rng.getrandbits(width) for _ in range(count)]]
    if spark_type == "string":
        alphabet = "abcXYZ019 -_éßΩ漢字😀\U0010ffff\x00"
        return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 90))) for _ in range(count)]
    if spark_type == "binary":
        return [rng.randbytes(rng.randint(0, 120)).hex() for _ in range(count)]
    precision = int(spark_type[len("decimal(") :].split(",")[0])
    top = 10**precision - 1
    return [str(rng.randint(-top, top)) for _ in range(count)]


# -- parquet-java through the JVM gateway -----------------------------------------------------


def test_every_vector_hash_is_what_parquet_java_computes(parquet_java):
    vectors = load_vectors()
    wrong = [e for e in vectors["hashes"] if f"{parquet_java.hash(e['type'], e['value']):016x}" != e["hash"]]
    assert not wrong
    for case in vectors["filters"]:
        bloom = parquet_java.new_filter(case["num_bytes"])
        parquet_java.insert(bloom, [parquet_java.hash(case["type"], v) for v in case["values"]])
        assert parquet_java.serialize(bloom).hex() == case["filter_hex"]


@pytest.mark.parametrize("spark_type", TYPES)
def test_random_values_hash_and_fill_filters_like_parquet_java(parquet_java, spark_type):
    rng = random.Random(f"oracle-{spark_type}")
    values = random_values(spark_type, rng, 150)
    want = [parquet_java.hash(spark_type, v) for v in values]
    assert hash_array(vector_array(spark_type, values)).tolist() == want
    for num_bytes in (32, 1024):
        bloom = parquet_java.new_filter(num_bytes)
        parquet_java.insert(bloom, want)
        ours = Sbbf(num_bytes)
        ours.insert(vector_array(spark_type, values))
        assert ours.to_bytes() == parquet_java.serialize(bloom)


def test_decimal_byte_lengths_are_sparks(parquet_java):
    assert [min_bytes_for_precision(p) for p in range(1, 39)] == [
        parquet_java.min_bytes_for_precision(p) for p in range(1, 39)
    ]


def test_sizing_agrees_with_parquet_java_except_near_powers_of_two(parquet_java):
    # parquet-java adjusts the bit count with (bits + 255) & ~256 (which clears bit 8 only) before
    # taking the next power of two, so near a power of two (6 % of this grid, mostly small filters)
    # it lands one size above or below hsbloom's (arrow-rs's) choice. Readers never care: the size
    # is in the header, and hsbloom rebuilds Spark-written filters at the header's size.
    cases = [(ndv, fpp) for fpp in (0.1, 0.05, 0.01, 0.001) for ndv in [*range(1, 3000, 7), 10**4, 10**5, 10**6, 10**7]]
    for ndv, fpp in cases:
        ours = Sbbf.for_ndv(ndv, fpp).num_bytes
        theirs = parquet_java.new_filter(parquet_java.optimal_num_bits(ndv, fpp) // 8).getBitsetSize()
        assert theirs in (ours // 2, ours, 2 * ours), (ndv, fpp, ours, theirs)


# -- hsbloom's Scala Sbbf (the other half of the pair) --------------------------------------


def test_scala_sbbf_reads_folds_and_estimates_like_python(spark):
    scala = jvm_class(spark, "sbbf")
    rng = np.random.default_rng(11)
    for num_bytes, count, fpp in ((1 << 20, 1000, 0.01), (1 << 16, 3000, 0.05), (4096, 20_000, 0.01), (1 << 16, 0, 0.01)):
        ours = Sbbf(num_bytes)
        ours.insert_hashes(rng.integers(0, 2**64, count, dtype=np.uint64))
        theirs = scala.fromBytes(bytearray(ours.to_bytes()))
        assert bytes(theirs.toBytes()) == ours.to_bytes()
        assert theirs.estimatedFpp() == pytest.approx(ours.estimated_fpp(), rel=1e-12, abs=1e-300)
        assert bytes(theirs.foldToTargetFpp(fpp).toBytes()) == ours.fold_to_target_fpp(fpp).to_bytes()
    # A skewed filter (one block full, the rest empty) folds by the same rule on both sides.
    skewed = Sbbf.from_bitset(b"\xff" * 32 + bytes(32 * 1023))
    theirs = scala.fromBytes(bytearray(skewed.to_bytes()))
    for fpp in (0.001, 0.01, 0.5):
        assert bytes(theirs.foldToTargetFpp(fpp).toBytes()) == skewed.fold_to_target_fpp(fpp).to_bytes()


# -- pyarrow's writer -------------------------------------------------------------------------


def arrow_cpp_num_bytes(ndv: int, fpp: float) -> int:
    """The initial filter size Arrow C++ (pyarrow) picks: bits rounded up to a power of two."""
    bits = max(int(-8.0 * ndv / math.log(1 - fpp ** (1 / 8))), 256)
    return min(1 << (bits - 1).bit_length(), 128 * 1024 * 1024 * 8) // 8


def arrow_columns(n: int, seed: int) -> dict[str, pa.Array]:
    """One column per Spark type, as pyarrow writes them with the same physical types as Spark."""
    rng = random.Random(seed)
    columns = {}
    for spark_type in TYPES:
        values = random_values(spark_type, rng, n)[:n]
        array = vector_array(spark_type, values)
        valid = pa.array([rng.random() >= 0.1 for _ in range(n)]).buffers()[1]
        # Same value buffers, with about one value in ten marked null.
        columns[spark_type] = pa.Array.from_buffers(array.type, n, [valid, *array.buffers()[1:]])
    return columns


def write_with_pyarrow(path: Path, columns: dict[str, pa.Array], options: dict[str, dict]) -> None:
    pq.write_table(
        pa.table(columns),
        path,
        bloom_filter_options=options,
        store_decimal_as_integer=True,  # INT32/INT64 for precision <= 18, as Spark writes them
        use_dictionary=False,
    )


def test_pyarrow_stores_types_the_way_spark_does(tmp_path):
    path = tmp_path / "types.parquet"
    columns = arrow_columns(10, seed=1)
    write_with_pyarrow(path, columns, dict.fromkeys(columns, True))
    schema = pq.ParquetFile(path).schema
    physical = {schema.column(i).name: schema.column(i).physical_type for i in range(len(schema))}
    assert physical["byte"] == physical["short"] == physical["decimal(9,2)"] == physical["date"] == "INT32"
    assert physical["long"] == physical["timestamp"] == physical["decimal(18,4)"] == "INT64"
    assert physical["decimal(38,10)"] == "FIXED_LEN_BYTE_ARRAY"
    assert schema.column(list(physical).index("decimal(38,10)")).length == min_bytes_for_precision(38)


def test_pyarrow_filters_without_folding(tmp_path):
    # pyarrow 26 does not expose Arrow C++'s BloomFilterOptions.fold (always on), so "no folding"
    # means a filter already as full as its target: the fpp is chosen so that the declared ndv
    # (the real distinct count) needs 97 % of a power of two; one fold would blow the target.
    columns = arrow_columns(3000, seed=2)
    options, sizes = {}, {}
    for name, array in columns.items():
        distinct = len(set(hash_array(array.drop_null()).tolist()))
        num_bits = 1 << (distinct * 10 - 1).bit_length()
        fpp = (1 - math.exp(-8 / (0.97 * num_bits / distinct))) ** 8
        options[name] = {"ndv": distinct, "fpp": fpp}
        sizes[name] = arrow_cpp_num_bytes(distinct, fpp)
        assert sizes[name] == num_bits // 8
    path = tmp_path / "unfolded.parquet"
    write_with_pyarrow(path, columns, options)
    blobs = column_filter_blobs(path)
    assert {name for _, name in blobs} == set(columns)
    for (_, name), blob in blobs.items():
        assert read_header(blob)[1] == sizes[name], name
        ours = Sbbf(sizes[name])
        ours.insert(columns[name])
        assert ours.to_bytes() == blob, name
        assert ours.fold_to_target_fpp(options[name]["fpp"]) == ours, name  # hsbloom would not fold either


def test_pyarrow_filters_with_folding(tmp_path):
    # A generous ndv: pyarrow allocates for 200k values, inserts 2000, then folds the filter.
    n, ndv, fpp = 2000, 200_000, 0.05
    columns = arrow_columns(n, seed=3)
    path = tmp_path / "folded.parquet"
    write_with_pyarrow(path, columns, dict.fromkeys(columns, {"ndv": ndv, "fpp": fpp}))
    initial = arrow_cpp_num_bytes(ndv, fpp)
    for (_, name), blob in column_filter_blobs(path).items():
        folded_size = read_header(blob)[1]
        assert folded_size < initial, name
        big = Sbbf(initial)
        big.insert(columns[name])
        assert big.fold(folded_size).to_bytes() == blob, name  # OR-ing adjacent blocks, like Arrow C++
        fresh = Sbbf(folded_size)
        fresh.insert(columns[name])
        assert fresh.to_bytes() == blob, name  # == a fresh build at the folded size
        # Arrow C++ stops folding on a global fill estimate, hsbloom on the per-word one
        # (estimated_fpp): on this data both stop at the same size or one step apart.
        assert big.fold_to_target_fpp(fpp).num_bytes in (folded_size // 2, folded_size, 2 * folded_size), name


# -- Spark's Parquet writer -------------------------------------------------------------------

SPARK_COLUMNS = {
    "c_byte": "byte", "c_short": "short", "c_int": "int", "c_long": "long", "c_float": "float",
    "c_double": "double", "c_string": "string", "c_binary": "binary", "c_date": "date",
    "c_timestamp": "timestamp", "c_timestamp_ntz": "timestamp_ntz", "c_dec9": "decimal(9,2)",
    "c_dec18": "decimal(18,4)", "c_dec19": "decimal(19,0)", "c_dec38": "decimal(38,10)",
}  # fmt: skip


@pytest.fixture(scope="module")
def spark_written(spark, tmp_path_factory):
    """(source table, Parquet files Spark wrote from it with Parquet-native Bloom filters on every
    column); a row_id column tells which source rows each file holds."""
    base = tmp_path_factory.mktemp("spark_bloom")
    source_path = base / "source.parquet"
    columns = arrow_columns(4000, seed=4)
    source = pa.table(
        {"row_id": pa.array(np.arange(4000, dtype=np.int64)), **{name: columns[t] for name, t in SPARK_COLUMNS.items()}}
    )
    pq.write_table(source, source_path)
    df = spark.read.parquet(str(source_path))
    assert {f.name: f.dataType.simpleString() for f in df.schema.fields}["c_timestamp_ntz"] == "timestamp_ntz"
    ndv = {"c_byte": 256, "c_short": 1000, "c_date": 500}
    # parquet-java writes no Bloom filter for a chunk whose pages are all dictionary-encoded (the
    # dictionary answers membership), which would leave the 256-value byte column without one.
    writer = df.repartition(2).write.option("parquet.enable.dictionary", "false")
    for name in SPARK_COLUMNS:
        writer = writer.option(f"parquet.bloom.filter.enabled#{name}", "true").option(
            f"parquet.bloom.filter.expected.ndv#{name}", str(ndv.get(name, 4000))
        )
    key = "spark.sql.parquet.outputTimestampType"
    previous = spark.conf.get(key)
    spark.conf.set(key, "TIMESTAMP_MICROS")
    try:
        writer.parquet(str(base / "out"))
    finally:
        spark.conf.set(key, previous)
    files = sorted((base / "out").glob("part-*.parquet"))
    assert len(files) == 2
    return source, files


def test_spark_written_filters_rebuild_byte_for_byte(spark_written):
    source, files = spark_written
    checked = 0
    for path in files:
        parquet = pq.ParquetFile(path)
        blobs = column_filter_blobs(path)
        assert {name for _, name in blobs} == set(SPARK_COLUMNS)
        for (rg, name), blob in blobs.items():
            # The values Spark was given for this row group (see the NaN test below for why not
            # the values read back from the file).
            row_ids = parquet.read_row_group(rg, columns=["row_id"])["row_id"]
            values = source[name].take(row_ids)
            ours = Sbbf(read_header(blob)[1])
            ours.insert(values)
            assert ours.to_bytes() == blob, (path.name, name, values.type)
            if name not in ("c_float", "c_double"):
                stored = parquet.read_row_group(rg, columns=[name])[name]
                rebuilt = Sbbf(ours.num_bytes)
                rebuilt.insert(stored)
                assert rebuilt == ours, (path.name, name)
            checked += 1
    assert checked == 2 * len(SPARK_COLUMNS)


def test_spark_stores_each_type_as_hashed(spark_written):
    schema = pq.ParquetFile(spark_written[1][0]).schema
    physical = {schema.column(i).name: schema.column(i).physical_type for i in range(len(schema))}
    assert {physical[name] for name in ("c_byte", "c_short", "c_int", "c_date", "c_dec9")} == {"INT32"}
    assert {physical[name] for name in ("c_long", "c_timestamp", "c_timestamp_ntz", "c_dec18")} == {"INT64"}
    assert {physical[name] for name in ("c_dec19", "c_dec38")} == {"FIXED_LEN_BYTE_ARRAY"}


def test_spark_filters_hash_nan_payloads_that_its_pages_canonicalize(spark_written):
    # parquet-java hashes a float by its raw bits (ByteBuffer.putFloat) but its PLAIN page writer
    # stores Float.floatToIntBits, which turns every NaN into 0x7fc00000: the filter holds the
    # NaN payloads Spark was given, the file holds canonical NaNs. hsbloom matches the filter (it
    # hashes raw bits too); queries never prune on NaN, so neither side can drop a row wrongly.
    source, files = spark_written
    table = pq.read_table(files[0])
    row_ids = table["row_id"]
    given_array = source["c_float"].take(row_ids).combine_chunks()
    valid = given_array.is_valid().to_numpy(zero_copy_only=False)
    given = given_array.to_numpy(zero_copy_only=False)  # (nulls come out as NaN: masked below)
    stored = table["c_float"].to_numpy(zero_copy_only=False)
    nan = np.isnan(given) & valid
    given_bits = given.view(np.uint32)[nan]
    assert (given_bits != 0x7FC00000).any()  # the data does hold NaN payloads
    assert (stored.view(np.uint32)[nan] == 0x7FC00000).all()
    blob = column_filter_blobs(files[0])[(0, "c_float")]
    assert Sbbf.from_bytes(blob).check(pa.array(given_bits.view(np.float32))).all()
    negative_zero = (given.view(np.uint32) == 0x80000000) & valid
    assert negative_zero.any() and (stored.view(np.uint32)[negative_zero] == 0x80000000).all()  # -0.0 kept
