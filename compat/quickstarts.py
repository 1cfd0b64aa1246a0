"""The quickstarts as a user runs them, each in a JVM of its own: examples/quickstart.py with this environment's
python, and examples/sql_quickstart.sql in pyspark's spark-sql shell with hsbloom (`hsbloom.spark_sql_command`;
where the Spark has no such shell, by sql_file.py).

They share nothing with the suite's session, so conftest.py starts them when the test session starts and they run
while the other tests do; test_examples.py, run last, waits for them and reads what they printed. Each runs in a
folder under pytest's tmp dir (the Python quickstart writes its data beside the script: it runs from a copy), its
output in files there (a pipe nobody reads until the end could fill up and stall it).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import hsbloom

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TIMEOUT = 900  # seconds, for a loaded 2-core machine


class Output(NamedTuple):
    returncode: int  # -9: killed, still running after TIMEOUT seconds
    stdout: str
    stderr: str


class Example:
    """One example's process, started in `folder`."""

    def __init__(self, command: list[str], folder: Path):
        self.folder = folder
        env = dict(os.environ, SPARK_LOCAL_DIRS=str(folder / "local"))  # Spark's scratch files: here, not in /tmp
        with open(folder / "stdout.txt", "w") as stdout, open(folder / "stderr.txt", "w") as stderr:
            self.process = subprocess.Popen(command, cwd=folder, env=env, stdout=stdout, stderr=stderr,
                                            stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip

    def output(self) -> Output:
        """Wait for it to end (at most TIMEOUT seconds), then what it printed."""
        try:
            self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.stop()
        return Output(self.process.returncode, (self.folder / "stdout.txt").read_text(errors="replace"),
                      (self.folder / "stderr.txt").read_text(errors="replace"))  # fmt: skip

    def stop(self) -> None:
        """Kill it and whatever it started (its JVM): they are a process group of their own."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def has_spark_sql_shell() -> bool:
    """Whether this environment's Spark has the spark-sql shell (its thrift server's jar): pyspark does; the Spark
    3.5 / Scala 2.13 runtime the compatibility run assembles from the registry does not, which serves none."""
    import pyspark

    return any((Path(pyspark.__file__).parent / "jars").glob("spark-hive-thriftserver_*.jar"))


def start(root: Path) -> dict[str, Example]:
    """Both quickstarts, started in folders under `root`: {"python": ..., "sql": ...}."""
    python_folder, sql_folder = root / "quickstart", root / "sql_quickstart"
    python_folder.mkdir()
    sql_folder.mkdir()
    shutil.copy2(EXAMPLES / "quickstart.py", python_folder)
    conf = {
        "spark.sql.warehouse.dir": str(sql_folder / "warehouse"),
        "spark.hsbloom.system.path": str(sql_folder / "indexes"),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={sql_folder / 'derby'}",
        "spark.ui.enabled": "false",
    }
    script = str(EXAMPLES / "sql_quickstart.sql")
    if has_spark_sql_shell():
        sql = hsbloom.spark_sql_command(master="local[2]", conf=conf) + ["-S", "-f", script]
    else:  # the same statements, printed as the shell prints them, in a session of its own (sql_file.py)
        sql = [sys.executable, str(Path(__file__).resolve().parent / "sql_file.py"), script]
        sql += [f"{key}={value}" for key, value in conf.items() if key != "spark.driver.extraJavaOptions"]
    return {
        "python": Example([sys.executable, "quickstart.py", "--rows", "20000", "--files", "8"], python_folder),
        "sql": Example(sql, sql_folder),
    }
