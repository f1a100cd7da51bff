"""Starting and stopping as a new user meets it: a second broker on a used data directory, a taken port, a cluster
node stopped while it waits for etcd, a node id registered twice, what the start-up log says, and `scripts/serve`
started three times at once.

Every process is started and stopped by its pid.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from kbroker.app import open_broker
from tests.broker_process import BrokerProcess, free_port
from tests.etcd_process import running_etcd
from tests.inprocess import broker_config

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parent.parent


def serve(data_dir: Path, *args: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "kbroker", "serve", "--data-dir", str(data_dir), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def wait_for_text(path: Path, text: str, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while text not in path.read_text(errors="replace"):
        assert process.poll() is None, (
            f"exited with {process.returncode} before saying {text!r}:\n{path.read_text()}"
        )
        assert time.monotonic() < deadline, f"no {text!r} after {timeout} s:\n{path.read_text()}"
        time.sleep(0.05)


def test_a_second_broker_on_the_same_data_directory_refuses_to_start(
    broker: BrokerProcess, tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kbroker", "serve", "--data-dir", str(broker.data_dir),
         "--listeners", f"PLAINTEXT://127.0.0.1:{free_port()}"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"kbroker: data directory {broker.data_dir} is in use by another broker (pid {broker.pid})"
    ]
    # The first broker was not disturbed.
    assert broker.is_running()
    with socket.create_connection((broker.host, broker.port), timeout=5):
        pass


def test_the_lock_goes_with_the_process_even_after_kill_9(broker: BrokerProcess) -> None:
    broker.kill()
    broker.start()
    assert broker.is_running()


def test_a_taken_port_is_said_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "kbroker", "serve", "--data-dir", str(tmp_path / "data"),
             "--listeners", f"PLAINTEXT://127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [f"kbroker: PLAINTEXT://127.0.0.1:{port} is already in use"]
    assert "Traceback" not in result.stdout + result.stderr


def test_a_port_taken_between_bind_and_listen_is_said_in_one_line(tmp_path: Path) -> None:
    """kbroker binds its ports first and listens only once ready; SO_REUSEADDR lets another process (a second
    broker started at once on the same port) bind the port in between. Whoever listens first has it: here the
    rival, so kbroker's listen fails, and it must say so as for a port taken before its bind."""
    port = free_port()
    with socket.socket() as rival:
        rival.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        rival.bind(("127.0.0.1", port))
        process = subprocess.Popen(
            [sys.executable, "-m", "kbroker", "serve", "--data-dir", str(tmp_path / "data"),
             "--listeners", f"PLAINTEXT://127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        try:
            assert process.stderr is not None
            # The first log line comes from creating __consumer_offsets, which open_broker does after binding the
            # listeners: the broker holds the port now and has not listened yet. Held still, it lets the rival
            # listen first.
            first = process.stderr.readline()
            os.kill(process.pid, signal.SIGSTOP)
            assert "created topic __consumer_offsets" in first, first
            rival.listen()
            os.kill(process.pid, signal.SIGCONT)
            _, log = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(10)
    log = first + log
    assert process.returncode == 1, log
    # The log lines of the start-up, then the reason in one line.
    assert log.strip().splitlines()[-1] == f"kbroker: PLAINTEXT://127.0.0.1:{port} is already in use", log
    # It failed at the listen, at the end of start-up, not at the bind.
    assert "coordinating 50 of 50 partitions of __consumer_offsets" in log
    assert "Traceback" not in log


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_cluster_node_waiting_for_etcd_stops_at_once(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]], signum: int
) -> None:
    nobody = free_port()  # no etcd listens here
    log = tmp_path / "node.log"
    node = serve(
        tmp_path / "data",
        "--node-id", "1",
        "--metadata", f"etcd://127.0.0.1:{nobody}",
        "--listeners", f"PLAINTEXT://127.0.0.1:{free_port()}",
        log=log,
    )  # fmt: skip
    processes.append(node)
    wait_for_text(log, "cannot read etcd yet", node)
    started = time.monotonic()
    os.kill(node.pid, signum)
    assert node.wait(10) == 0
    assert time.monotonic() - started < 5
    text = log.read_text()
    assert "broker stopped" in text
    assert "Traceback" not in text
    # Said once, not at every retry.
    assert text.count("cannot read etcd yet") == 1


def test_the_start_up_log_says_what_changed_once(broker: BrokerProcess) -> None:
    """A fresh single node creates __consumer_offsets (50 partitions) and leads them all: a few lines, not one per
    partition."""
    lines = [line for line in broker.log_text().splitlines() if " INFO " in line or " WARNING " in line]
    assert sum("__consumer_offsets" in line for line in lines) <= 4, "\n".join(lines)
    assert len(lines) <= 10, "\n".join(lines)
    assert not any(" ERROR " in line or "Traceback" in line for line in broker.log_text().splitlines())


_PLANS_AFTER_START = """
import sys
from pathlib import Path

import trio

from kbroker.handlers.registry import HANDLERS
from protocol import codec
from protocol.messages import REQUESTS, RESPONSES
from tests.inprocess import running_broker


async def main() -> None:
    assert not codec._message_plans, "plans compiled before the broker started"
    async with running_broker(Path(sys.argv[1])):
        served = [
            (cls, version)
            for h in HANDLERS.values()
            for version in range(h.min_version, h.max_version + 1)
            for cls in (REQUESTS[h.api_key], RESPONSES[h.api_key])
        ]
        print(len(served), [f"{cls.__name__} v{v}" for cls, v in served if (cls, v) not in codec._message_plans])


trio.run(main)
"""


def test_a_started_broker_has_compiled_the_codec_of_every_request_it_serves(tmp_path: Path) -> None:
    """The first request of each kind after a start must not pay for compiling its codec plans: that made the first
    ApiVersions about 1 ms slower than the next, which lost a librdkafka admin client a race after a restart
    (docs/kafka-differences.md). A fresh interpreter, as this one has compiled plans of its own by now."""
    out = subprocess.run(
        [sys.executable, "-c", _PLANS_AFTER_START, str(tmp_path / "data")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    count, missing = out.split(" ", 1)
    assert int(count) > 300
    assert missing.strip() == "[]"


@pytest.mark.trio
async def test_the_hook_before_listening_runs_after_start_up_and_before_any_connection_is_accepted(
    tmp_path: Path,
) -> None:
    """`kbroker serve` collects and freezes start-up's objects there (a full collection of 15-45 ms, which the first
    request used to wait for when it ran after the listener had started)."""
    refused: list[bool] = []
    async with open_broker(broker_config(tmp_path / "data")) as broker, trio.open_nursery() as nursery:

        def before_listening() -> None:
            try:
                socket.create_connection(("127.0.0.1", broker.port), timeout=5).close()
            except ConnectionRefusedError:
                refused.append(True)
            else:
                refused.append(False)

        await nursery.start(functools.partial(broker.run, before_listening=before_listening))
        assert refused == [True]
        socket.create_connection(("127.0.0.1", broker.port), timeout=5).close()
        nursery.cancel_scope.cancel()


@pytest.mark.timeout(600)
def test_three_scripts_serve_started_at_once_share_one_venv_set_up(tmp_path: Path) -> None:
    """The README's three-node block on a fresh clone: three `scripts/serve` racing to create the venv. A lock makes
    the set-up happen once; every one of them gets a working broker."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=120)
    # The working tree's scripts and package files (the commit under test may not be the clone's HEAD yet).
    for name in ("scripts", "kbroker", "protocol"):
        shutil.rmtree(clone / name)
        shutil.copytree(ROOT / name, clone / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", clone / "pyproject.toml")
    runs = [
        subprocess.Popen(
            [str(clone / "scripts" / "serve"), "--help"],
            cwd=clone,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        for _ in range(3)
    ]
    try:
        outputs = [run.communicate(timeout=540)[0].decode(errors="replace") for run in runs]
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
    for run, output in zip(runs, outputs, strict=True):
        assert run.returncode == 0, output
        assert "broker configs" in output
    assert sum("==> creating" in output for output in outputs) == 1, outputs


def test_a_second_node_with_a_registered_node_id_refuses_in_one_line(tmp_path: Path) -> None:
    with running_etcd() as etcd:
        first = BrokerProcess(tmp_path / "one", overrides={"broker.session.timeout.ms": "1000"})
        first.extra_args = ["--node-id", "1", "--metadata", etcd.url]
        first.start()
        try:
            result = subprocess.run(
                [sys.executable, "-m", "kbroker", "serve", "--data-dir", str(tmp_path / "two"),
                 "--listeners", f"PLAINTEXT://127.0.0.1:{free_port()}", "--node-id", "1", "--metadata", etcd.url,
                 "--override", "broker.session.timeout.ms=1000"],
                capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
        finally:
            first.stop()
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "kbroker: broker 1 is registered by another live process"
    assert "Traceback" not in result.stderr
