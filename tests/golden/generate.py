"""Regenerate tests/golden: small index directories written by the jar, and the answers both languages expect.

    .venv/bin/python tests/golden/generate.py [CASE ...]    (all cases, or only those named)

Each case directory holds one index directory (named as the index, since checksums are seeded by that name)
and `answers.json`: the files the index records (path, size, mtime), and per predicate the hashes the jar
computes for its literal (`hsbloom_hash`) and the files that hold matching rows, kept only where the Spark
rule reads exactly those files (no false positive), so the expectation is the jar's answer. Recorded paths are
absolute paths of a temporary directory: the answers are by recorded path, and staleness (which needs the
source files) is tested on freshly built indexes (tests/test_readers.py). tests/test_golden_indexes.py and
GoldenIndexSuite read them; a format change fails both.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

TYPES = "l bigint, i int, s string, d double, day date, dec decimal(12,2), b binary"
ROWS = """
SELECT id AS l, CAST(id * 3 AS INT) AS i,
       CASE WHEN id % 5 = 0 THEN NULL ELSE concat('ключ-', id, '-日本') END AS s,
       CAST(id AS DOUBLE) / 4 AS d, date_add(DATE '2024-02-01', CAST(id AS INT)) AS day,
       CAST(id AS DECIMAL(12,2)) / 8 AS dec, CAST(concat('b', id) AS BINARY) AS b, CAST(id % 2 AS INT) AS p
FROM range(0, 48, 1, 4)
"""
# (kind, column, SQL literal, JSON value) per case.
CASES = [
    ("eq", "l", "7", {"type": "bigint", "value": 7}),
    ("eq", "l", "1000", {"type": "bigint", "value": 1000}),
    ("eq", "i", "30", {"type": "int", "value": 30}),
    ("eq", "s", "'ключ-13-日本'", {"type": "string", "value": "ключ-13-日本"}),
    ("eq", "s", "'absent'", {"type": "string", "value": "absent"}),
    ("eq", "d", "CAST(2.25 AS DOUBLE)", {"type": "double", "value": "2.25"}),
    ("eq", "day", "DATE '2024-02-20'", {"type": "date", "value": "2024-02-20"}),
    ("eq", "dec", "CAST(4.25 AS DECIMAL(12,2))", {"type": "decimal(12,2)", "value": "4.25"}),
    ("eq", "b", "X'623431'", {"type": "binary", "value": "623431"}),
    ("is_null", "s", None, None),
    # Substring conditions, on an index's substring filter of `s` (kind, column, SQL literal, the string).
    ("contains", "s", "'-13-日'", {"type": "string", "value": "-13-日"}),
    ("contains", "s", "'ключ-2'", {"type": "string", "value": "ключ-2"}),
    ("like", "s", "'ключ-1_-日本'", {"type": "string", "value": "ключ-1_-日本"}),
    ("contains", "s", "'-99-'", {"type": "string", "value": "-99-"}),
]
SUBSTRING_KINDS = ("contains", "like")


def main(only: set) -> None:
    from pyspark.sql import SparkSession

    import hsbloom
    from hsbloom.explain import files_read

    work = Path(tempfile.mkdtemp(prefix="hsbloom-golden-"))
    builder = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2").config("spark.databricks.delta.snapshotPartitions", "2").config("spark.sql.warehouse.dir", str(work / "wh"))
               .config("spark.hsbloom.system.path", str(work / "indexes")))
    spark = hsbloom.configure(builder, delta=True).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    hs = hsbloom.Hyperspace(spark)
    rows = spark.sql(ROWS)
    kinds = {
        "parquet_types": ("parquet", rows.drop("p"), {}, hsbloom.BFIndexConfig("golden_types", ["l", "i", "s", "d", "day", "dec", "b"])),
        "parquet_partitioned_zones": ("parquet", rows, {"partitionBy": "p"},
                                      hsbloom.BFIndexConfig("golden_zones", ["l", "s"], granularity="row_group", global_filter=False)),
        "delta": ("delta", rows.drop("p"), {}, hsbloom.BFIndexConfig("golden_delta", ["l", "s", "day"])),
        "parquet_substring": ("parquet", rows.drop("p"), {},
                              hsbloom.BFIndexConfig("golden_substring", ["l"], substring_columns=["s"], ngram_size=3)),
    }
    for case, (fmt, df, options, config) in kinds.items():
        if only and case not in only:
            continue
        table = str(work / case)
        writer = df.write.format(fmt)
        if "partitionBy" in options:
            writer = writer.partitionBy(options["partitionBy"])
        writer.save(table)
        source = spark.read.format(fmt).load(table)
        hs.create_index(source, config)
        write_case(spark, hs, files_read, case, source, work / "indexes" / config.index_name, config)
    if only and "parquet_types" not in only:
        spark.stop()
        shutil.rmtree(work)
        return
    damaged = HERE / "damaged"
    shutil.rmtree(damaged, ignore_errors=True)
    shutil.copytree(HERE / "parquet_types", damaged)
    answers = json.loads((damaged / "answers.json").read_text())
    for blocks in (damaged / answers["index"]).glob("v__=*/blocks/*.blocks"):
        blocks.write_bytes(bytes(len(blocks.read_bytes())))  # every stripe fails its checksum
    everything = sorted(answers["files"])
    for c in answers["cases"]:
        if c["kind"] == "eq" and c["column"] in answers["indexed_columns"]:
            c["kept"] = everything  # a filter whose stripe fails keeps its file
    answers["damaged"] = True
    (damaged / "answers.json").write_text(json.dumps(answers, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    spark.stop()
    shutil.rmtree(work)


def write_case(spark, hs, files_read, case: str, source, index_dir: Path, config) -> None:
    import hsbloom

    out = HERE / case
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(index_dir, out / index_dir.name, ignore=shutil.ignore_patterns(".*", "_SUCCESS", "global"))
    held = spark.read.parquet(str(index_dir / "v__=0" / "files")).select("file_path", "file_size", "file_mtime").distinct()
    files = {r.file_path: [r.file_size, r.file_mtime] for r in held.collect()}
    cases = []
    columns = config.indexed_columns
    for kind, column, literal, value in CASES:
        if (kind == "eq" and column not in columns) or (kind in SUBSTRING_KINDS) != (column in config.substring_columns):
            continue
        where = {"eq": f"{column} = {literal}", "is_null": f"{column} IS NULL", "contains": f"contains({column}, {literal})",
                 "like": f"{column} LIKE {literal}"}[kind]
        hsbloom.disable(spark)
        holding = {_local(r[0]) for r in source.where(where).selectExpr("input_file_name()").distinct().collect()}
        kept = sorted(p for p in files if _local(p) in holding)
        hsbloom.enable(spark)
        if files_read(source.where(where)) != len(kept) or len(holding) != len(kept):
            print(f"{case}: {where}: the rule reads a false positive; left out")
            continue
        if value is not None:  # hashed as the column's own type, as the rule hashes it
            value = dict(value, type=source.schema[column].dataType.simpleString())
        typed = f"CAST({literal} AS {value['type']})" if value else None
        hashes = [] if kind == "is_null" else [spark.sql(f"SELECT hsbloom_hash({typed})").head()[0]] if kind == "eq" \
            else _gram_hashes(spark, value["value"], config.ngram_size)
        cases.append({"kind": kind, "column": column, "value": value, "hashes": hashes, "kept": kept})
    hsbloom.disable(spark)
    answers = {"index": index_dir.name, "indexed_columns": list(columns), "files": files, "cases": cases}
    if config.substring_columns:
        answers |= {"substring_columns": list(config.substring_columns), "ngram_size": config.ngram_size}
    (out / "answers.json").write_text(json.dumps(answers, indent=1, ensure_ascii=False, sort_keys=True) + "\n")


def _gram_hashes(spark, text: str, n: int) -> list:
    """The jar's hashes (`hsbloom_hash` of each n bytes as a binary value, as Parquet hashes a BYTE_ARRAY) of the
    n-grams of the runs between `text`'s LIKE wildcards (a contains literal has none), in order."""
    runs = [r.encode("utf-8") for r in text.replace("_", "%").split("%") if r]
    grams = [run[i:i + n] for run in runs for i in range(len(run) - n + 1)]
    return [spark.sql(f"SELECT hsbloom_hash(X'{g.hex()}')").head()[0] for g in grams]


def _local(path: str) -> str:
    """A local file's path however it is spelled (file:/x, file:///x: the rule's listing and input_file_name())."""
    return "/" + path[len("file:"):].lstrip("/") if path.startswith("file:") else path


if __name__ == "__main__":
    main(set(sys.argv[1:]))
