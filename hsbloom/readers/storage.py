"""Where an index and its source live: a pyarrow filesystem and a path in it, and the key of a file's path.

Paths are resolved as pyarrow does (local paths, `file:`, `s3://`, `gs://`, `hdfs://`, `abfs://` ...), or in
the filesystem the caller passes (a pyarrow FileSystem, or any fsspec one, wrapped by pyarrow's
FSSpecHandler). File keys follow the jar's `FileKey.scala`: scheme, authority, and the path.
"""

from __future__ import annotations

import os
import re
from typing import Any, Optional

import pyarrow.fs as pafs

from hsbloom.errors import InvalidArgumentError

# A path with no empty, "." or ".." segment, no backslash and no trailing slash (normalizing leaves it as it is).
_PLAIN = re.compile(r"(?:/(?!\.{1,2}(?:/|$))[^/\\]+)+$")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(.*)$", re.S)


def resolve(path: str, filesystem: Any = None) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path in it) for a path or URI; `filesystem`: a pyarrow or fsspec filesystem to use."""
    if not isinstance(path, str) or not path:
        raise InvalidArgumentError(f"an index or table path must be a non-empty string, got {path!r}")
    if filesystem is None:
        if path.startswith("file:"):
            return pafs.LocalFileSystem(), local_path(path)
        if _SCHEME.match(path) is None or len(path.split(":", 1)[0]) == 1:  # a local path (or a drive letter)
            return pafs.LocalFileSystem(), os.path.abspath(path)
        try:
            return pafs.FileSystem.from_uri(path)
        except (ValueError, TypeError) as exc:
            raise InvalidArgumentError(f"cannot open {path!r}: {exc}; pass filesystem= (pyarrow or fsspec)") from exc
    if not isinstance(filesystem, pafs.FileSystem):
        filesystem = pafs.PyFileSystem(pafs.FSSpecHandler(filesystem))
    return filesystem, path


def local_path(uri: str) -> str:
    """The local path of `file:/x`, `file:///x` or `file://localhost/x` (Hadoop and Python spellings)."""
    rest = uri[len("file:") :]
    if rest.startswith("//"):
        authority, _, tail = rest[2:].partition("/")
        if authority not in ("", "localhost"):
            raise InvalidArgumentError(f"{uri!r} names a file on host {authority!r}; only local file: URIs are read")
        rest = "/" + tail
    return rest


def file_key(path: str) -> Optional[str]:
    """The key of a path (`scheme://authority/path`, the path with `//` collapsed and no trailing `/`), or None
    for a spelling this reader does not key (such a file is never matched to the index, so it is read)."""
    if path.startswith("file:/") and path[6:7] != "/" and _PLAIN.match(path, 5):
        return "file://" + path[5:]  # the spelling the jar stores for local files, read off the string
    match = _SCHEME.match(path)
    if match is None:
        if not path.startswith("/"):
            return None
        scheme, rest = "file", path
    else:
        scheme, rest = match.group(1).lower(), match.group(2)
    authority = ""
    if rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        if not slash:
            return None
        rest = "/" + tail
    if not rest.startswith("/") or "\\" in rest:
        return None
    segments = [s for s in rest.split("/") if s]
    if any(s in (".", "..") for s in segments):
        return None
    return f"{scheme}://{authority}/" + "/".join(segments)
