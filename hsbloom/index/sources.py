"""What an index is built from: a DataFrame resolved to its files and their fingerprints.

The plan inspection runs in the jar (jvm/src/main/scala/hsbloom/Sources.scala),
which walks the analyzed plan and lists the relation's files with Spark's own
FileIndex (Delta's for Delta tables). This module turns its answer into typed
values, or into an UnsupportedSourceError naming what was wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from hsbloom import jar
from hsbloom.errors import EncryptedSourceError, UnsupportedSourceError


@dataclass(frozen=True)
class SourceFile:
    """One source file and its fingerprint; `file_id` numbers the files of one index version from 0."""

    file_id: int
    path: str  # the qualified Hadoop Path string, as the relation's FileIndex lists it
    size: int  # bytes
    mtime: int  # modification time, ms since the epoch

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.file_id, "path": self.path, "size": self.size, "mtime": self.mtime}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SourceFile":
        return cls(file_id=int(data["id"]), path=str(data["path"]), size=int(data["size"]), mtime=int(data["mtime"]))


@dataclass(frozen=True)
class FileFingerprint:
    """A source file the index data does not hold yet (a quick refresh records these)."""

    path: str
    size: int
    mtime: int

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "mtime": self.mtime}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "FileFingerprint":
        return cls(path=str(data["path"]), size=int(data["size"]), mtime=int(data["mtime"]))


@dataclass(frozen=True)
class Source:
    """A file source as indexed: format, where, how it is read, and the files at that moment."""

    format: str  # parquet, orc, csv, json or delta
    root_paths: tuple[str, ...]
    options: dict[str, str]  # read options (Spark's redaction applied), without the path
    table: str | None  # catalog table name, when read as a table
    delta_version: int | None  # Delta snapshot version read
    schema: dict[str, str]  # column name -> Spark type, of the DataFrame as given
    partition_columns: tuple[str, ...]
    # The files at that moment, as listed by `resolve_source`. Not written into the log: an entry of data layout 4
    # reads back with none, and the files a version holds are read from its tables (hsbloom.index.listing).
    files: tuple[SourceFile, ...] = field(repr=False)
    # What besides the files decides the values read (schema facts, column mapping, session settings):
    # a scan is covered only when it reads with the same facts (docs/design/read-facts.md).
    read_facts: dict[str, str] = field(default_factory=dict, repr=False)
    user_schema: str | None = None  # the schema given to the reader (JSON), which a refresh reads with too

    def describe(self) -> str:
        """A one-line description for listings, e.g. 'delta default.events @ version 3'."""
        where = self.table or ", ".join(self.root_paths)
        version = f" @ version {self.delta_version}" if self.delta_version is not None else ""
        return f"{self.format} {where}{version}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "root_paths": list(self.root_paths),
            "options": dict(self.options),
            "table": self.table,
            "delta_version": self.delta_version,
            "schema": dict(self.schema),
            "partition_columns": list(self.partition_columns),
            "read_facts": dict(sorted(self.read_facts.items())),
            "user_schema": self.user_schema,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Source":
        return cls(
            format=str(data["format"]),
            root_paths=tuple(data["root_paths"]),
            options=dict(data["options"]),
            table=data.get("table"),
            delta_version=data.get("delta_version"),
            schema=dict(data["schema"]),
            partition_columns=tuple(data.get("partition_columns", ())),
            files=tuple(SourceFile.from_dict(f) for f in data.get("files", ())),  # only entries of older layouts
            read_facts={str(k): str(v) for k, v in data.get("read_facts", {}).items()},
            user_schema=data.get("user_schema"),
        )

    def read_facts_difference(self, current: "Source") -> str | None:
        """Why `current` is not read the way this source was indexed (the first fact that differs), or None."""
        for key in sorted(set(self.read_facts) | set(current.read_facts)):
            before, now = self.read_facts.get(key), current.read_facts.get(key)
            if before != now:
                return f"{key} was {before!r} when the index was built and is {now!r} now"
        return None


def resolve_source(
    spark: Any, df: Any, columns: Sequence[str], list_files: bool = True
) -> tuple[Source, tuple[str, ...]]:
    """The source `df` scans and `columns` as the DataFrame spells them; raises UnsupportedSourceError.

    Without `list_files` the source's `files` are left empty (a Delta refresh
    reads the changes from the table's log instead of listing every file).
    Refused: anything but a plain scan of files with an optional plain column
    selection (joins, aggregates, filters, unions, spark.range, local data,
    streams...), unknown columns and types hsbloom cannot index.
    """
    from pyspark.sql import DataFrame

    if not isinstance(df, DataFrame):
        raise UnsupportedSourceError(f"create_index needs a pyspark DataFrame, got {type(df).__name__}")
    answer = json.loads(jar.jar_class(spark, "sources").describe(jar.java_dataframe(df), json.dumps(list(columns)), list_files))
    if "error" in answer:
        raise UnsupportedSourceError(answer["error"])
    files = tuple(
        SourceFile(file_id=i, path=f["path"], size=int(f["size"]), mtime=int(f["mtime"]))
        for i, f in enumerate(answer["files"])
    )
    source = Source(
        format=answer["format"],
        root_paths=tuple(answer["root_paths"]),
        options=dict(answer["options"]),
        table=answer["table"],
        delta_version=answer["delta_version"],
        schema=dict(answer["schema"]),
        partition_columns=tuple(answer["partition_columns"]),
        files=files,
        read_facts=dict(answer["read_facts"]),
        user_schema=answer["user_schema"],
    )
    return source, tuple(answer["columns"])


class _SizedFile(Protocol):
    """A listed file (SourceFile) or an appended one (FileFingerprint): what the check reads is its path and size."""

    path: str
    size: int


def refuse_encrypted(spark: Any, df: Any, columns: Sequence[str], files: Sequence[_SizedFile], doing: str) -> None:
    """EncryptedSourceError (naming a column or file, and the fix) when `doing` would index `columns` of `df` over
    `files` although an indexed column is encrypted in one of them, or one's footer is (docs/security.md).

    Called before an operation writes anything. It reads the files' footers only when the read is configured with
    a Parquet crypto factory (otherwise nothing encrypted can be read, so a build over it fails in its scan), and
    only then sends the listing to the jar.
    """
    encrypted_columns = jar.jar_class(spark, "encrypted_columns")
    if not files or not encrypted_columns.mayDecrypt(jar.java_dataframe(df)):
        return
    listed = [{"path": f.path, "size": f.size} for f in files]
    refusal = encrypted_columns.check(jar.java_dataframe(df), json.dumps(list(columns)), json.dumps(listed))
    if refusal is not None:
        raise EncryptedSourceError(f"cannot {doing}: {refusal}. Nothing was written")
