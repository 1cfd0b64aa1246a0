"""SBBF throughput: hsbloom in Python (numpy) vs parquet-java and hsbloom's Scala Sbbf in the JVM.

    ./dev.sh bench sbbf [--n 10000000] [--repeats 5]

Hash+insert and check of N int64 values and N uuid-like strings (36 bytes) into a 4 MiB filter,
one core each, the same values on every side (generated with splitmix64 here in numpy and in
hsbloom.bench.SbbfBench on the JVM). Prints throughput and the ratios, and checks that all three
built byte-identical filters and found the same number of (false) positives. docs/design/sbbf.md keeps
the figures.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import zlib

import numpy as np
import pyarrow as pa
from common import bench_class, session

from hsbloom.readers.sbbf import Sbbf  # the Python SBBF (the reader's and the tests' check of the jar)

NUM_BYTES = 4 * 1024 * 1024
IMPLEMENTATIONS = ("hsbloom Python (numpy)", "parquet-java", "hsbloom Scala")
SEED = 42
UUID_LENGTH = 36
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
# The benchmark classes (jvm/bench) are not in the shipped jar; ./dev.sh bench builds this one.


def splitmix64(seed: int, index: np.ndarray) -> np.ndarray:
    """splitmix64(seed, i) for an array of i (SbbfBench.splitmix64 on the JVM)."""
    z = np.uint64(seed) + (index.astype(np.uint64) + np.uint64(1)) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def longs(n: int, seed: int) -> pa.Array:
    return pa.array(splitmix64(seed, np.arange(n)).view(np.int64))


def uuids(n: int, seed: int) -> pa.Array:
    """n uuid-like strings (8-4-4-4-12 lowercase hex of two splitmix64 values), built vectorized."""
    index = np.arange(n, dtype=np.uint64)
    words = np.stack([splitmix64(seed, 2 * index), splitmix64(seed, 2 * index + 1)], axis=1)
    shifts = np.arange(60, -4, -4, dtype=np.uint64)
    nibbles = ((words[:, :, None] >> shifts) & np.uint64(0xF)).reshape(n, 32).astype(np.uint8)
    hexdigits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)[nibbles]
    text = np.empty((n, UUID_LENGTH), dtype=np.uint8)
    text[:, [8, 13, 18, 23]] = ord("-")
    text[:, [i for i in range(UUID_LENGTH) if i not in (8, 13, 18, 23)]] = hexdigits
    offsets = np.arange(n + 1, dtype=np.int32) * UUID_LENGTH
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(text.tobytes())])


def time_python(values: pa.Array, probes: pa.Array) -> tuple[float, float, int, int]:
    """One build and probe: (insert seconds, check seconds, positives, crc32 of the filter)."""
    f = Sbbf(NUM_BYTES)
    t0 = time.perf_counter()
    f.insert(values)
    t1 = time.perf_counter()
    positives = int(f.check(probes).sum())
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, positives, zlib.crc32(f.to_bytes())


def jvm_result(raw) -> tuple[float, float, int, int]:
    insert_ns, check_ns, positives, crc = (int(raw[i]) for i in range(4))
    return insert_ns / 1e9, check_ns / 1e9, positives, crc


def best(runs: list[tuple[float, float, int, int]]) -> tuple[float, float, int, int]:
    """Fastest insert and fastest check over the runs (their positives and filter agree)."""
    assert len({r[2:] for r in runs}) == 1, "runs of one implementation disagree"
    return min(r[0] for r in runs), min(r[1] for r in runs), runs[0][2], runs[0][3]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000, help="values per workload (default 10M)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per implementation; the best is kept")
    args = parser.parse_args()
    n, repeats = args.n, args.repeats

    spark = session("hsbloom-bench-sbbf", driver_memory="4g", bench_jar=True, cores=1)
    bench = bench_class(spark, "sbbf_bench")
    results: dict[tuple[str, str], tuple[float, float, int, int]] = {}
    try:
        for workload, make, jvm_suffix in (("int64", longs, "Longs"), ("uuid string", uuids, "Strings")):
            values, probes = make(n, SEED), make(n, SEED + 1)
            runs: dict[str, list] = {name: [] for name in IMPLEMENTATIONS}
            # Interleaved, so that the load of a shared machine weighs on every implementation alike.
            for repeat in range(repeats):
                runs["hsbloom Python (numpy)"].append(time_python(values, probes))
                for name, method in (("parquet-java", "parquetJava"), ("hsbloom Scala", "hsbloom")):
                    raw = getattr(bench, method + jvm_suffix)(n, NUM_BYTES, SEED, repeat == 0)
                    runs[name].append(jvm_result(raw))
            for name in IMPLEMENTATIONS:
                results[(workload, name)] = best(runs[name])
            del values, probes
    finally:
        spark.stop()

    print(f"SBBF benchmark: {n:,} values per workload, {NUM_BYTES // 1024 // 1024} MiB filter, one core, best of {repeats}")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; Python {platform.python_version()}, numpy {np.__version__}")
    print()
    header = f"{'workload':<12} {'implementation':<24} {'hash+insert/s':>14} {'check/s':>12} {'insert vs pj':>13} {'check vs pj':>12}"
    print(header)
    print("-" * len(header))
    for workload in ("int64", "uuid string"):
        pj_insert, pj_check, pj_pos, pj_crc = results[(workload, "parquet-java")]
        for name in IMPLEMENTATIONS:
            insert, check, positives, crc = results[(workload, name)]
            print(
                f"{workload:<12} {name:<24} {n / insert / 1e6:>12.1f} M {n / check / 1e6:>10.1f} M "
                f"{pj_insert / insert:>12.2f}x {pj_check / check:>11.2f}x"
                + ("" if (positives, crc) == (pj_pos, pj_crc) else "   <-- DIFFERENT FILTER")
            )
        same = all(results[(workload, k)][2:] == (pj_pos, pj_crc) for k in ("hsbloom Python (numpy)", "hsbloom Scala"))
        print(f"{'':<12} identical filters and {pj_pos:,} positives of {n:,} absent probes: {'yes' if same else 'NO'}")
    print("\n(ratios > 1 mean faster than parquet-java; each side hashes the values itself)")


if __name__ == "__main__":
    main()
