"""Index build time beside a plain scan of the same columns and a Parquet-native rewrite.

    ./dev.sh bench build [--rows N] [--files N]

(a) plain scan: df.select(cols).write.format("noop"): the floor for any build
    that reads the data once;
(b) rewrite: the whole table rewritten with Parquet-native Bloom filters on
    the same columns, what a user without hsbloom would do;
(c) hsbloom: the index build (file-level and global filters).
Goals: (c) <= 1.5x (a), and (b) >= 5x (c).
"""

from __future__ import annotations

import argparse
import shutil
import uuid

from common import DATA, key_table, session, timed

from hsbloom.build import build_index_data

COLUMNS = ["long_key", "uuid_key"]


def listing(spark, directory):
    """(file_id, path, size, mtime) of the table's data files, through the Hadoop FileSystem."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Listed:
        file_id: int
        path: str
        size: int
        mtime: int

    path = spark._jvm.org.apache.hadoop.fs.Path(directory)
    fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
    statuses = [s for s in fs.listStatus(path) if s.getPath().getName().endswith(".parquet")]
    return [Listed(i, s.getPath().toString(), s.getLen(), s.getModificationTime()) for i, s in enumerate(statuses)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    spark = session("hsbloom-bench-build")
    table = key_table(spark, args.rows, args.files)
    df = spark.read.parquet(table)
    files = listing(spark, table)
    scratch = DATA / "scratch"
    shutil.rmtree(scratch, ignore_errors=True)

    def plain_scan():
        df.select(*COLUMNS).write.format("noop").mode("overwrite").save()

    def hsbloom_build():
        build_index_data(spark, df, files, COLUMNS, None, 0.01, True, str(scratch / uuid.uuid4().hex), "bench build")

    def native_rewrite():
        writer = df.write.mode("overwrite")
        for c in COLUMNS:
            writer = writer.option(f"parquet.bloom.filter.enabled#{c}", "true")
            writer = writer.option(f"parquet.bloom.filter.expected.ndv#{c}", str(args.rows // args.files))
        writer.parquet(str(scratch / "rewrite"))

    plain_scan()  # warm up the JVM and the OS cache
    hsbloom_build()
    scan_s = timed(plain_scan, args.repeat)
    build_s = timed(hsbloom_build, args.repeat)
    rewrite_s = timed(native_rewrite, max(1, args.repeat - 1))
    shutil.rmtree(scratch, ignore_errors=True)

    print(f"\n{args.rows:,} rows in {len(files)} files, key columns {COLUMNS}, local[2]")
    print(f"{'(a) plain scan of the key columns':45s} {scan_s:7.2f} s")
    print(f"{'(b) rewrite with Parquet-native filters':45s} {rewrite_s:7.2f} s")
    print(f"{'(c) hsbloom index build':45s} {build_s:7.2f} s")
    print(f"build / plain scan = {build_s / scan_s:.2f}x (goal <= 1.5x)")
    print(f"rewrite / build    = {rewrite_s / build_s:.2f}x (goal >= 5x)")
    spark.stop()


if __name__ == "__main__":
    main()
