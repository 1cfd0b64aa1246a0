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
from hsbloom.index import stored


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
        data = stored.mapping(data, "a source file")
        return cls(
            file_id=stored.integer(data.get("id"), "source file id", stored.MAX_FILE_ID),
            path=stored.text(data.get("path"), "source file path"),
            size=stored.integer(data.get("size"), "source file size"),
            mtime=stored.integer(data.get("mtime"), "source file mtime"),
        )


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
        data = stored.mapping(data, "a file")
        return cls(
            path=stored.text(data.get("path"), "file path"),
            size=stored.integer(data.get("size"), "file size"),
            mtime=stored.integer(data.get("mtime"), "file mtime"),
        )


@dataclass(frozen=True)
class Source:
    """A file source as indexed: format, where, how it is read, and the files at that moment."""

    format: str  # parquet, orc, csv, json or delta
    root_paths: tuple[str, ...]
    # The read options that decide values, verbatim (a refresh reads with them); options that may hold secrets
    # are never recorded, and any other is only compared, by an HMAC keyed by `options_salt` (the jar's
    # hsbloom.catalog.ReadOptions; docs/security.md).
    options: dict[str, str]
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
    hashed_options: dict[str, str] = field(default_factory=dict, repr=False)
    options_salt: str | None = field(default=None, repr=False)

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
            "hashed_options": dict(self.hashed_options),
            "options_salt": self.options_salt,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Source":
        """The source of a stored entry, every field checked (hsbloom.index.stored): the format is one hsbloom
        indexes (Spark would load any class named there), the rest strings, maps and numbers of their kind."""
        return cls(
            format=stored.source_format(data.get("format")),
            root_paths=stored.texts(data.get("root_paths"), "source.root_paths"),
            options=stored.text_map(data.get("options"), "source.options"),
            table=stored.optional_text(data.get("table"), "source.table"),
            delta_version=stored.optional_integer(data.get("delta_version"), "source.delta_version"),
            schema=stored.text_map(data.get("schema"), "source.schema"),
            partition_columns=stored.texts(data.get("partition_columns", []), "source.partition_columns"),
            files=tuple(  # only entries of older layouts list them
                SourceFile.from_dict(f) for f in stored.sequence(data.get("files", []), "source.files")
            ),
            read_facts=stored.text_map(data.get("read_facts", {}), "source.read_facts"),
            user_schema=stored.optional_text(data.get("user_schema"), "source.user_schema"),
            hashed_options=stored.text_map(data.get("hashed_options", {}), "source.hashed_options"),
            options_salt=stored.optional_text(data.get("options_salt"), "source.options_salt"),
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
        hashed_options=dict(answer["hashed_options"]),
        options_salt=answer["options_salt"],
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
