"""What the jar makes of a DataFrame's source, for tests: `hsbloom.catalog.Sources.describe` (what create and
refresh record of a source, the indexed columns as the DataFrame spells them, and its listing), called through
py4j on a classic session and converted from its Scala case classes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from hsbloom import jar
import jvm_classes


@dataclass(frozen=True)
class ListedFile:
    """A source file as the relation's file index lists it: numbered from 0 in path order, with its fingerprint."""

    file_id: int
    path: str
    size: int
    mtime: int


@dataclass(frozen=True)
class Source:
    """The source as the log records it (`hsbloom.format.IndexSource`)."""

    format: str
    root_paths: tuple[str, ...]
    options: dict[str, str]  # the value-deciding read options, verbatim (keys in lower case)
    hashed_options: dict[str, str]  # the others, as salted HMACs
    options_salt: str
    table: str | None
    delta_version: int | None
    schema: dict[str, str]  # column -> Spark type, in the DataFrame's order
    partition_columns: tuple[str, ...]
    read_facts: dict[str, str]
    user_schema: str | None


@dataclass(frozen=True)
class Described:
    source: Source
    columns: tuple[str, ...]  # the indexed columns as the DataFrame spells them
    files: tuple[ListedFile, ...]  # sorted by path; empty without `with_files`


def describe(spark: Any, df: Any, columns: Sequence[str], with_files: bool = True) -> Described:
    """`Sources.describe(df, columns, withFiles)`: raises a Py4JJavaError around hsbloom's UnsupportedSource
    exception when the jar refuses the source (tests see refusals through `Hyperspace.create_index`)."""
    jvm = jar.jvm(spark)
    convert = jvm.scala.jdk.javaapi.CollectionConverters

    def seq(scala_seq: Any) -> list[Any]:
        return list(convert.asJava(scala_seq))

    def mapping(scala_map: Any) -> dict[str, str]:
        return dict(convert.asJava(scala_map))

    def option(scala_option: Any) -> Any:
        return scala_option.get() if scala_option.isDefined() else None

    described = jvm_classes.jvm_class(spark, "sources").describe(
        jar.java_dataframe(df), convert.asScala(list(columns)).toSeq(), with_files
    )
    s = described.source()
    options = s.options()
    version = option(s.deltaVersion())
    source = Source(
        format=s.format(),
        root_paths=tuple(seq(s.rootPaths())),
        options=mapping(options.verbatim()),
        hashed_options=mapping(options.hashed()),
        options_salt=options.salt(),
        table=option(s.table()),
        delta_version=None if version is None else int(version),
        schema={pair._1(): pair._2() for pair in seq(s.schema())},
        partition_columns=tuple(seq(s.partitionColumns())),
        read_facts=mapping(s.readFacts()),
        user_schema=option(s.userSchema()),
    )
    files = tuple(
        ListedFile(int(f.fileId()), f.path(), int(f.size()), int(f.mtime())) for f in seq(described.files())
    )
    return Described(source, tuple(seq(described.columns())), files)
