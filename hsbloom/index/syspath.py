"""Checks that the system path can hold indexes, made before an operation writes anything.

Each failure is a SystemPathError naming the path, what is wrong and the fix:
an unknown scheme, a path that is (or lies under) a regular file, a directory
this session cannot write (found by writing and removing a probe file, since
permission bits say nothing for root or for object stores), and a system path
inside the directory of the source being indexed, or containing it: index
directories inside a table would become part of it (Spark then refuses to read
the table, for example with CONFLICTING_DIRECTORY_STRUCTURES), and an index
must never break the data it indexes.
"""

from __future__ import annotations

import uuid
from typing import Any, Iterable

from hsbloom import jar
from hsbloom.errors import SystemPathError, first_line
from hsbloom.index.layout import SYSTEM_PATH_CONF, system_path

_FIX = f"set {SYSTEM_PATH_CONF} to a directory this session can create and write"


def qualified_system_path(spark: Any, fs: Any) -> str:
    """The session's system path with scheme and authority; SystemPathError if its file system is unknown."""
    configured = system_path(spark)
    try:
        return fs.qualify(configured)
    except Exception as exc:  # py4j: UnsupportedFileSystemException, IllegalArgumentException, ...
        raise SystemPathError(
            f"the system path {configured!r} cannot be used: {first_line(exc, 300)}; {_FIX} "
            "(a local path, or a URI of a file system Hadoop is configured for: hdfs://, s3a://, abfss://)"
        ) from exc


def check_writable(spark: Any, root: str) -> None:
    """Create `root` if needed and write and remove a hidden probe file in it; SystemPathError if impossible."""
    conf = jar.hadoop_conf(spark)
    path = jar.hadoop_path(spark, root)
    try:
        fs = path.getFileSystem(conf)
        ancestor = path
        while ancestor is not None and not fs.exists(ancestor):
            ancestor = ancestor.getParent()
        if ancestor is not None and not fs.getFileStatus(ancestor).isDirectory():
            where = "is" if ancestor.equals(path) else f"lies under {ancestor.toString()!r}, which is"
            raise SystemPathError(f"the system path {root!r} {where} a regular file, not a directory; {_FIX}")
        if not fs.mkdirs(path):
            raise SystemPathError(f"the system path {root!r} could not be created; {_FIX}")
        probe = jar.hadoop_path(spark, path, f".hsbloom-probe-{uuid.uuid4().hex}")
        fs.create(probe, False).close()
        fs.delete(probe, False)
    except SystemPathError:
        raise
    except Exception as exc:
        raise SystemPathError(f"the system path {root!r} is not writable: {first_line(exc, 300)}; {_FIX}") from exc


def check_apart_from_source(root: str, source_roots: Iterable[str], qualify: Any) -> None:
    """SystemPathError if the system path `root` is inside one of `source_roots` or contains one."""
    mine = _normalized(root)
    for source_root in source_roots:
        theirs = _normalized(qualify(source_root))
        if mine == theirs or mine.startswith(theirs + "/"):
            raise SystemPathError(
                f"the system path {root!r} is inside the source's directory {source_root!r}: index files there "
                f"would become part of the table and break reading it; {_FIX} outside the table"
            )
        if theirs.startswith(mine + "/"):
            raise SystemPathError(
                f"the system path {root!r} contains the source's directory {source_root!r}: an index named like "
                f"a directory on the way to the table would be written into it; {_FIX} apart from the table"
            )


def _normalized(path: str) -> str:
    return path.rstrip("/") or "/"
