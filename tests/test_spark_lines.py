"""The table of supported Spark lines (hsbloom/spark_lines.tsv) and everything that must agree with it: the jar
chosen for a Spark release, the refusal of any other, Delta's artifact per line, the spark extra's bounds, the
primary line's pins, the build's projects and the support table of docs/deploy.md."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

import hsbloom
from hsbloom import session as hs_session
from hsbloom import spark_lines
from hsbloom.errors import HsbloomJarError, UnsupportedSparkError

ROOT = Path(__file__).resolve().parent.parent
LINES = spark_lines.supported_lines()


def by_minor(minor: str) -> spark_lines.SparkLine:
    (line,) = [line for line in LINES if line.minor == minor]
    return line


def test_every_patch_release_of_a_line_gets_that_lines_jar():
    for line in LINES:
        for patch in ("0", "1", "9", "12"):
            assert spark_lines.line_of(f"{line.minor}.{patch}", line.scala_binary) == line
        assert line.jar == Path(hsbloom.__file__).parent / "jars" / f"hsbloom-spark{line.minor}_{line.scala_binary}.jar"


def test_a_spark_of_no_line_is_refused_naming_the_supported_ones():
    for release, scala in [("3.4.1", None), ("4.4.0", "2.13"), ("4.2.1", "2.12"), ("5.0.0", None)]:
        with pytest.raises(UnsupportedSparkError) as refused:
            spark_lines.line_of(release, scala)
        message = str(refused.value)
        assert f"does not support Spark {release}" in message
        assert all(f"Spark {line.minor} (Scala {line.scala_binary})" in message for line in LINES)
        assert "any patch release" in message
        assert isinstance(refused.value, HsbloomJarError)  # what configure's callers already catch


def test_configure_and_the_launch_commands_refuse_an_unsupported_pyspark(monkeypatch):
    import pyspark
    from pyspark.sql import SparkSession

    monkeypatch.setattr(pyspark, "__version__", "3.4.1")
    for call in (lambda: hsbloom.configure(SparkSession.builder), hsbloom.connect_server_command,
                 hsbloom.spark_sql_command):
        with pytest.raises(hsbloom.UnsupportedSparkError, match=r"does not support Spark 3\.4\.1 .*it supports Spark 4\.2"):
            call()


def test_the_running_pyspark_is_the_primary_line_and_its_jar_is_the_default():
    assert spark_lines.running_line() == LINES[0]
    assert spark_lines.running_spark_release() == LINES[0].tested[0]
    assert hs_session.default_jar_path() == LINES[0].jar
    assert hs_session.check_jar(LINES[0].jar)["spark.line"] == LINES[0].minor


def test_each_line_has_its_deltas_artifact_or_refuses_delta():
    for line in LINES:
        if line.delta is None:
            with pytest.raises(UnsupportedSparkError, match=rf"no delta-spark release serves Spark {line.minor}"):
                hs_session.delta_maven_coordinate(line)
        else:
            coordinate = hs_session.delta_maven_coordinate(line)
            group, artifact, _version = coordinate.split(":")
            assert group == "io.delta"
            assert artifact == (f"delta-spark_{line.scala_binary}" if line.minor.startswith("3.")
                                else f"delta-spark_{line.minor}_{line.scala_binary}")


def test_the_primary_lines_pins_are_the_dev_environments():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    dev = project["project"]["optional-dependencies"]["dev"]
    assert f"pyspark[connect]=={LINES[0].tested[0]}" in dev
    assert f"delta-spark=={LINES[0].delta}" in dev
    assert not [r for r in project["project"]["dependencies"] if r.startswith("pyspark")]  # a user's pyspark stays
    assert not [r for r in project["build-system"]["requires"] if r.startswith("pyspark")]


def _bounds(lines) -> str:
    minors = sorted({tuple(map(int, line.minor.split("."))) for line in lines})
    low, high = minors[0], minors[-1]
    # Every minor between the bounds is a line (Spark 3.5 is the last 3.x): the extra admits no Spark that
    # configure refuses.
    for major in range(low[0], high[0] + 1):
        first = low[1] if major == low[0] else 0
        last = high[1] if major == high[0] else max(m for a, m in minors if a == major)
        assert [(major, m) for m in range(first, last + 1)] == [m for m in minors if m[0] == major]
    return f">={low[0]}.{low[1]}.0,<{high[0]}.{high[1] + 1}"


def test_the_extras_span_exactly_the_supported_lines():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = project["project"]["optional-dependencies"]
    assert extras["spark"] == [f"pyspark{_bounds(LINES)}"]
    assert extras["connect"] == [f"pyspark[connect]{_bounds([line for line in LINES if line.connect])}"]
    # Delta's Python package: the minors of the lines' Delta releases, and none of the minors Delta released
    # between and around them (after 3.3 came 4.0).
    deltas = {".".join(line.delta.split(".")[:2]) for line in LINES if line.delta}
    (requirement,) = extras["delta"]
    spec = SpecifierSet(requirement.removeprefix("delta-spark"))
    released = {f"{major}.{minor}" for major, last in ((2, 4), (3, 3), (4, 9)) for minor in range(0, last + 1)}
    assert {minor for minor in released if f"{minor}.0" in spec} == deltas


def test_the_build_has_a_project_per_line():
    listed = subprocess.run(["bash", str(ROOT / "jvm" / "build-jar.sh"), "lines"], capture_output=True, text=True,
                            check=True).stdout.split()
    assert listed == [f"{line.minor}_{line.scala_binary}" for line in LINES]
    build = (ROOT / "jvm" / "build.sbt").read_text()
    for line in LINES[1:]:
        project = f"spark{line.minor.replace('.', '')}_{line.scala_binary.replace('.', '')}"
        assert f'lazy val {project} = lineProject(sparkLine("{line.minor}", "{line.scala_binary}")' in build


def support_table() -> list[list[str]]:
    """The rows of the support table in docs/deploy.md (the one whose header starts with | Spark |)."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    table = re.search(r"^\| Spark \|.*?\n\|[-| ]+\|\n((?:\|.*\|\n)+)", text, re.M)
    assert table, "docs/deploy.md has no support table (a header starting with | Spark |)"
    return [[cell.strip() for cell in row.strip().strip("|").split("|")] for row in table.group(1).splitlines()]


def test_the_guides_support_table_is_the_lines_table():
    rows = support_table()
    assert [row[0] for row in rows] == [line.minor for line in LINES]
    for row, line in zip(rows, LINES):
        assert row[1] == line.scala_binary, line.name
        assert row[2] == ", ".join(line.tested), line.name
        assert f"`{line.jar_name}`" in row[3], line.name
        assert row[4] == (f"delta-spark {line.delta}" if line.delta else "none yet"), line.name
        assert row[5] == ("yes" if line.connect else "no"), line.name
