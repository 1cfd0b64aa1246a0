"""A real Spark standalone cluster on 127.0.0.1 for tests: a master and workers, from pyspark's own scripts.

Every process is started in its own process group and stopped with it (a worker's executors are in its
group), so nothing outlives the test session, also when a test fails.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pyspark

from jvm_options import SHORT_LIVED_JVM

SPARK_HOME = Path(pyspark.__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_group(process: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM the process's group, then SIGKILL whatever is left after `grace` seconds."""
    if process.poll() is not None:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # children of a finished leader
        except ProcessLookupError:
            pass
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    except ProcessLookupError:
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


@dataclass
class StandaloneCluster:
    """A master and `workers` workers (1 core, `worker_memory` each) whose files live under `root`."""

    root: Path
    env: dict[str, str]
    workers: int = 2
    worker_memory: str = "1g"
    processes: list[subprocess.Popen] = field(default_factory=list)
    master_url: str = ""
    ui_port: int = 0

    def _spawn(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.root / f"{name}.log", "w")
        process = subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *args],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=self.env, cwd=self.root, start_new_session=True,
        )  # fmt: skip
        log.close()
        self.processes.append(process)
        return process

    def start(self, timeout: float = 120.0) -> None:
        """Start the master and the workers, and wait until every worker has registered."""
        self.launch(timeout)
        self.wait_for_workers(timeout)

    def launch(self, timeout: float = 120.0) -> None:
        """Start the master and the workers; return once the master answers, while the workers may still be
        starting (a driver started now gets its executors as they register)."""
        port, self.ui_port = free_port(), free_port()
        self.master_url = f"spark://127.0.0.1:{port}"
        self._spawn("master", "org.apache.spark.deploy.master.Master",
                    "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(self.ui_port))  # fmt: skip
        for n in range(self.workers):
            work_dir = self.root / f"worker-{n}"
            work_dir.mkdir()
            self._spawn(f"worker-{n}", "org.apache.spark.deploy.worker.Worker",
                        "--host", "127.0.0.1", "--webui-port", str(free_port()), "--cores", "1",
                        "--memory", self.worker_memory, "--work-dir", str(work_dir), self.master_url)  # fmt: skip
        self._wait_until(lambda: self.alive_workers(self.ui_port) is not None, "the master did not answer", timeout)

    def wait_for_workers(self, timeout: float = 120.0) -> None:
        """Wait until every worker has registered with the master."""
        self._wait_until(lambda: (self.alive_workers(self.ui_port) or 0) >= self.workers,
                         "the workers did not register", timeout)  # fmt: skip

    def _wait_until(self, done: Callable[[], bool], what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            for process in self.processes:
                if process.poll() is not None:
                    raise RuntimeError(f"a cluster process exited early; see the logs in {self.root}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} within {timeout:.0f} s; see the logs in {self.root}")
            time.sleep(0.5)

    @staticmethod
    def alive_workers(ui_port: int) -> int | None:
        """How many workers the master counts alive; None while it does not answer (or, still starting, answers
        its HTML page instead of the JSON)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as reply:
                return int(json.load(reply).get("aliveworkers", 0))
        except (OSError, ValueError):
            return None

    def stop(self) -> None:
        for process in reversed(self.processes):  # workers (and their executors) first, then the master
            stop_group(process)
        self.processes.clear()


def cluster_env(root: Path, path_first: Path | None = None) -> dict[str, str]:
    """The environment of the cluster's processes: small daemons, loopback only, files under `root`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_DAEMON_MEMORY="256m",
        SPARK_LOCAL_DIRS=str(root / "local"),
        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
        SPARK_DAEMON_JAVA_OPTS=SHORT_LIVED_JVM,
    )
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env.get('PATH', '')}"
    return env
