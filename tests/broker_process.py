"""A real kbroker in a child process, for end-to-end tests: `python -m kbroker serve` on a free loopback port.

Everything is addressed by pid (never by process name), so a test only ever signals the broker it started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


class BrokerFailed(AssertionError):
    """The broker did not come up (or died); the message carries the tail of its log."""


def free_port(host: str = "127.0.0.1") -> int:
    # The kernel picks an unused port; there is a small window before the broker binds it, which is fine on a
    # test machine (a clash shows up as a start failure with the broker's "address in use" in the message).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


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

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Return once the listener accepts connections; raise with the log if the broker exits first."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.is_running():
                raise BrokerFailed(
                    f"broker exited with {self.returncode()} before listening:\n{self.log_tail()}"
                )
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    self.kill()
                    raise BrokerFailed(
                        f"broker not listening on {self.bootstrap} after {timeout} s:\n{self.log_tail()}"
                    ) from None
                time.sleep(0.05)

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
