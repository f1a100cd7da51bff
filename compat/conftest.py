"""compat/: the same scenarios against any broker.

    pytest compat                          # a kbroker started here, and a real Apache Kafka if Docker is reachable
    pytest compat --bootstrap HOST:PORT    # only the broker at HOST:PORT (e.g. an Apache Kafka you run)

Every scenario takes the `target` fixture and uses nothing but `target.bootstrap`, with fresh topic names, so
one broker per session serves them all.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from compat.clients.java import JavaHarness
from compat.target import Target
from tests import conftest as shared
from tests.broker_process import BrokerProcess

# The shared fixtures and the failure-report hook, registered for compat/ too.
broker = shared.broker
broker_factory = shared.broker_factory
java_tools = shared.java_tools
kafka_clients_classpath = shared.kafka_clients_classpath
kcat_path = shared.kcat_path
kp202_python = shared.kp202_python
pytest_runtest_makereport = shared.pytest_runtest_makereport

# The image testcontainers starts: Confluent's packaging of Apache Kafka 3.9 (the version the clients were
# studied against), in KRaft mode.
KAFKA_IMAGE = "confluentinc/cp-kafka:7.9.0"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--bootstrap",
        metavar="HOST:PORT",
        help="run compat/ against this broker only, instead of a kbroker (and Apache Kafka) started here",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "target" in metafunc.fixturenames:
        names = ["external"] if metafunc.config.getoption("--bootstrap") else ["kbroker", "apache-kafka"]
        metafunc.parametrize("target", names, indirect=True, scope="session")


@pytest.fixture(scope="session")
def _kbroker_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    base = tmp_path_factory.mktemp("compat-kbroker")
    process = BrokerProcess(base / "data", log_path=base / "broker.log")
    process.start()
    yield process
    process.stop()


def _docker_unreachable_reason() -> str | None:
    try:
        import docker  # testcontainers' own dependency

        client = docker.from_env(timeout=5)
        client.ping()
        client.close()
    except Exception as error:
        return f"no Docker engine reachable ({type(error).__name__}: {error})"
    return None


@pytest.fixture(scope="session")
def _apache_kafka_session() -> Iterator[str]:
    reason = _docker_unreachable_reason()
    if reason is not None:
        pytest.skip(f"Apache Kafka via testcontainers needs Docker: {reason}")
    from testcontainers.community.kafka import KafkaContainer

    with KafkaContainer(KAFKA_IMAGE).with_kraft() as container:
        yield container.get_bootstrap_server()


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> Target:
    if request.param == "external":
        return Target("external", request.config.getoption("--bootstrap"))
    if request.param == "apache-kafka":
        return Target("apache-kafka", request.getfixturevalue("_apache_kafka_session"))
    process: BrokerProcess = request.getfixturevalue("_kbroker_session")
    return Target("kbroker", process.bootstrap, process)


@pytest.fixture(autouse=True)
def _kbroker_alive(request: pytest.FixtureRequest) -> None:
    """Attach the session kbroker's log to each compat failure, and revive it if an earlier scenario killed it
    (that scenario has failed already; the ones after it should still say something)."""
    if "target" not in request.fixturenames:
        return
    target: Target = request.getfixturevalue("target")
    if target.process is None:
        return
    shared.register_broker(request, target.process)
    if not target.process.is_running():
        target.process.restart()


@pytest.fixture(scope="session")
def java_harness(java_tools: tuple[str, str], kafka_clients_classpath: list[Path]) -> JavaHarness:
    javac, java = java_tools
    build_dir = Path(__file__).resolve().parent / "java" / "build"
    return JavaHarness.compile(javac, java, kafka_clients_classpath, build_dir)
