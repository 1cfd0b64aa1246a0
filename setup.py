"""The wheel build: setuptools as pyproject.toml configures it, plus hsbloom's jar.

`build_py` makes sure hsbloom/jars/hsbloom.jar is built from these sources for the Spark version hsbloom
supports (the pyspark pin in pyproject.toml), running jvm/build-jar.sh, the script ./dev.sh uses, when it
is not. It compiles against the jars/ of the pyspark in the build environment: under pip's build isolation
that is the pyspark of [build-system] requires, so `pip install` of a clone or a git URL works as is. It
stops the build with the reason and the fix when it cannot, so no wheel ships without its jar.
Editable installs (./dev.sh) skip it: dev.sh builds the jar itself.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
JAR = ROOT / "hsbloom" / "jars" / "hsbloom.jar"


def _pyspark_pin(requirements: list[str]) -> str | None:
    """X.Y.Z of a plain `pyspark==X.Y.Z` (the dev extra's pyspark[connect] follows the dependency's pin)."""
    for requirement in requirements:
        found = re.fullmatch(r"\s*pyspark\s*==\s*([0-9][^;\s]*)\s*", requirement)
        if found:
            return found.group(1)
    return None


def supported_spark_version() -> str:
    """The pyspark version pyproject.toml pins, the same for the build and for users: the jar is built and
    checked for that one Spark release."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runs_with = _pyspark_pin(project["project"]["dependencies"])
    built_with = _pyspark_pin(project["build-system"]["requires"])
    if runs_with is None or built_with != runs_with:
        raise SystemExit(
            f"pyproject.toml must pin one pyspark==X.Y.Z in both [project] dependencies (found {runs_with}) and "
            f"[build-system] requires (found {built_with}): the jar is compiled against the build's pyspark and "
            "runs only on that release. Pin the same version in both."
        )
    return runs_with


def spark_jars_dir() -> str | None:
    """pyspark's jars/ folder ($SPARK_JARS_DIR, else the pyspark this build runs with), or None."""
    if os.environ.get("SPARK_JARS_DIR"):
        return os.environ["SPARK_JARS_DIR"]
    try:
        import pyspark
    except ImportError:
        return None
    return os.path.join(os.path.dirname(pyspark.__file__), "jars")


def ensure_jar() -> None:
    script = ROOT / "jvm" / "build-jar.sh"
    if not script.is_file():
        raise SystemExit(f"{script} is missing: build the wheel from an hsbloom source tree, git URL or sdist")
    version = supported_spark_version()
    env = dict(os.environ, SPARK_VERSION=version, PYTHON=sys.executable)
    if subprocess.run(["bash", str(script), "is-current"], env=env, cwd=ROOT).returncode == 0:
        return
    jars = spark_jars_dir()
    if jars is None:
        raise SystemExit(
            f"hsbloom's jar ({JAR}) is missing or not built from these sources, and building it needs the Spark "
            f"jars of pyspark=={version}, which this build environment lacks (pip's --no-build-isolation builds "
            f"in the current environment as it is). Build with pip's default build isolation (pip then installs "
            f"pyspark=={version} for the build), install pyspark=={version} into this environment, or set "
            "SPARK_JARS_DIR to such a pyspark's jars/ folder."
        )
    env["SPARK_JARS_DIR"] = jars
    if subprocess.run(["bash", str(script), "package"], env=env, cwd=ROOT).returncode != 0:
        raise SystemExit(
            "building hsbloom's jar failed: the [build-jar] lines above say why and what to do (it needs "
            f"Java 17, Maven once for the sbt launcher, and pyspark=={version}'s jars); no wheel was made "
            "without it"
        )


class BuildPyWithJar(build_py):
    """build_py that first makes sure the jar (package data) exists and is current."""

    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            ensure_jar()
        super().run()


setup(cmdclass={"build_py": BuildPyWithJar})
