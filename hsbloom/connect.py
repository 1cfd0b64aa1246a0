"""A Spark Connect server with hsbloom: the spark-submit command that starts one, and a local one.

On Spark Connect the client has no JVM: hsbloom's jar and extension must be in the server's. The server is
started by spark-submit, before any client connects, so its flags are fixed then; `connect_server_command`
spells them once (the jar on the driver's classpath and the extension, as `configure` does for a classic
session, and Delta's package, extension and catalog), and `start_connect_server` runs that command as a
child process for local use and tests.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hsbloom.errors import HsbloomSessionError, InvalidArgumentError, UnsupportedSparkError
from hsbloom.launch import check_master_and_conf, hsbloom_flags, spark_home
from hsbloom.session_checks import SERVER_CLASS
from hsbloom.spark_lines import running_line, running_spark_release
DEFAULT_PORT = 15002
HOST = "127.0.0.1"
PORT_CONF = "spark.connect.grpc.binding.port"
ADDRESS_CONF = "spark.connect.grpc.binding.address"
_LOG_TAIL_LINES = 40
# Settings the command has an argument for: given in `conf` as well, one of the two would be ignored.
_ARGUMENT_CONFS = {PORT_CONF: "port", "spark.master": "master"}


def _check_arguments(port: int, master: str, conf: dict[str, str]) -> None:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise InvalidArgumentError(f"port must be an int from 1 to 65535, not {port!r}")
    check_master_and_conf(master, conf)
    for key in conf:
        if key in _ARGUMENT_CONFS:
            raise InvalidArgumentError(
                f"conf sets {key}, which connect_server_command sets from its {_ARGUMENT_CONFS[key]}= argument: "
                f"pass {_ARGUMENT_CONFS[key]}= instead"
            )


def _check_connect_server() -> None:
    """UnsupportedSparkError on a Spark line without the Connect server hsbloom runs in (spark_lines.tsv's
    connect column): Spark 3.5's pyspark ships no Spark Connect server."""
    line = running_line()
    if not line.connect:
        raise UnsupportedSparkError(
            f"hsbloom's Spark Connect server needs Spark 4.0 or later: pyspark {running_spark_release()} "
            f"(Spark {line.name}) ships no Spark Connect server for hsbloom to run in. Use a classic session "
            "(hsbloom.configure) on this Spark, or a Spark 4 server (docs/deploy.md#versions)"
        )


def connect_server_command(
    port: int = DEFAULT_PORT,
    delta: bool = False,
    jar: str | os.PathLike[str] | None = None,
    master: str = "local[*]",
    conf: dict[str, str] | None = None,
) -> list[str]:
    """The argv that starts a Spark Connect server with hsbloom, with pyspark's own bin/spark-submit.

    The server listens on 127.0.0.1:`port` (give `conf={"spark.connect.grpc.binding.address": "0.0.0.0"}`
    to serve other machines). The jar is checked first (HsbloomJarError), as `configure` does. Entries of
    `conf` become `--conf` flags; `spark.sql.extensions`, `spark.driver.extraClassPath` and
    `spark.jars.packages` there are extended, not replaced. `shlex.join` of the result is a shell line.
    """
    conf = dict(conf or {})
    _check_arguments(port, master, conf)
    _check_connect_server()
    head = [str(spark_home() / "bin" / "spark-submit"), "--class", SERVER_CLASS, "--name", "hsbloom Spark Connect server"]
    return head + hsbloom_flags(delta, jar, master, conf, {ADDRESS_CONF: HOST, PORT_CONF: str(port)})


class ConnectServer:
    """A running Spark Connect server, a child process of this one: connect to `.url`, end it with `.stop()`.

    The server runs in its own process group, so `stop` ends spark-submit's JVM and anything it started;
    it is also stopped when this Python process exits, so a forgotten server does not keep its port.
    """

    def __init__(self, process: subprocess.Popen[bytes], port: int, log_path: Path) -> None:
        self.process = process
        self.port = port
        self.log_path = log_path
        self.url = f"sc://{HOST}:{port}"
        self._stopped = False
        atexit.register(self.stop)

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 30) -> None:
        """End the server's process group (SIGTERM, then SIGKILL after `timeout` seconds) and wait for it.

        Once: a second call could signal a new process group that got the same id."""
        if self._stopped:
            return
        self._stopped = True
        atexit.unregister(self.stop)
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=timeout)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # what did not end, and what outlived the JVM (Python workers)
        except ProcessLookupError:
            pass
        self.process.wait()
        _wait_until_gone(self.process.pid)

    def log_tail(self, lines: int = _LOG_TAIL_LINES) -> str:
        """The log's last lines, without Spark's INFO lines (a failing server's last ones are its shutdown's)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"(no log at {self.log_path}: {exc})"
        return "\n".join([line for line in text.splitlines() if " INFO " not in line][-lines:])

    def __enter__(self) -> ConnectServer:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running() else f"exited {self.process.returncode}"
        return f"ConnectServer(url={self.url!r}, pid={self.pid}, {state}, log_path='{self.log_path}')"


def _wait_until_gone(group: int, limit: float = 10) -> None:
    """Wait (at most `limit` seconds) until no process of the group is left: the killed ones that were not this
    process's children (spark-submit's launcher) exist until init reaps them."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


def _port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1)
        return probe.connect_ex((HOST, port)) == 0


def _grpc_ready(port: int, wait: float) -> bool:
    """Does a gRPC server answer on the port (the HTTP/2 handshake a Connect client makes first)?"""
    import grpc

    channel = grpc.insecure_channel(f"{HOST}:{port}")
    try:
        grpc.channel_ready_future(channel).result(timeout=wait)
        return True
    except grpc.FutureTimeoutError:
        return False
    finally:
        channel.close()


def start_connect_server(
    port: int = DEFAULT_PORT,
    delta: bool = False,
    jar: str | os.PathLike[str] | None = None,
    master: str = "local[*]",
    conf: dict[str, str] | None = None,
    timeout: float = 120,
    log_path: str | os.PathLike[str] | None = None,
) -> ConnectServer:
    """Start `connect_server_command(...)` as a child process and return once a Connect client can connect.

    Its output goes to `log_path` (default: a new file in the temporary directory). Raises HsbloomSessionError,
    with the tail of the log, when the port is already taken, or the server exits or does not answer within
    `timeout` seconds (it is stopped then). Needs the Connect client's packages: pip install 'hsbloom[connect]'.
    """
    argv = connect_server_command(port=port, delta=delta, jar=jar, master=master, conf=conf)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise InvalidArgumentError(f"timeout must be a positive number of seconds, not {timeout!r}")
    try:
        import grpc  # noqa: F401  (the readiness probe's, checked before a server is started)
    except ImportError as exc:
        raise HsbloomSessionError(
            "start_connect_server needs Spark Connect's client packages (grpcio and others): "
            "pip install 'hsbloom[connect]'"
        ) from exc
    if _port_taken(port):
        raise HsbloomSessionError(
            f"port {port} on {HOST} is already in use (another Spark Connect server?); "
            "pass another port= or stop what listens there"
        )
    if log_path is None:
        handle, name = tempfile.mkstemp(prefix=f"hsbloom-connect-{port}-", suffix=".log")
        os.close(handle)
        log_path = name
    log = Path(log_path)
    env = dict(os.environ, SPARK_HOME=str(spark_home()))  # the Spark the command names, not another one's
    env.setdefault("PYSPARK_PYTHON", sys.executable)  # Python UDFs run this interpreter, as configure() does
    with open(log, "wb") as out:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    server = ConnectServer(process, port, log)
    deadline = time.monotonic() + timeout
    while True:
        if not server.running():
            raise HsbloomSessionError(
                f"the Spark Connect server (pid {process.pid}) exited with code {process.returncode} before it "
                f"answered on port {port}; "
                f"the end of its log ({log}):\n{server.log_tail()}"
            )
        if _grpc_ready(port, wait=min(1.0, max(0.1, deadline - time.monotonic()))) and server.running():
            return server
        if time.monotonic() >= deadline:
            server.stop()
            raise HsbloomSessionError(
                f"the Spark Connect server (pid {process.pid}) did not answer on port {port} within {timeout:g} s "
                "(stopped it; raise "
                f"timeout= on a slow or busy machine); the end of its log ({log}):\n{server.log_tail()}"
            )
