"""Shared fixtures: real broker processes and the paths of the stock-client tools.

compat/conftest.py re-exports these, so the same fixtures serve tests/ and compat/.

Tool fixtures skip with the precise reason when a tool is missing on a developer's machine, but fail under CI
(CI=true), where scripts/test has installed every one of them: a missing tool there is a broken set-up, not a
reason to pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from hypothesis import HealthCheck, settings

# Property tests check what is generated, not how fast: the 2-core CI machine runs brokers beside them, so no
# per-example deadline; under CI the examples are derandomized so that a run is repeatable.
settings.register_profile("kbroker", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("kbroker-ci", parent=settings.get_profile("kbroker"), derandomize=True)
settings.load_profile("kbroker-ci" if os.environ.get("CI") else "kbroker")

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    # `tests.` and `compat.` modules import each other by package name whatever directory pytest started in.
    sys.path.insert(0, str(ROOT))

from tests.broker_process import BrokerProcess  # noqa: E402

KP202_PYTHON = ROOT / ".venv-kp202" / "bin" / "python"
KAFKA_CLIENTS_CACHE = ROOT / ".cache" / "kafka-clients"
# Debian's jars (apt packages libslf4j-java libsnappy-java libzstd-jni-java liblz4-java): what kafka-clients needs
# beside itself. slf4j-simple makes the clients' warnings visible on stderr.
DEBIAN_JARS = {
    "slf4j-api.jar": "libslf4j-java",
    "slf4j-simple.jar": "libslf4j-java",
    "snappy-java.jar": "libsnappy-java",
    "zstd-jni.jar": "libzstd-jni-java",
    "lz4-java.jar": "liblz4-java",
}

BrokerFactory = Callable[..., BrokerProcess]
_BROKERS_KEY = pytest.StashKey[list[BrokerProcess]]()


def missing_tool(reason: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (under CI scripts/test must have installed it)")
    pytest.skip(f"{reason}; scripts/test installs it")


def register_broker(request: pytest.FixtureRequest, broker: BrokerProcess) -> None:
    """Attach a broker to the running test, so a failure report carries the broker's log."""
    node = request.node
    node.stash.setdefault(_BROKERS_KEY, []).append(broker)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.failed:
        for broker in item.stash.get(_BROKERS_KEY, []):
            report.sections.append((f"broker {broker.bootstrap} log (tail)", broker.log_tail()))
    return report


@pytest.fixture
def broker_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BrokerFactory]:
    """Start brokers on demand: broker_factory(overrides={"num.partitions": "3"}). All stop at teardown."""
    started: list[BrokerProcess] = []

    def start(*, overrides: dict[str, str] | None = None, name: str | None = None) -> BrokerProcess:
        name = name or f"broker{len(started)}"
        broker = BrokerProcess(tmp_path / name, overrides=overrides, log_path=tmp_path / f"{name}.log")
        started.append(broker)
        register_broker(request, broker)
        return broker.start()

    yield start
    for broker in started:
        broker.stop()


@pytest.fixture
def broker(broker_factory: BrokerFactory) -> BrokerProcess:
    """A fresh broker with default settings and an empty data directory."""
    return broker_factory()


@pytest.fixture(scope="session")
def kcat_path() -> Path:
    path = shutil.which("kcat")
    if path is None:
        missing_tool("kcat is not installed (apt package kcat)")
    return Path(path)


@pytest.fixture(scope="session")
def kp202_python() -> Path:
    """The Python of the kafka-python 2.0.2 venv."""
    if not KP202_PYTHON.exists():
        missing_tool(f"{KP202_PYTHON} does not exist (the kafka-python 2.0.2 venv)")
    result = subprocess.run(
        [str(KP202_PYTHON), "-c", "import kafka; print(kafka.__version__)"], capture_output=True, text=True
    )
    if result.stdout.strip() != "2.0.2":
        missing_tool(
            f"{KP202_PYTHON} has no kafka-python 2.0.2: {result.stdout.strip()} {result.stderr[-500:]}"
        )
    return KP202_PYTHON


@pytest.fixture(scope="session")
def java_tools() -> tuple[str, str]:
    """(javac, java) from the JDK."""
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        missing_tool("javac/java are not installed (apt package openjdk-17-jdk-headless)")
    return javac, java


@pytest.fixture(scope="session")
def kafka_clients_classpath() -> list[Path]:
    """The Java client 3.9 (a thin jar built from a PyPI wheel) plus the Debian jars it needs."""
    jars = []
    for name, package in DEBIAN_JARS.items():
        jar = Path("/usr/share/java") / name
        if not jar.exists():
            missing_tool(f"{jar} is missing (apt package {package})")
        jars.append(jar)
    # Built by scripts/test; built here too (it needs PyPI) so `pytest compat` works on its own.
    build = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_kafka_clients_jar.py"), str(KAFKA_CLIENTS_CACHE)],
        capture_output=True,
        text=True,
    )
    if build.returncode != 0:
        pytest.fail(f"could not build the kafka-clients jar:\n{build.stderr[-3000:]}")
    return [Path(build.stdout.strip()), *jars]
