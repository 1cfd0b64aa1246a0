"""Another writer process for the tests (tests/index_writer.py, with its own SparkSession and JVM): starting it,
reading what it reports, and making sure its JVM is gone after it was killed."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

WRITER_SCRIPT = Path(__file__).resolve().parent / "index_writer.py"


def start_writer(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WRITER_SCRIPT), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True
    )


def send(proc: subprocess.Popen, *command: str) -> None:
    """Hands a serving writer (`index_writer.py serve`) one command."""
    proc.stdin.write(" ".join(command) + "\n")
    proc.stdin.flush()


def read_line(proc: subprocess.Popen, prefix: str, timeout: float = 300) -> str:
    """The first line of `proc`'s stdout starting with `prefix` (fails after `timeout` seconds)."""
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if selector.select(timeout=1):
            line = proc.stdout.readline()
            if not line:
                raise AssertionError(f"writer process ended early:\n{proc.stderr.read()[-3000:]}")
            if line.startswith(prefix):
                return line.strip()
    raise AssertionError(f"no {prefix!r} line from the writer process within {timeout} s")


def end_orphaned_jvm(pid: int) -> None:
    """The killed writer's JVM exits when its parent's pipe closes; make sure it did."""
    for _ in range(600):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
