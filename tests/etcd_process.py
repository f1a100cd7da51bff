"""A private etcd server per test: free ports on 127.0.0.1, a temporary data dir, stopped by its pid.

Use in a test module::

    @pytest.fixture
    def etcd() -> Iterator[EtcdProcess]:
        with running_etcd() as server:
            yield server
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.broker_process import free_port

ETCD_BINARY = shutil.which("etcd")


class EtcdProcess:
    """One etcd member. ``url`` is what kbroker's ``--metadata`` takes; ``endpoint`` is the HTTP base."""

    def __init__(
        self, data_dir: Path, *, host: str = "127.0.0.1", command_prefix: list[str] | None = None
    ) -> None:
        """`host` and `command_prefix` place it elsewhere, e.g. in a network namespace of its own (tests/faults/):
        its ports are then fixed, as the namespace is its own."""
        self.data_dir = data_dir
        self.host = host
        self.command_prefix = list(command_prefix or [])
        self.client_port = free_port() if host == "127.0.0.1" else 2379
        self.peer_port = free_port() if host == "127.0.0.1" else 2380
        self.endpoint = f"http://{host}:{self.client_port}"
        self.url = f"etcd://{host}:{self.client_port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir / "etcd.log"

    def start(self, timeout: float = 20.0) -> None:
        assert ETCD_BINARY is not None
        peer = f"http://{self.host}:{self.peer_port}"
        args = [
            *self.command_prefix,
            ETCD_BINARY,
            "--name", "kbroker-test",
            "--data-dir", str(self.data_dir / "data"),
            "--listen-client-urls", self.endpoint,
            "--advertise-client-urls", self.endpoint,
            "--listen-peer-urls", peer,
            "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"kbroker-test={peer}",
            "--initial-cluster-state", "new",
            "--log-level", "warn",
        ]  # fmt: skip
        log_file = self.log_path.open("ab")
        try:
            self.process = subprocess.Popen(
                args, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        finally:
            log_file.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"etcd exited with {self.process.returncode}: {self.log_tail()}")
            if self.healthy():
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"etcd did not become healthy in {timeout}s: {self.log_tail()}")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.endpoint + "/health", timeout=1) as response:
                return b'"true"' in response.read()
        except OSError:
            return False

    def pause(self) -> None:
        """SIGSTOP: etcd stops answering (and so stops refreshing leases) until resume()."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGCONT)  # a paused etcd cannot handle SIGTERM
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def log_tail(self, size: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-size:]
        except OSError:
            return ""


@contextmanager
def running_etcd() -> Iterator[EtcdProcess]:
    """Start a private etcd (skipping the test if etcd is not installed) and stop it on exit."""
    if ETCD_BINARY is None:
        # scripts/test installs etcd-server: under CI its absence is a failure, not a reason to skip
        if os.environ.get("CI"):
            pytest.fail("etcd is not installed (scripts/test must have installed etcd-server)")
        pytest.skip("etcd is not installed (apt-get install etcd-server; scripts/test installs it)")
    with tempfile.TemporaryDirectory(prefix="kbroker-etcd-") as tmp:
        server = EtcdProcess(Path(tmp))
        server.start()
        try:
            yield server
        finally:
            server.stop()
