"""A real kbroker in a child process, for end-to-end tests: `python -m kbroker serve` on a free loopback port.

Everything is addressed by pid (never by process name), so a test only ever signals the broker it started.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from kbroker.config import parse_listener

READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


class BrokerFailed(AssertionError):
    """The broker did not come up (or died); the message carries the tail of its log."""


# Ports for servers a test starts are picked below the kernel's ephemeral range: an outgoing connection takes its
# source port only from that range, so a port picked here stays free until the server binds it, however long its
# start-up takes. (A port from bind(0) lies in the ephemeral range: during a JVM's start a parallel test's client
# connection once took the port an Apache Kafka node was about to bind.) Each pytest-xdist worker draws from a slice
# of its own, and a process never hands out the same port twice, so two servers being started never share one.
_PICKABLE_LOW = 10_000
_handed_out: set[int] = set()


def _pickable_ports() -> range:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            ephemeral_low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 32_768
    high = min(ephemeral_low, 65_536)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    width = (high - _PICKABLE_LOW) // max(count, 1)
    if width < 100:
        return range(0)
    start = _PICKABLE_LOW + (index % count) * width
    return range(start, start + width)


def rss_mib(pid: int) -> float:
    """The resident memory of a process (VmRSS), MiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def free_port(host: str = "127.0.0.1") -> int:
    candidates = [port for port in _pickable_ports() if port not in _handed_out]
    random.shuffle(candidates)
    for port in candidates[:200]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue  # in use (or still in TIME_WAIT): another
        _handed_out.add(port)
        return port
    # No room below the ephemeral range (an unusual ip_local_port_range): let the kernel pick, with the small
    # window before the server binds (a clash shows up as its "address in use" in the start failure's message).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        picked: int = probe.getsockname()[1]
        return picked


class BrokerProcess:
    """One broker: `.start()`, `.kill()` (SIGKILL), `.terminate()` (SIGTERM, then SIGKILL), `.restart()`.

    The port and data directory stay the same across restarts. stdout and stderr go to `log_path`, appended to
    across restarts, so a failure message can show what the broker said.

    `source_dir` runs the broker from another checkout (the benchmarks export one git revision into a temporary
    directory): it becomes the process's working directory and heads PYTHONPATH, so `python -m kbroker` imports
    `kbroker` and `protocol` from there rather than from the editable install. Without it the broker runs from
    whatever the editable install points at, as every test does.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int | None = None,
        host: str = "127.0.0.1",
        overrides: dict[str, str] | None = None,
        log_path: Path | None = None,
        source_dir: Path | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.source_dir = None if source_dir is None else Path(source_dir).resolve()
        if self.source_dir is not None:
            # the broker's working directory is source_dir: a relative data directory would land there
            self.data_dir = self.data_dir.resolve()
        self.host = host
        self.port = port if port is not None else free_port(host)
        self.overrides = dict(overrides or {})
        # more `kbroker serve` arguments, e.g. ["--config", "server.properties"]
        self.extra_args: list[str] = []
        # what runs the command, e.g. ["ip", "netns", "exec", NS] (it must exec the command: the pid is the broker's)
        self.command_prefix: list[str] = []
        self.log_path = (
            log_path if log_path is not None else self.data_dir.with_name(self.data_dir.name + ".log")
        )
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        assert self._process is not None, "broker not started"
        return self._process.pid

    def command(self) -> list[str]:
        command = [
            sys.executable, "-m", "kbroker", "serve",
            "--data-dir", str(self.data_dir),
            "--listeners", f"PLAINTEXT://{self.host}:{self.port}",
        ]  # fmt: skip
        for key, value in self.overrides.items():
            command += ["--override", f"{key}={value}"]
        return command + self.extra_args

    def start(self) -> BrokerProcess:
        assert not self.is_running(), f"broker {self.pid} already running"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            log.write(f"\n=== {' '.join(self.command())}\n".encode())
            log.flush()
            # A new session: Ctrl-C in the terminal running pytest must not reach the broker before teardown does.
            self._process = subprocess.Popen(
                [*self.command_prefix, *self.command()],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=self.source_dir,
                env=self._environment(),
            )
        self.wait_ready()
        return self

    def _environment(self) -> dict[str, str] | None:
        """None (inherit ours) unless the broker runs from `source_dir`."""
        if self.source_dir is None:
            return None
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(self.source_dir), env.get("PYTHONPATH")]))
        return env

    def listener_addresses(self) -> list[tuple[str, int]]:
        """Every host:port of the command's --listeners (subclasses add SASL, TLS... listeners to it)."""
        command = self.command()
        if "--listeners" not in command:
            return [(self.host, self.port)]
        # The broker's own parser; the tests' listeners all carry a security protocol's own name.
        listeners = [parse_listener(text) for text in command[command.index("--listeners") + 1].split(",")]
        addresses = [
            (lst.host if lst.host not in ("", "0.0.0.0") else "127.0.0.1", lst.port) for lst in listeners
        ]
        return [a for a in addresses if a[1] != 0] or [(self.host, self.port)]

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Return once every listener accepts connections and the broker is still running; raise with the log if
        it exits first. Every listener, not only the first: the broker starts listening on all of them at once, so
        a test may use any of them as soon as this returns; and should a port be taken by another server between
        free_port's probe and the broker's bind, the broker exits with "already in use" and this says so, rather
        than the test failing later with a bare "connection refused"."""
        deadline = time.monotonic() + timeout
        pending = self.listener_addresses()
        while True:
            if not self.is_running():
                raise BrokerFailed(
                    f"broker exited with {self.returncode()} before listening:\n{self.log_tail()}"
                )
            try:
                while pending:
                    with socket.create_connection(pending[0], timeout=0.5):
                        pass
                    pending.pop(0)
            except OSError:
                if time.monotonic() > deadline:
                    self.kill()
                    raise BrokerFailed(
                        f"broker not listening on {pending[0][0]}:{pending[0][1]} after {timeout} s:\n"
                        f"{self.log_tail()}"
                    ) from None
                time.sleep(0.05)
                continue
            if self.is_running():
                return

    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def returncode(self) -> int | None:
        return None if self._process is None else self._process.poll()

    def kill(self) -> None:
        """SIGKILL: the crash case. Nothing the broker buffered in user space survives."""
        self._signal_and_wait(signal.SIGKILL, STOP_TIMEOUT_S)

    def terminate(self) -> None:
        """SIGTERM and wait for a clean exit; SIGKILL if it takes longer than STOP_TIMEOUT_S."""
        if not self._signal_and_wait(signal.SIGTERM, STOP_TIMEOUT_S):
            self.kill()

    def restart(self) -> BrokerProcess:
        if self.is_running():
            self.terminate()
        return self.start()

    def stop(self) -> None:
        """Teardown: stop whatever is still running, politely first."""
        if self.is_running():
            self.terminate()

    def _signal_and_wait(self, signum: int, timeout: float) -> bool:
        process = self._process
        if process is None or process.poll() is not None:
            return True
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signum)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, chars: int = 8000) -> str:
        return self.log_text()[-chars:]

    def __enter__(self) -> BrokerProcess:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
