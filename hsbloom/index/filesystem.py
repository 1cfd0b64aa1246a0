"""Hadoop FileSystem operations hsbloom needs on index directories, called through the JVM.

Index data and logs may live on HDFS, S3 or ABFS, so nothing here touches
local paths from Python: every call goes to the Hadoop FileSystem of the path,
configured by the session's Hadoop configuration.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from py4j.protocol import Py4JJavaError

from hsbloom import jar
from hsbloom.errors import IndexPermissionsError
from hsbloom.index.layout import IndexLayout


class HadoopFileSystem:
    """Directory-level operations (exists, list, delete, size, permission) on Hadoop paths."""

    def __init__(self, spark: Any) -> None:
        self._spark = spark
        self.hadoop_conf = jar.hadoop_conf(spark)

    def _fs_and_path(self, path: str) -> tuple[Any, Any]:
        jpath = jar.hadoop_path(self._spark, path)
        fs = jpath.getFileSystem(self.hadoop_conf)
        return fs, fs.makeQualified(jpath)

    def qualify(self, path: str) -> str:
        """`path` with its scheme and authority, e.g. '/tmp/x' -> 'file:/tmp/x'."""
        return self._fs_and_path(path)[1].toString()

    def exists(self, path: str) -> bool:
        fs, jpath = self._fs_and_path(path)
        return bool(fs.exists(jpath))

    def list_directories(self, path: str) -> list[str]:
        """Names of the sub-directories of `path`; empty when `path` does not exist."""
        fs, jpath = self._fs_and_path(path)
        if not fs.exists(jpath):
            return []
        return sorted(status.getPath().getName() for status in fs.listStatus(jpath) if status.isDirectory())

    def delete_data_version(self, layout: IndexLayout, version: int, child: str | None = None) -> None:
        """Remove data version `version` of the index (or only `child`, a directory hsbloom writes inside it);
        nothing happens when it is absent. The jar checks the version, builds the path from it and removes a link
        as a link (hsbloom.index.IndexDirectories): the only way hsbloom deletes under the system path."""
        directories = jar.jar_class(self._spark, "index_directories")
        if child is None:
            directories.deleteVersion(layout.index_path, version, self.hadoop_conf)
        else:
            directories.deleteInVersion(layout.index_path, version, child, self.hadoop_conf)

    def size(self, path: str) -> int:
        """Total bytes of the files under `path` (0 when absent)."""
        fs, jpath = self._fs_and_path(path)
        if not fs.exists(jpath):
            return 0
        return int(fs.getContentSummary(jpath).getLength())

    def give_source_permission(self, index_path: str, source_roots: Sequence[str]) -> None:
        """Give the index directory its source's permission, creating it closed if absent (the jar's
        IndexPermissions: read access to an index is read access to membership of the indexed values).
        IndexPermissionsError, naming the problem and the fix, when it cannot."""
        try:
            jar.jar_class(self._spark, "index_permissions").apply(
                jar.java_session(self._spark), index_path, json.dumps(list(source_roots))
            )
        except Py4JJavaError as exc:
            raise IndexPermissionsError(str(exc.java_exception.getMessage())) from exc
