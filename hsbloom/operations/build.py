"""The distributed build of one index version (the work itself runs in the JVM).

Hashing every value in a Python worker costs several times the scan itself
(Arrow transfer alone is about 3x), so the build is one Scala job,
`hsbloom.build.IndexBuild`, that scans the indexed columns once and writes the
file-level and global index tables. This module only hands it the request, with the scan to run: exactly the
listed files of the DataFrame's relation, every row stored in them
(`hsbloom.build.BuildInput`; for Delta that includes rows a deletion vector hides,
so a file's filter stays valid at every table version: docs/refresh.md).
"""

from __future__ import annotations

import json
from typing import Any, Protocol, Sequence

from hsbloom import jar


class ListedFile(Protocol):
    """A source file as the relation's file index lists it."""

    file_id: int
    path: str
    size: int
    mtime: int


def build_index_data(
    spark: Any,
    df: Any,
    files: Sequence[ListedFile],
    columns: Sequence[str],
    expected_num_items: int | None,
    fpp: float,
    global_filter: bool,
    data_path: str,
    description: str,
    max_buffered_hashes: int | None = None,
    global_filter_blocks: dict[str, int] | None = None,
    global_held_hashes: int | None = None,
    granularity: str = "file",
    shared_fpp: float | None = None,
) -> dict[str, Any]:
    """Build and write `<data_path>/files` and (with `global_filter`) `<data_path>/global`.

    `df` is a plain (possibly column-projected) scan of exactly the listed
    files; `expected_num_items`, when given, fixes every file filter's size
    (distinct values per file), otherwise each file's filter is fitted to its
    data. `max_buffered_hashes` (a tuning knob, tests use it) caps the hashes
    one file's column buffers before its filter is built at a fixed large size
    and folded afterwards. `global_filter_blocks` fixes a column's global
    filter size (32-byte blocks) so a refresh can OR it with the previous
    version's filter. `global_held_hashes` (a tuning knob, tests use it) caps
    the hashes a global-filter task holds before its filter's size is known;
    past it the task builds at the largest size and folds down. `granularity` "row_group" also writes
    `<data_path>/zones`, a filter per row group and column (docs/design/zones.md). `fpp` is the file filters'
    false-positive probability, `shared_fpp` (default: `fpp`) the global filter's and the zones'. Returns the
    summary: number of files and rows, index bytes, the two fpps, and per column rows, nulls, distinct estimate and
    filter bytes.
    """
    request = {
        "columns": list(columns),
        "files": [{"file_id": f.file_id, "path": f.path, "size": f.size, "mtime": f.mtime} for f in files],
        "expected_num_items": expected_num_items,
        "fpp": fpp,
        "shared_fpp": fpp if shared_fpp is None else shared_fpp,
        "global_filter": global_filter,
        "data_path": data_path,
        "description": description,
        "granularity": granularity,
    }
    if max_buffered_hashes is not None:
        request["max_buffered_hashes"] = max_buffered_hashes
    if global_held_hashes is not None:
        request["global_held_hashes"] = global_held_hashes
    if global_filter_blocks:
        request["global_filter_blocks"] = global_filter_blocks
    scan = jar.jar_class(spark, "build_input").of(jar.java_dataframe(df), json.dumps([f.path for f in files]))
    summary = json.loads(jar.jar_class(spark, "index_build").run(scan, json.dumps(request)))
    summary["file_fpp"], summary["shared_fpp"] = request["fpp"], request["shared_fpp"]
    return summary
