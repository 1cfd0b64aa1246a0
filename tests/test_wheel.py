"""The installable package, built the ways the README says, each installed into a fresh virtual environment
and run there, outside the source tree.

- `pip wheel --no-build-isolation` of this checkout's tracked files: it reuses the jars ./dev.sh built (their
  recorded source fingerprint matches, so no sbt runs) and carries them, one per Spark line, with the package.
- `pip install` of a clone, under pip's default build isolation (no pyspark in the build environment): the
  clone holds the jars ./dev.sh built, as a clone where ./dev.sh ran does, and the build reuses them only
  because their fingerprint proves they are built from the clone's sources.
- `pip install git+file://...` of the same commit, default isolation: pip's own checkout has no jar, so the
  build compiles every line's jar from the sources with sbt, against the Spark sbt resolves for each, and the
  installed package runs examples/quickstart.py end to end from a folder outside the checkout. This is the one build
  from sources here, and most of the module's time, so both isolated installs start with the module and run
  while the other tests do.
- A build that cannot make the jar (no java on PATH) stops saying so and makes no wheel.

pip installs into the fresh venvs with --no-deps: only the build requirements are fetched. Once installed,
a venv sees the test environment's packages through a path entry that leaves hsbloom out, so only the
install can provide hsbloom and its jar.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import zipfile
from pathlib import Path

import pytest

import hsbloom
from hsbloom import session as hs_session
from hsbloom import spark_lines

ROOT = Path(__file__).resolve().parent.parent
# The isolated installs' budget: the git URL's sbt build from sources takes minutes on a busy 2-core machine.
INSTALL_TIMEOUT = 1500

# Run by each fresh venv's interpreter: where the installed package and its jar are, and the jar's build
# information (check_jar: built for this pyspark). Its report is the line starting with REPORT. Whether the
# jar works in a session is the quickstart's to show (the git install runs it).
REPORT = "installed hsbloom: "
CHECK_INSTALL = f"""
import json
import hsbloom
from hsbloom import session

jar = session.default_jar_path()
report = {{"module": hsbloom.__file__, "jar": str(jar), "build_info": session.check_jar(jar),
           "version": hsbloom.__version__}}
print({REPORT!r} + json.dumps(report))
"""
QUICKSTART = ["quickstart.py", "--rows", "20000", "--files", "8"]


def tracked_copy(destination: Path, with_jar: bool = True) -> Path:
    """The files git tracks, as they are in the working tree (what a fresh clone has), plus the built jars."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    if with_jar:
        add_dev_jar(destination)
    return destination


def add_dev_jar(tree: Path) -> None:
    """The jars ./dev.sh built from these sources, one per line; the wheel build takes them because their
    fingerprint matches."""
    for line in spark_lines.supported_lines():
        jar = tree / "hsbloom" / "jars" / line.jar_name
        jar.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(line.jar, jar)


def dependencies_without_hsbloom(target: Path) -> Path:
    """A folder of links to this environment's installed packages, except hsbloom's own entries."""
    site = Path(sysconfig.get_paths()["purelib"])
    target.mkdir()
    for entry in site.iterdir():
        if entry.name.lower().startswith(("hsbloom", "__editable__", "_hsbloom", "__pycache__")):
            continue
        (target / entry.name).symlink_to(entry)
    return target


def fresh_venv(path: Path) -> tuple[Path, Path]:
    """A venv without pip (this environment's pip installs into it): its python and site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    python = path / "bin" / "python"
    site = Path(
        subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       capture_output=True, text=True, check=True).stdout.strip()
    )  # fmt: skip
    return python, site


def outside_env() -> dict[str, str]:
    """This environment minus what would let the checkout's hsbloom, jar or pyspark stand in for the install."""
    dropped = {"HSBLOOM_JAR", "PYSPARK_PYTHON", "PYTHONPATH", "SPARK_JARS_DIR", "SPARK_VERSION", "VIRTUAL_ENV"}
    dropped |= {"PIP_NO_BUILD_ISOLATION", "PIP_BUILD_ISOLATION"}  # pip's default build isolation, whatever is set
    return {k: v for k, v in os.environ.items() if k not in dropped}


def fingerprint() -> str:
    """The fingerprint of this checkout's jar sources, as build-jar.sh computes it and stamps it in the jar."""
    return subprocess.run(
        ["bash", str(ROOT / "jvm" / "build-jar.sh"), "fingerprint"], capture_output=True, text=True, check=True
    ).stdout.strip()


class Install:
    """In the background: `pip install` (default build isolation, --no-deps) of `target` into a fresh venv,
    then CHECK_INSTALL run by that venv from a folder outside the checkout, then the quickstart if asked."""

    def __init__(self, work: Path, target: str, deps: Path, quickstart: bool = False):
        work.mkdir()
        self.work, self.target, self.deps, self.quickstart = work, target, deps, quickstart
        self.python, self.site = fresh_venv(work / "venv")
        self.run_dir = work / "elsewhere"
        self.run_dir.mkdir()
        shutil.copy2(ROOT / "examples" / "quickstart.py", self.run_dir / "quickstart.py")
        self.returncodes: dict[str, int] = {}
        self.running: subprocess.Popen | None = None
        self.stopped = False
        self.lock = threading.Lock()  # a stop() never misses a step that is starting
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _step(self, name: str, args: list[str]) -> bool:
        with self.lock, open(self.work / f"{name}.log", "w") as log:
            if self.stopped:
                return False
            self.running = subprocess.Popen(
                args, stdout=log, stderr=subprocess.STDOUT, env=outside_env(), cwd=self.run_dir,
                start_new_session=True,
            )  # fmt: skip
        self.returncodes[name] = self.running.wait()
        return self.returncodes[name] == 0

    def _run(self) -> None:
        pip = [sys.executable, "-m", "pip", "--python", str(self.python), "install", "-v", "--no-deps", self.target]
        if self._step("pip", pip):
            (self.site / "test-dependencies.pth").write_text(f"{self.deps}\n")  # after the build: it saw none
            if self._step("check", [str(self.python), "-c", CHECK_INSTALL]) and self.quickstart:
                self._step("quickstart", [str(self.python), *QUICKSTART])

    def result(self) -> tuple[str, dict]:
        """pip's output and CHECK_INSTALL's report, once both have succeeded."""
        self.thread.join(timeout=INSTALL_TIMEOUT)
        if self.thread.is_alive():
            self.stop()
            pytest.fail(f"pip install {self.target} and its check took over {INSTALL_TIMEOUT} s")
        output = (self.work / "pip.log").read_text(errors="replace")
        assert self.returncodes.get("pip") == 0, output[-6000:]
        checked = (self.work / "check.log").read_text(errors="replace")
        assert self.returncodes.get("check") == 0, checked[-4000:]
        (report,) = [line for line in checked.splitlines() if line.startswith(REPORT)]
        if self.quickstart:
            ran = (self.work / "quickstart.log").read_text(errors="replace")
            assert self.returncodes.get("quickstart") == 0, ran[-4000:]
            assert "built index events_keys" in ran
            assert "user_id = 42 (absent): 0 row(s); files read 8 -> 0 (files holding it: 0)" in ran
            assert re.search(r"user_id = -?\d+: 1 row\(s\); files read 8 -> 1 \(files holding it: 1\);", ran), ran[-4000:]
        return output, json.loads(report[len(REPORT) :])

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            if self.running is not None and self.running.poll() is None:
                os.killpg(self.running.pid, signal.SIGTERM)
        self.thread.join(timeout=60)


@pytest.fixture(scope="module", autouse=True)
def isolated_installs(tmp_path_factory):
    """Both isolated installs, started before the module's first test so their builds overlap the others."""
    work = tmp_path_factory.mktemp("isolated")
    deps = dependencies_without_hsbloom(work / "deps")
    # One commit of the working tree's tracked files: what a push of this checkout would publish.
    repo = tracked_copy(work / "repo", with_jar=False)
    git = ["git", "-c", "user.name=hsbloom tests", "-c", "user.email=tests@invalid", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "snapshot"], cwd=repo, check=True)
    clone = work / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    add_dev_jar(clone)  # as after ./dev.sh build in the clone
    installs = {
        "git": Install(work / "from-git", f"git+{repo.as_uri()}", deps, quickstart=True),
        "clone": Install(work / "from-clone", str(clone), deps),
    }
    yield installs
    for install in installs.values():
        install.stop()


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
    assert "building the hsbloom jars" not in result.stdout + result.stderr  # the current jars were reused
    (built,) = (work / "dist").glob("hsbloom-*.whl")
    return built


def test_the_wheel_carries_every_lines_jar_and_the_package(wheel):
    lines = spark_lines.supported_lines()
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        jars = {line.jar_name: zf.read(f"hsbloom/jars/{line.jar_name}") for line in lines}
    assert {"hsbloom/session.py", "hsbloom/spark_lines.py", "hsbloom/spark_lines.tsv"} <= names
    assert {n for n in names if n.startswith("hsbloom/jars/")} == {f"hsbloom/jars/{line.jar_name}" for line in lines}
    for line in lines:
        assert jars[line.jar_name] == line.jar.read_bytes(), line.name
    jar = jars[spark_lines.running_line().jar_name]
    assert not any(name.startswith(("tests/", "jvm/", "bench/")) for name in names)
    # No test or benchmark seam ships in the jar: their classes are jvm/testkit's, jvm/testkms' and jvm/bench's, and
    # the JSON build entry (BuildRequest.fromJson, called by IndexBuild.run) is the test kit's JsonBuild.
    with zipfile.ZipFile(io.BytesIO(jar)) as classes:
        shipped = classes.namelist()
        build_classes = [classes.read(f"hsbloom/indexing/{c}$.class") for c in ("BuildRequest", "IndexBuild")]
    assert "hsbloom/HsbloomExtension.class" in shipped
    assert not [n for n in shipped if n.startswith(("hsbloom/testkit/", "hsbloom/testkms/", "hsbloom/bench/"))]
    assert not [c for c in build_classes if b"fromJson" in c]


def test_a_build_without_java_stops_naming_java_17_and_makes_no_wheel(tmp_path):
    """A tree without a current jar and a PATH without java: the build says what is missing, and no wheel."""
    source = tracked_copy(tmp_path / "src", with_jar=False)
    no_java = tmp_path / "bin"
    no_java.mkdir()
    for directory in os.environ["PATH"].split(os.pathsep):
        for tool in Path(directory).glob("*") if Path(directory).is_dir() else ():
            if tool.name not in ("java", "javac") and not (no_java / tool.name).exists():
                (no_java / tool.name).symlink_to(tool)
    env = dict(outside_env(), PATH=str(no_java))
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"),
         str(source)],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "building hsbloom's jar needs Java 17, and java is not on PATH" in output, output[-3000:]
    assert "install a Java 17 JDK" in output
    assert "no wheel was made without them" in output
    assert not list((tmp_path / "dist").glob("*.whl"))


def test_pip_install_of_a_git_url_builds_the_jar_from_its_sources_under_build_isolation(isolated_installs):
    install = isolated_installs["git"]
    output, report = install.result()
    # sbt compiled every line's jar (against the Spark it resolved for each: no pyspark in the build environment).
    built = re.search(r"\[build-jar\] building the hsbloom jars with sbt \S+: (.*)", output)
    assert built, output[-6000:]
    assert len(built.group(1).split()) == len(spark_lines.supported_lines()), built.group(1)
    assert Path(report["module"]).is_relative_to(install.site), report
    assert Path(report["jar"]).is_relative_to(install.site), report
    assert report["build_info"]["sources.sha256"] == fingerprint()
    assert report["build_info"]["hsbloom.version"] == report["version"] == hsbloom.__version__


def test_pip_install_of_a_clone_under_build_isolation_takes_the_jar_built_from_its_sources(isolated_installs):
    install = isolated_installs["clone"]
    output, report = install.result()
    assert "building the hsbloom jars" not in output  # the clone's jars match its sources: no sbt
    assert Path(report["module"]).is_relative_to(install.site), report
    assert Path(report["jar"]).read_bytes() == hs_session.default_jar_path().read_bytes()
    assert report["build_info"]["sources.sha256"] == fingerprint()
    assert report["build_info"]["hsbloom.version"] == report["version"] == hsbloom.__version__
