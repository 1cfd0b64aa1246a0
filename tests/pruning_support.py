"""Helpers for the file-pruning tests: creating indexes and measuring what a scan read."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Sequence

from hsbloom.build import build_index_data


@dataclass(frozen=True)
class Listed:
    file_id: int
    path: str
    size: int
    mtime: int


def _hadoop(spark: Any, path: str):
    jvm = spark._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    fs = p.getFileSystem(spark._jsc.hadoopConfiguration())
    return jvm, fs, fs.makeQualified(p)


def list_data_files(spark: Any, directory: str) -> list[Listed]:
    """The data files under `directory` (recursively, skipping hidden names), as a file index lists them."""
    _, fs, root = _hadoop(spark, directory)
    found = []
    pending = [root]
    while pending:
        for status in fs.listStatus(pending.pop()):
            name = status.getPath().getName()
            if name.startswith((".", "_")) and "=" not in name:
                continue
            if status.isDirectory():
                pending.append(status.getPath())
            else:
                found.append(status)
    found.sort(key=lambda s: s.getPath().toString())
    return [Listed(i, s.getPath().toString(), s.getLen(), s.getModificationTime()) for i, s in enumerate(found)]


def snapshot_files(spark: Any, df: Any) -> list[Listed]:
    """The files a DataFrame reads (Delta: its snapshot's), with their current fingerprints."""
    found = []
    for uri in sorted(df.inputFiles()):
        _, fs, path = _hadoop(spark, uri)
        status = fs.getFileStatus(path)
        found.append(status)
    return [Listed(i, s.getPath().toString(), s.getLen(), s.getModificationTime()) for i, s in enumerate(found)]


def create_index(
    spark: Any, directory: str, name: str, columns: Sequence[str], fpp: float = 0.01, fmt: str = "parquet"
) -> str:
    """An ACTIVE index over the directory `directory`: a log entry and its built data. Returns the data path."""
    jvm, fs, root = _hadoop(spark, directory)
    system = spark.conf.get("spark.hsbloom.system.path")
    _, sfs, system_root = _hadoop(spark, system)
    index_path = f"{system_root.toString()}/{name}"
    data_path = f"{index_path}/v__=0"
    df = spark.read.format(fmt).load(directory)
    files = snapshot_files(spark, df) if fmt == "delta" else list_data_files(spark, directory)
    summary = build_index_data(
        spark, df, files, columns, expected_num_items=None, fpp=fpp, global_filter=False,
        data_path=data_path, description=f"test index {name}",
    )
    schema = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    entry = {
        "log_format": 1, "id": 0, "state": "ACTIVE", "operation": "create",
        "timestamp_ms": int(time.time() * 1000), "hsbloom_version": "test",
        "writer": {"host": "test", "pid": 0, "operation_id": "test"},
        "config": {"index_name": name, "indexed_columns": list(columns), "expected_num_items": None,
                   "fpp": fpp, "global_filter": False},
        "source": {"format": fmt, "root_paths": [root.toString()], "options": {}, "table": None,
                   "delta_version": None, "schema": schema, "partition_columns": [],
                   "files": [{"id": f.file_id, "path": f.path, "size": f.size, "mtime": f.mtime} for f in files]},
        "data_version": 0, "data_path": data_path, "summary": summary, "message": None,
    }
    out = sfs.create(jvm.org.apache.hadoop.fs.Path(f"{index_path}/_hsbloom_log/{0:020d}.json"), False)
    out.write(bytearray(json.dumps(entry).encode("utf-8")))
    out.close()
    spark._jvm.hsbloom.IndexCatalog.invalidate()
    return data_path


def files_read(df: Any) -> int:
    """Runs `df` and returns its file scans' own "number of files read" metric, summed.

    It runs a new DataFrame over the same plan: Spark resets a plan's metrics
    when the same DataFrame runs again, and the file count is set only once.
    """
    fresh = df.select("*")
    fresh.collect()
    return int(df.sparkSession._jvm.hsbloom.PruningExplain.filesRead(fresh._jdf))
