"""The wheel build: setuptools as pyproject.toml configures it, plus hsbloom's jars.

`build_py` makes sure hsbloom/jars holds a jar for every Spark line of hsbloom/spark_lines.tsv, built from these
sources, running jvm/build-jar.sh, the script ./dev.sh uses, when one is missing or stale. sbt fetches the Spark
each jar compiles against, so the build environment needs no pyspark, and `pip install` of a clone or a git URL
works as is (docs/deploy.md says what the build costs). It stops the build with the reason and the fix when it
cannot, so no wheel ships without its jars. Editable installs (./dev.sh) skip it: dev.sh builds the jars itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def ensure_jars() -> None:
    script = ROOT / "jvm" / "build-jar.sh"
    if not script.is_file():
        raise SystemExit(f"{script} is missing: build the wheel from an hsbloom source tree, git URL or sdist")
    env = dict(os.environ, PYTHON=sys.executable)
    if subprocess.run(["bash", str(script), "is-current"], env=env, cwd=ROOT).returncode == 0:
        return
    if subprocess.run(["bash", str(script), "package"], env=env, cwd=ROOT).returncode != 0:
        raise SystemExit(
            "building hsbloom's jars failed: the [build-jar] lines above say why and what to do (it needs Java 17, "
            "Maven once for the sbt launcher, and the package registry for Spark); no wheel was made without them"
        )


class BuildPyWithJars(build_py):
    """build_py that first makes sure the jars (package data) exist and are current."""

    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            ensure_jars()
        super().run()


setup(cmdclass={"build_py": BuildPyWithJars})
