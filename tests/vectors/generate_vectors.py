"""Write tests/vectors/sbbf_vectors.json: Parquet Bloom filter hashes and filters computed by
parquet-java (org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter), the writer
Spark itself uses, reached through a SparkSession's JVM gateway. hsbloom's own code computes
none of it; both the Python and the Scala test suites check hsbloom against this file.

    .venv/bin/python tests/vectors/generate_vectors.py        # rewrites the file (deterministic)

tests/vectors/README.md describes the format.
"""

from __future__ import annotations

import json
import os
import random
import struct
import sys
from pathlib import Path
from typing import Any

from hsbloom import jar

OUTPUT = Path(__file__).resolve().parent / "sbbf_vectors.json"
_MASK64 = (1 << 64) - 1
SEED = 20260322


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _decimal_precision(spark_type: str) -> int | None:
    if spark_type.startswith("decimal("):
        return int(spark_type[len("decimal(") :].split(",")[0])
    return None


class ParquetJava:
    """parquet-java's BlockSplitBloomFilter through py4j, with exact arguments.

    py4j would turn a small Python int into a Java int (picking hash(int) for a long) and a float
    into a canonical double (losing NaN payloads), so every call goes through a MethodHandle of a
    fixed primitive signature; floats and doubles are passed as their raw bits and converted inside
    the JVM (Float.intBitsToFloat / Double.longBitsToDouble keep every bit, NaN payloads included).
    """

    def __init__(self, spark: Any):
        jvm = jar.jvm(spark)
        self._vm = jvm
        self._arrays = jar.gateway(spark)
        self._filter_class = jvm.org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter
        self._hasher = self._filter_class(32)
        cls = self._hasher.getClass()
        self._loader = cls.getClassLoader()
        handles = jvm.java.lang.invoke.MethodHandles
        self._handles = handles
        self._lookup = handles.publicLookup()
        self._cls = cls
        bound = lambda name, desc: self._lookup.findVirtual(cls, name, self._type(desc)).bindTo(self._hasher)
        self._hash_int = bound("hash", "(I)J")
        self._hash_long = bound("hash", "(J)J")
        self._hash_float_bits = self._filtered(
            bound("hash", "(F)J"), "java.lang.Float", "intBitsToFloat", "(I)F"
        )
        self._hash_double_bits = self._filtered(
            bound("hash", "(D)J"), "java.lang.Double", "longBitsToDouble", "(J)D"
        )
        self._binary = jvm.org.apache.parquet.io.api.Binary
        self._min_bytes = jvm.org.apache.spark.sql.types.Decimal.minBytesForPrecision()

    def _type(self, descriptor: str) -> Any:
        return self._vm.java.lang.invoke.MethodType.fromMethodDescriptorString(descriptor, self._loader)

    def _filtered(self, target: Any, owner: str, method: str, descriptor: str) -> Any:
        converter = self._lookup.findStatic(self._vm.java.lang.Class.forName(owner), method, self._type(descriptor))
        filters = self._arrays.new_array(self._vm.java.lang.invoke.MethodHandle, 1)
        filters[0] = converter
        return self._handles.filterArguments(target, 0, filters)

    # -- hashing ------------------------------------------------------------------------------

    def hash(self, spark_type: str, value: Any) -> int:
        """parquet-java's hash (unsigned) of a value given in the JSON encoding of the vectors."""
        if spark_type in ("byte", "short", "int", "date"):
            result = self._hash_int.invokeWithArguments([int(value)])
        elif spark_type in ("long", "timestamp", "timestamp_ntz"):
            result = self._hash_long.invokeWithArguments([int(value)])
        elif spark_type == "float":
            result = self._hash_float_bits.invokeWithArguments([_signed(int(value["bits"], 16), 32)])
        elif spark_type == "double":
            result = self._hash_double_bits.invokeWithArguments([_signed(int(value["bits"], 16), 64)])
        elif spark_type == "string":
            result = self._hasher.hash(self._binary.fromString(value))
        elif spark_type == "binary":
            result = self._hasher.hash(self._binary.fromConstantByteArray(bytearray(bytes.fromhex(value))))
        elif _decimal_precision(spark_type) is not None:
            result = self._hash_decimal(_decimal_precision(spark_type), int(value))
        else:
            raise ValueError(f"no vector encoding for type {spark_type}")
        return int(result) & _MASK64

    def _hash_decimal(self, precision: int, unscaled: int) -> int:
        # As Spark's Parquet writer stores decimals (spark.sql.parquet.writeLegacyFormat=false).
        if precision <= 9:
            return self._hash_int.invokeWithArguments([unscaled])
        if precision <= 18:
            return self._hash_long.invokeWithArguments([unscaled])
        size = self._min_bytes[precision]
        minimal = bytes(self._vm.java.math.BigInteger(str(unscaled)).toByteArray())
        sign = b"\xff" if unscaled < 0 else b"\x00"
        return self._hasher.hash(self._binary.fromConstantByteArray(bytearray(sign * (size - len(minimal)) + minimal)))

    def min_bytes_for_precision(self, precision: int) -> int:
        return int(self._min_bytes[precision])

    # -- filters ------------------------------------------------------------------------------

    def new_filter(self, num_bytes: int) -> Any:
        return self._filter_class(num_bytes)

    def insert(self, bloom: Any, hashes: list[int]) -> None:
        insert = self._lookup.findVirtual(self._cls, "insertHash", self._type("(J)V")).bindTo(bloom)
        for h in hashes:
            insert.invokeWithArguments([_signed(h, 64)])

    def find(self, bloom: Any, h: int) -> bool:
        return bool(bloom.findHash(_signed(h, 64)))

    def serialize(self, bloom: Any) -> bytes:
        """Header + bitset, the way ParquetFileWriter writes a column chunk's filter."""
        out = self._vm.java.io.ByteArrayOutputStream()
        header = self._vm.org.apache.parquet.format.converter.ParquetMetadataConverter.toBloomFilterHeader(bloom)
        self._vm.org.apache.parquet.format.Util.writeBloomFilterHeader(header, out)
        bloom.writeTo(out)
        return bytes(out.toByteArray())

    def optimal_num_bits(self, ndv: int, fpp: float) -> int:
        return int(self._filter_class.optimalNumOfBits(ndv, fpp))


# ---------------------------------------------------------------------------------------------
# Values, in the JSON encoding of the vectors.


def _float_bits(bits: int, width: int) -> dict[str, str]:
    return {"bits": f"{bits:0{width // 4}x}"}


def _float_values(rng: random.Random) -> list[dict[str, str]]:
    edge = [
        0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000,  # 0, -0, 1, -1, +-inf
        0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7F800001, 0x7FBFFFFF, 0xFFFFFFFF,  # NaNs (quiet, signaling, payloads)
        0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,  # subnormals, min normal, max
        0x3DCCCCCD, 0x40490FDB, 0x4B000000,  # 0.1f, pi, 2^23
    ]
    rand = [struct.unpack("<I", struct.pack("<f", rng.uniform(-1e6, 1e6)))[0] for _ in range(6)]
    return [_float_bits(b, 32) for b in edge + rand]


def _double_values(rng: random.Random) -> list[dict[str, str]]:
    edge = [
        0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000,
        0x7FF0000000000000, 0xFFF0000000000000,
        0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000000001, 0x7FF0000000000001,
        0x7FF7FFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,
        0x0000000000000001, 0x8000000000000001, 0x000FFFFFFFFFFFFF, 0x0010000000000000,
        0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
        0x3FB999999999999A, 0x400921FB54442D18, 0x4330000000000000,  # 0.1, pi, 2^52
    ]
    rand = [struct.unpack("<Q", struct.pack("<d", rng.uniform(-1e12, 1e12)))[0] for _ in range(6)]
    return [_float_bits(b, 64) for b in edge + rand]


def _ints(lo: int, hi: int, rng: random.Random, extra: list[int], count: int) -> list[int]:
    values = dict.fromkeys([lo, lo + 1, -1, 0, 1, 2, hi - 1, hi] + [v for v in extra if lo <= v <= hi])
    while len(values) < count:
        values[rng.randint(lo, hi)] = None
    return list(values)


def _strings(rng: random.Random) -> list[str]:
    fixed = [
        "", "a", "hello", "parquet", "bloom", "filter", "Hello_Not_Exists", "doing ", " ",
        "naïve café", "日本語テキスト", "Ελληνικά", "😀", "a😀b", "𝄞 music", "\U0010ffff", "\x00", "a\x00b",
        "x" * 31, "y" * 32, "z" * 33, "w" * 36, "v" * 63, "u" * 64, "t" * 65, "s" * 100,
        "0123456789abcdef" * 40,  # 640 bytes: longer than the vectorized path's cut-off
        "f47ac10b-58cc-4372-a567-0e02b2c3d479",
    ]
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 éß漢字😀"
    for length in (3, 5, 7, 8, 9, 12, 15, 16, 17, 23, 24, 25, 40, 47, 48, 49, 70):
        fixed.append("".join(rng.choice(alphabet) for _ in range(length)))
    return fixed


def _binaries(rng: random.Random) -> list[str]:
    values = [b"", b"\x00", b"\xff", b"\x00\x00\x00\x00", b"\xff" * 8, bytes(range(256))]
    for length in list(range(1, 41)) + [63, 64, 65, 96, 127, 128, 129]:
        values.append(bytes(rng.randrange(256) for _ in range(length)))
    return [v.hex() for v in values]


def _unscaled(precision: int, rng: random.Random, count: int = 20) -> list[str]:
    top = 10**precision - 1
    values = [0, 1, -1, top, -top, top // 2, -(top // 3), 10 ** (precision - 1), -(10 ** (precision - 1))]
    for bound in (127, 128, 255, 256, 2**31 - 1, 2**31, 2**63 - 1, 2**63):
        if bound <= top:
            values += [bound, -bound]
    values = list(dict.fromkeys(values))
    while len(values) < min(count, 2 * top + 1):
        candidate = rng.randint(-top, top)
        if candidate not in values:
            values.append(candidate)
    return [str(v) for v in values]


DATE_EDGES = [-719162, 2932896, 18993, 19000, 20000, 10957, -365, 365]  # 0001-01-01, 9999-12-31, ...
TIMESTAMP_EDGES = [
    -62135596800000000, 253402300799999999, 1700000000123456, 1700000000000000, 86400000000, -1000000,
    -(2**63), 2**63 - 1,
]


def hash_cases(rng: random.Random) -> list[tuple[str, Any]]:
    cases: list[tuple[str, Any]] = []
    cases += [("byte", v) for v in _ints(-128, 127, rng, [42, 100, -100, 126, -127], 20)]
    cases += [("short", v) for v in _ints(-32768, 32767, rng, [128, -129, 255, 256, 1000], 20)]
    cases += [("int", v) for v in _ints(-(2**31), 2**31 - 1, rng, [65535, 65536, -65536, 10**9], 24)]
    cases += [("long", str(v)) for v in _ints(-(2**63), 2**63 - 1, rng, [2**31, -(2**31) - 1, 2**32, 10**18], 24)]
    cases += [("float", v) for v in _float_values(rng)]
    cases += [("double", v) for v in _double_values(rng)]
    cases += [("string", v) for v in _strings(rng)]
    cases += [("binary", v) for v in _binaries(rng)]
    cases += [("date", v) for v in _ints(-719162, 2932896, rng, DATE_EDGES, 20)]
    for name in ("timestamp", "timestamp_ntz"):
        cases += [(name, str(v)) for v in _ints(-(2**63), 2**63 - 1, rng, TIMESTAMP_EDGES, 22)]
    for precision, scale in ((1, 0), (5, 2), (9, 2), (10, 0), (10, 3), (18, 4), (19, 0), (20, 2), (28, 6), (38, 10), (38, 0)):
        cases += [(f"decimal({precision},{scale})", v) for v in _unscaled(precision, rng)]
    return cases


def filter_cases(rng: random.Random) -> list[tuple[str, int, list[Any], list[Any]]]:
    """(type, num_bytes, values inserted, candidate absent values)."""

    def longs(n: int) -> list[str]:
        return [str(rng.randint(-(2**63), 2**63 - 1)) for _ in range(n)]

    def uuid_like(n: int) -> list[str]:
        return [
            "-".join(f"{rng.getrandbits(bits):0{bits // 4}x}" for bits in (32, 16, 16, 16, 48)) for _ in range(n)
        ]

    return [
        # The arrow-rs fixture: the 32-byte filter parquet-mr/Spark wrote for "a0".."a9".
        ("string", 32, [f"a{i}" for i in range(10)], ["b0", "a10", "", "A0"]),
        ("int", 32, list(range(10)), [10, 11, -1, 2**31 - 1, 1000]),
        ("byte", 32, [-128, -1, 0, 1, 127], [2, 3, -2, 100]),
        ("short", 32, [-32768, -1, 0, 1, 32767], [2, 3, -2, 1000]),
        ("long", 1024, longs(120) + [str(-(2**63)), str(2**63 - 1), "0"], longs(40)),
        ("double", 1024, [v for v in _double_values(rng)], [_float_bits(rng.getrandbits(64), 64) for _ in range(30)]),
        ("float", 1024, [v for v in _float_values(rng)], [_float_bits(rng.getrandbits(32), 32) for _ in range(30)]),
        ("string", 1024, _strings(rng) + uuid_like(40), uuid_like(40) + ["not there", "Hello_Not_Exists"]),
        ("binary", 1024, _binaries(rng)[:40], [bytes(rng.randrange(256) for _ in range(12)).hex() for _ in range(30)]),
        ("date", 1024, _ints(-719162, 2932896, rng, DATE_EDGES, 60), [rng.randint(-719162, 2932896) for _ in range(30)]),
        ("timestamp", 1024, longs(80), longs(30)),
        ("timestamp_ntz", 1024, [str(v) for v in TIMESTAMP_EDGES] + longs(60), longs(30)),
        ("decimal(9,2)", 1024, _unscaled(9, rng, 60), _unscaled(9, rng, 30)),
        ("decimal(18,4)", 1024, _unscaled(18, rng, 60), _unscaled(18, rng, 30)),
        ("decimal(38,10)", 1024, _unscaled(38, rng, 60), _unscaled(38, rng, 30)),
        ("long", 65536, longs(1500), longs(60)),
    ]


def generate(spark: Any) -> dict[str, list[dict[str, Any]]]:
    oracle = ParquetJava(spark)
    rng = random.Random(SEED)
    hashes = [
        {"type": t, "value": v, "hash": f"{oracle.hash(t, v):016x}"} for t, v in hash_cases(rng)
    ]
    filters = []
    for spark_type, num_bytes, values, candidates in filter_cases(rng):
        bloom = oracle.new_filter(num_bytes)
        oracle.insert(bloom, [oracle.hash(spark_type, v) for v in values])
        inserted = {json.dumps(v, sort_keys=True) for v in values}
        absent = [
            v
            for v in candidates
            if json.dumps(v, sort_keys=True) not in inserted and not oracle.find(bloom, oracle.hash(spark_type, v))
        ]
        filters.append(
            {
                "type": spark_type,
                "num_bytes": num_bytes,
                "values": values,
                "absent": absent,
                "filter_hex": oracle.serialize(bloom).hex(),
            }
        )
    return {"hashes": hashes, "filters": filters}


def write(vectors: dict[str, list[dict[str, Any]]], path: Path = OUTPUT) -> None:
    """One entry per line, so a diff of the file shows which vectors changed."""
    lines = ["{"]
    for key in ("hashes", "filters"):
        lines.append(f'"{key}": [')
        entries = [json.dumps(e, ensure_ascii=False) for e in vectors[key]]
        lines.append(",\n".join(entries))
        lines.append("]," if key == "hashes" else "]")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("hsbloom-sbbf-vectors")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    try:
        vectors = generate(spark)
    finally:
        spark.stop()
    write(vectors)
    print(f"wrote {len(vectors['hashes'])} hashes and {len(vectors['filters'])} filters to {OUTPUT}")


if __name__ == "__main__":
    main()
