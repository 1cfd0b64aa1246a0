"""The installable wheel: built from the tracked files of this checkout, it carries the jar and works on its
own, in a fresh virtual environment, outside the source tree (examples/quickstart.py, end to end).

The build reuses the jar ./dev.sh built (setup.py's build step finds it current, so no sbt runs here), and
the fresh venv sees the test environment's dependencies through a path entry that leaves hsbloom out, so
nothing is downloaded and only the wheel can provide `hsbloom` and its jar.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from hsbloom import session as hs_session

ROOT = Path(__file__).resolve().parent.parent


def tracked_copy(destination: Path) -> Path:
    """The files git tracks, as they are in the working tree (what a fresh clone has), plus the built jar."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    jar = destination / "hsbloom" / "jars" / "hsbloom.jar"
    jar.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(hs_session.default_jar_path(), jar)  # copied last, so newer than the sources: current
    return destination


def dependencies_without_hsbloom(target: Path) -> Path:
    """A folder of links to this environment's installed packages, except hsbloom's own entries."""
    site = Path(sysconfig.get_paths()["purelib"])
    target.mkdir()
    for entry in site.iterdir():
        if entry.name.lower().startswith(("hsbloom", "__editable__", "_hsbloom", "__pycache__")):
            continue
        (target / entry.name).symlink_to(entry)
    return target


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = tracked_copy(work / "src")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(work / "dist"),
         str(source)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "building the hsbloom jar" not in result.stdout + result.stderr  # the current jar was reused
    (built,) = (work / "dist").glob("hsbloom-*.whl")
    return built


def test_the_wheel_carries_the_jar_and_the_package(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        jar = zf.read("hsbloom/jars/hsbloom.jar")
    assert {"hsbloom/session.py", "hsbloom/session_checks.py", "hsbloom/jars/hsbloom.jar"} <= names
    assert jar == hs_session.default_jar_path().read_bytes()
    assert not any(name.startswith(("tests/", "jvm/", "bench/")) for name in names)


def test_the_wheel_runs_the_quickstart_in_a_fresh_venv_outside_the_checkout(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    venv_site = Path(
        subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       capture_output=True, text=True, check=True).stdout.strip()
    )  # fmt: skip
    # Install the wheel with this environment's pip into the fresh venv (no download: --no-deps).
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(venv_site), str(wheel)],
        check=True, timeout=300,
    )  # fmt: skip
    deps = dependencies_without_hsbloom(tmp_path / "deps")
    (venv_site / "test-dependencies.pth").write_text(f"{deps}\n")
    run_dir = tmp_path / "elsewhere"
    run_dir.mkdir()
    shutil.copy2(ROOT / "examples" / "quickstart.py", run_dir / "quickstart.py")
    env = {k: v for k, v in os.environ.items() if k not in ("HSBLOOM_JAR", "PYSPARK_PYTHON", "PYTHONPATH")}
    where = subprocess.run(
        [str(python), "-c", "import hsbloom; print(hsbloom.__file__)"], capture_output=True, text=True,
        env=env, cwd=run_dir, check=True,
    ).stdout.strip()  # fmt: skip
    assert Path(where).is_relative_to(venv_site), where
    result = subprocess.run(
        [str(python), "quickstart.py", "--rows", "20000", "--files", "8"],
        capture_output=True, text=True, env=env, cwd=run_dir, timeout=600,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "built index events_keys" in output
    assert "user_id = 42 (absent): 0 row(s); files read 8 -> 0" in output
    assert re.search(r"user_id = -?\d+: 1 row\(s\); files read 8 -> 1;", output), output[-4000:]
