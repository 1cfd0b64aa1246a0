"""A build of one data directory without an operation around it, for tests: a JSON request sent through py4j to
the test kit's `hsbloom.testkit.JsonBuild.run` (jvm/testkit, not in the shipped jar), which makes the jar's
`BuildRequest` of it and builds the request's files of the DataFrame's relation."""

from __future__ import annotations

import json
from typing import Any, Protocol, Sequence

from py4j.java_gateway import JavaClass

from hsbloom import jar
import jvm_classes


class ListedFile(Protocol):
    """A source file as a file index lists it (tests' own listings, or `source_support.Described.files`)."""

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
    """Builds `files` of `df` into `<data_path>/files`, `/global` (with `global_filter`) and `/zones` (granularity
    "row_group"); returns the build's summary as the jar writes it (`BuildSummary.toJson`: num_files, num_rows,
    index_bytes, and per column num_rows, num_nulls, ndv, file_filter_bytes, global_filter_bytes)."""
    request: dict[str, Any] = {
        "columns": list(columns),
        "files": [{"file_id": f.file_id, "path": f.path, "size": f.size, "mtime": f.mtime} for f in files],
        "expected_num_items": expected_num_items,
        "fpp": fpp,
        "shared_fpp": shared_fpp,
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
    json_build = jvm_classes.jvm_class(spark, "json_build")
    assert isinstance(json_build, JavaClass), (
        "hsbloom.testkit.JsonBuild is not on the session's classpath: build jvm/target/hsbloom-testkit.jar with "
        "./dev.sh sbt testKit/package (./dev.sh test builds it)"
    )
    return json.loads(json_build.run(jar.java_dataframe(df), json.dumps(request)))
