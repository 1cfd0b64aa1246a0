"""hsbloom lookups of this tree alone, for comparing two versions of hsbloom side by side.

    python bench/versions.py SYSTEM_PATH [--rounds 7]

Runs `=` and IN of 10 on both keys of the lookup table (bench/lookup.py's
20,000,000 rows in 200 files) with hsbloom on, --rounds times each after two
warm-up rounds, and prints each lookup's median and their sum. The index is
created under SYSTEM_PATH by the hsbloom that runs, once.

To compare two versions, check each out in its own tree with its own
`./dev.sh build`, give each its own SYSTEM_PATH (each builds the index in its
own layout), and run them alternately, several times each, on a quiet
machine: one process against another, so neither is favoured by a warm JVM.
(An hsbloom from before `hsbloom.settings` needs the system path's key
spelled out in its copy of this script.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import hsbloom
from hsbloom import settings

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "keys_20000000_200")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("system_path")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if not os.path.exists(os.path.join(TABLE, "_SUCCESS")):
        sys.exit(f"{TABLE} is missing: run ./dev.sh bench lookup once to generate it")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "6g")
               .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "8")
               .config(settings.SYSTEM_PATH, args.system_path))
    spark = hsbloom.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if not os.path.exists(os.path.join(args.system_path, "versions_lookup")):
        hsbloom.Hyperspace(spark).create_index(spark.read.parquet(TABLE), hsbloom.BFIndexConfig(
            "versions_lookup", ["long_key", "uuid_key"], fpp=0.01, global_filter=False))
    sample = spark.read.parquet(TABLE).select("long_key", "uuid_key").sample(fraction=1e-5, seed=7).limit(10).collect()
    longs, uuids = [r[0] for r in sample], [r[1] for r in sample]
    cases = {"long =": F.col("long_key") == longs[0], "long IN 10": F.col("long_key").isin(longs),
             "uuid =": F.col("uuid_key") == uuids[0], "uuid IN 10": F.col("uuid_key").isin(uuids)}
    hsbloom.enable(spark)
    times: dict[str, list[float]] = {k: [] for k in cases}
    for round_ in range(args.rounds + 2):
        for name, condition in cases.items():
            start = time.perf_counter()
            spark.read.parquet(TABLE).where(condition).agg(F.sum("payload")).collect()
            if round_ >= 2:  # two warm-up rounds
                times[name].append(time.perf_counter() - start)
    medians = {k: statistics.median(v) for k, v in times.items()}
    print(f"hsbloom {hsbloom.__version__} from {os.path.dirname(hsbloom.__file__)}: " +
          "  ".join(f"{k} {v * 1000:.0f} ms" for k, v in medians.items()) +
          f"  sum {sum(medians.values()) * 1000:.0f} ms", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
