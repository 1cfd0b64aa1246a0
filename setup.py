"""The wheel build: setuptools as pyproject.toml configures it, plus hsbloom's jar.

`build_py` makes sure hsbloom/jars/hsbloom.jar is built from these sources for the Spark version hsbloom
supports (the pyspark pin in pyproject.toml), running jvm/build-jar.sh, the script ./dev.sh uses, when it
is not; it stops the build with the reason and the fix when it cannot, so no wheel ships without its jar.
Editable installs (./dev.sh) skip it: dev.sh builds the jar itself.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
JAR = ROOT / "hsbloom" / "jars" / "hsbloom.jar"


def supported_spark_version() -> str:
    """The pyspark version pyproject.toml pins: the one Spark release the jar is built and checked for."""
    found = re.search(r'"pyspark==([0-9][^"]*)"', (ROOT / "pyproject.toml").read_text())
    if not found:
        raise SystemExit("pyproject.toml pins no pyspark==X.Y.Z; the jar's Spark version comes from that pin")
    return found.group(1)


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
        raise SystemExit(f"{script} is missing: build the wheel from an hsbloom source tree or sdist")
    version = supported_spark_version()
    env = dict(os.environ, SPARK_VERSION=version, PYTHON=sys.executable)
    if subprocess.run(["bash", str(script), "is-current"], env=env, cwd=ROOT).returncode == 0:
        return
    jars = spark_jars_dir()
    if jars is None:
        raise SystemExit(
            f"hsbloom's jar ({JAR}) is missing or older than its sources, and building it needs the Spark "
            f"jars of pyspark=={version}, which this build environment does not have. Build the wheel with "
            f"`pip wheel --no-build-isolation .` in an environment with pyspark=={version} and Java 17 "
            "(./dev.sh build makes one in .venv), or set SPARK_JARS_DIR to such a pyspark's jars/ folder."
        )
    env["SPARK_JARS_DIR"] = jars
    if subprocess.run(["bash", str(script), "package"], env=env, cwd=ROOT).returncode != 0:
        raise SystemExit("building hsbloom's jar failed (see the output above); no wheel was made without it")
    if subprocess.run(["bash", str(script), "is-current"], env=env, cwd=ROOT).returncode != 0:
        raise SystemExit(
            f"the jar built from {jars} is not for Spark {version}, the version pyproject.toml pins; "
            f"build with pyspark=={version}"
        )


class BuildPyWithJar(build_py):
    """build_py that first makes sure the jar (package data) exists and is current."""

    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            ensure_jar()
        super().run()


setup(cmdclass={"build_py": BuildPyWithJar})
