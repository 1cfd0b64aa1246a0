"""The Spark lines hsbloom supports, and the jar of the one that runs.

A line is a Spark minor release with one Scala version (4.2 with Scala 2.13); the package carries one jar per line,
built by jvm/build-jar.sh, because the jar calls Spark-private Catalyst API whose classes differ between minors. A
jar serves every patch release of its line. The lines are the rows of hsbloom/spark_lines.tsv, the one table the
build, this module, the test run and the docs' support table all read.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from hsbloom.errors import UnsupportedSparkError

TABLE = Path(__file__).resolve().parent / "spark_lines.tsv"
JARS = Path(__file__).resolve().parent / "jars"


@dataclass(frozen=True)
class SparkLine:
    """One row of the table: a Spark minor and Scala version hsbloom ships a jar for."""

    minor: str
    """Spark's major.minor, e.g. "4.2"."""
    scala: str
    """The full Scala version its Spark is built with, e.g. "2.13.18"."""
    compile: str
    """What the jar is compiled against: maven:X.Y.Z or pyspark:X.Y.Z."""
    suite: str
    """The Spark release the line's Scala suite runs against."""
    tested: tuple[str, ...]
    """The pyspark releases the test run installs for this line."""
    delta: str | None
    """The delta-spark release that serves the line, or None where none does."""
    connect: bool
    """Whether the line's Spark has the Spark Connect server hsbloom's Connect support runs in."""

    @property
    def scala_binary(self) -> str:
        return ".".join(self.scala.split(".")[:2])

    @property
    def id(self) -> str:
        """The line as the build and the test run name it: "4.2_2.13" (jvm/build-jar.sh lines)."""
        return f"{self.minor}_{self.scala_binary}"

    @property
    def name(self) -> str:
        """The line as users write it: "4.2 (Scala 2.13)"."""
        return f"{self.minor} (Scala {self.scala_binary})"

    @property
    def jar_name(self) -> str:
        """The file of the line's jar in the package (jvm/build.sbt names it the same way)."""
        return f"hsbloom-spark{self.minor}_{self.scala_binary}.jar"

    @property
    def jar(self) -> Path:
        return JARS / self.jar_name

    def delta_maven_coordinate(self, delta_version: str) -> str:
        """The delta-spark artifact of this line: per Spark minor from Delta 4, per Scala version before."""
        if self.minor.startswith("3."):
            return f"io.delta:delta-spark_{self.scala_binary}:{delta_version}"
        return f"io.delta:delta-spark_{self.minor}_{self.scala_binary}:{delta_version}"


@functools.cache
def supported_lines() -> tuple[SparkLine, ...]:
    """Every line of the table, the primary line (the one the whole test suite runs on) first."""
    rows = [r for r in TABLE.read_text().splitlines() if r.strip() and not r.startswith("#")][1:]
    lines = []
    for row in rows:
        minor, scala, compile_against, suite, tested, delta, connect = row.split("\t")
        lines.append(
            SparkLine(minor, scala, compile_against, suite, tuple(tested.split()), None if delta == "-" else delta,
                      connect == "yes")
        )  # fmt: skip
    return tuple(lines)


def running_spark_release() -> str:
    """The release of the pyspark this interpreter imports (its X.Y.Z, a pre-release's suffix kept)."""
    import pyspark

    return pyspark.__version__


def running_scala_binary() -> str | None:
    """The Scala version (2.12 or 2.13) of the Spark pyspark launches: $SPARK_HOME's jars/ when it is set (a Spark
    distribution), else pyspark's own; None when neither holds a scala-library jar."""
    import pyspark

    folders = [Path(os.environ["SPARK_HOME"]) / "jars"] if os.environ.get("SPARK_HOME") else []
    folders.append(Path(pyspark.__file__).resolve().parent / "jars")
    for folder in folders:
        if folder.is_dir():
            for jar in folder.glob("scala-library-*.jar"):
                found = re.fullmatch(r"scala-library-(\d+\.\d+)\.\d+\.jar", jar.name)
                if found:
                    return found.group(1)
    return None


def minor_of(spark_release: str) -> str:
    """The major.minor of a Spark release (4.2.1 -> 4.2): its line, but for the Scala version."""
    return ".".join(spark_release.split(".")[:2])


def supported_releases() -> str:
    """The supported lines, as an error message lists them."""
    return ", ".join(f"Spark {line.name}" for line in supported_lines()) + ", each in any patch release"


def line_of(spark_release: str, scala_binary: str | None = None) -> SparkLine:
    """The line serving `spark_release` (X.Y.Z) with `scala_binary` (None: the only line of that minor, if one),
    or UnsupportedSparkError naming the supported ones."""
    minor = minor_of(spark_release)
    candidates = [line for line in supported_lines() if line.minor == minor]
    if scala_binary is not None:
        candidates = [line for line in candidates if line.scala_binary == scala_binary]
    if len(candidates) == 1:
        return candidates[0]
    with_scala = f" with Scala {scala_binary}" if scala_binary else ""
    raise UnsupportedSparkError(
        f"hsbloom does not support Spark {spark_release}{with_scala}: it supports {supported_releases()}. "
        "Install a supported pyspark (pip install 'hsbloom[spark]' installs the newest), or run a supported Spark"
    )


def running_line() -> SparkLine:
    """The line of the Spark this interpreter runs (its pyspark), or UnsupportedSparkError."""
    return line_of(running_spark_release(), running_scala_binary())
