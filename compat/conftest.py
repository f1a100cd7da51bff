"""compat/: the same scenarios against any broker, Apache Kafka being the reference.

    pytest compat                          # a kbroker, Apache Kafka 3.9.2 and 4.3.1, each started here
    pytest compat --kafka 3.9.2            # a kbroker and the Apache Kafka releases named (`none`: kbroker only)
    pytest compat --kafka-docker           # also Apache Kafka 3.9 in Docker (testcontainers), where Docker runs
    pytest compat --bootstrap HOST:PORT    # only the broker at HOST:PORT (e.g. an Apache Kafka you run)

Apache Kafka comes from Maven Central through compat/kafka/ (resolved once into ~/.cache, started as a single
KRaft node on free loopback ports); scripts/test resolves the default releases, and under CI a missing java or
mvn fails the Kafka targets instead of skipping them. Each target is started once, when its first scenario
runs, and stopped after its last (pytest groups the scenarios by target).

Every scenario takes the `target` fixture and uses nothing but `target.bootstrap`, with fresh topic names, so
one broker per target serves them all. A scenario marked `kbroker_cluster` also runs against a 3-node kbroker
cluster (tests/cluster_fixture.py: a private etcd and three nodes), creating its topics at replication factor 3
(`target.create_topic`); only the Spark scenarios do, to keep CI short. The scenarios of Kafka's CLI tools
(test_tools_*.py) also take `kafka_tools`, the tools of a release: an Apache Kafka target is paired with its own
release, kbroker with each release (see tool_pairs). A scenario marked `only_targets(name, ...)` runs against those
of the targets only (and an external one).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from compat.clients.franz import FranzProgram, GroupMember
from compat.clients.java import JavaHarness
from compat.go import build as go_build
from compat.kafka import DEFAULT_VERSIONS, KAFKA_3
from compat.kafka.install import InstallFailed, install, is_installed
from compat.kafka.process import KafkaProcess
from compat.kafka.tools import KafkaTools
from compat.sibling import NoSibling, Sibling, SiblingBroker

# One SparkSession for every module that uses Spark (defined here, not per module: see compat/spark/fixtures.py).
from compat.spark.fixtures import spark, spark_connector_jars, spark_jvm  # noqa: F401
from compat.target import Target
from tests import conftest as shared
from tests.broker_process import BrokerProcess
from tests.cluster_fixture import running_cluster

# The shared fixtures and the failure-report hook, registered for compat/ too.
broker = shared.broker
broker_factory = shared.broker_factory
java_tools = shared.java_tools
kafka_clients_classpath = shared.kafka_clients_classpath
kcat_path = shared.kcat_path
kp202_python = shared.kp202_python
pytest_runtest_makereport = shared.pytest_runtest_makereport

# The image testcontainers starts with --kafka-docker: Confluent's packaging of Apache Kafka 3.9, in KRaft mode.
KAFKA_IMAGE = "confluentinc/cp-kafka:7.9.0"
KAFKA_DOCKER = "kafka-docker"
KAFKA_PREFIX = "kafka-"
KBROKER_CLUSTER = "kbroker-cluster"
CLUSTER_SIZE = 3
# Retention runs every half second on the brokers started here (Kafka's default is five minutes), so that a scenario
# can watch it delete a segment (the Spark source's failOnDataLoss); topics keep Kafka's default retention.
TARGET_OVERRIDES = {"log.retention.check.interval.ms": "500"}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--bootstrap",
        metavar="HOST:PORT",
        help="run compat/ against this broker only, instead of the brokers started here",
    )
    parser.addoption(
        "--kafka",
        metavar="VERSIONS",
        default=",".join(DEFAULT_VERSIONS),
        help="the Apache Kafka releases (from Maven Central) to run compat/ against, comma-separated, or `none` "
        "(default: %(default)s)",
    )
    parser.addoption(
        "--kafka-docker",
        action="store_true",
        help=f"also run compat/ against {KAFKA_IMAGE} through testcontainers (needs a Docker engine)",
    )


def target_names(config: pytest.Config) -> list[str]:
    if config.getoption("--bootstrap"):
        return ["external"]
    versions = config.getoption("--kafka")
    names = ["kbroker"]
    if versions != "none":
        names += [KAFKA_PREFIX + version.strip() for version in versions.split(",") if version.strip()]
    if config.getoption("--kafka-docker"):
        names.append(KAFKA_DOCKER)
    return names


def tool_pairs(config: pytest.Config, targets: list[str]) -> list[tuple[str, str]]:
    """(target, tools release) for the scenarios of Kafka's CLI tools: an Apache Kafka target runs its own
    release's tools (the reference outcome); kbroker (or an external broker) runs the tools of every release the
    Kafka targets run (all the default ones with `--kafka none`), so each outcome has its reference."""
    versions = config.getoption("--kafka")
    releases = [v.strip() for v in versions.split(",") if v.strip()] if versions != "none" else []
    pairs: list[tuple[str, str]] = []
    for name in targets:
        if name.startswith(KAFKA_PREFIX):
            pairs.append((name, name.removeprefix(KAFKA_PREFIX)))
        elif name == KAFKA_DOCKER:
            pairs.append((name, KAFKA_3))
        else:
            pairs += [(name, release) for release in releases or DEFAULT_VERSIONS]
    return pairs


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "target" not in metafunc.fixturenames:
        return
    targets = target_names(metafunc.config)
    if "kbroker" in targets and metafunc.definition.get_closest_marker("kbroker_cluster"):
        targets.insert(targets.index("kbroker") + 1, KBROKER_CLUSTER)
    only = metafunc.definition.get_closest_marker("only_targets")
    if only is not None:  # an external broker (--bootstrap) is always kept: it is all the user asked for
        targets = [name for name in targets if name in only.args or name == "external"]
    if "kafka_tools" in metafunc.fixturenames:
        pairs = tool_pairs(metafunc.config, targets)
        metafunc.parametrize(
            ("target", "kafka_tools"),
            pairs,
            indirect=True,
            scope="session",
            ids=[f"{target}-tools-{release}" for target, release in pairs],
        )
    else:
        metafunc.parametrize("target", targets, indirect=True, scope="session")


@pytest.fixture(scope="session")
def _kbroker_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    base = tmp_path_factory.mktemp("compat-kbroker")
    # As compat/kafka/process.py sets it for the Apache Kafka targets: a new group rebalances at once.
    overrides = {"group.initial.rebalance.delay.ms": "0", **TARGET_OVERRIDES}
    process = BrokerProcess(base / "data", log_path=base / "broker.log", overrides=overrides)
    process.start()
    yield process
    process.stop()


def require_kafka(version: str) -> Path:
    """The libs directory of Apache Kafka `version`, resolved first if need be; skips (fails under CI) without
    java or, for a release not resolved yet, mvn."""
    if shutil.which("java") is None:
        shared.missing_tool(
            f"java is not installed (apt package openjdk-17-jdk-headless), needed by Kafka {version}"
        )
    if not is_installed(version) and shutil.which("mvn") is None:
        shared.missing_tool(f"mvn is not installed (apt package maven), needed to resolve Kafka {version}")
    try:
        return install(version)
    except InstallFailed as error:
        pytest.fail(str(error))


def start_kafka(version: str) -> KafkaProcess:
    """A single-node Apache Kafka `version` (compat/kafka/).

    Its directory (config, data, log) is not under pytest's basetemp: pytest keeps only the last three of those,
    and every pytest run by the same user on this machine counts."""
    require_kafka(version)
    base = Path(tempfile.mkdtemp(prefix=f"kbroker-compat-kafka-{version}-"))
    return KafkaProcess(version, base, overrides=TARGET_OVERRIDES).start()


@pytest.fixture(scope="session")
def kafka_tools(request: pytest.FixtureRequest) -> KafkaTools:
    """The CLI tools of the Apache Kafka release paired with the target (see tool_pairs)."""
    version: str = request.param
    return KafkaTools(version, require_kafka(version))


@pytest.fixture(scope="session")
def kafka_release() -> Callable[[str], Path]:
    """require_kafka, for scenarios that start their own Apache Kafka (e.g. a KafkaCluster)."""
    return require_kafka


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
def _kafka_docker_session() -> Iterator[str]:
    reason = _docker_unreachable_reason()
    if reason is not None:
        pytest.skip(f"Apache Kafka via testcontainers needs Docker: {reason}")
    from testcontainers.community.kafka import KafkaContainer

    with KafkaContainer(KAFKA_IMAGE).with_kraft() as container:
        yield container.get_bootstrap_server()


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    """The broker of this parametrization. An Apache Kafka lives as long as this fixture's value: pytest sets up
    a session-scoped parameter once and tears it down when it moves on to the next, so only one Kafka runs at a
    time. Its directory (config, data, log) is removed afterwards unless a scenario failed meanwhile; failure
    reports name it."""
    name: str = request.param
    if name == "external":
        yield Target("external", request.config.getoption("--bootstrap"))
    elif name == KAFKA_DOCKER:
        yield Target(KAFKA_DOCKER, request.getfixturevalue("_kafka_docker_session"))
    elif name.startswith(KAFKA_PREFIX):
        version = name.removeprefix(KAFKA_PREFIX)
        failed_before = request.session.testsfailed
        _start_sibling_early(request, name, version)
        try:
            kafka = start_kafka(version)
        except BaseException:
            _stop_early_sibling(request, name)
            raise
        try:
            yield Target(name, kafka.bootstrap, kafka)
        finally:
            kafka.stop()
            _stop_early_sibling(request, name)
            if request.session.testsfailed == failed_before:
                shutil.rmtree(kafka.base_dir, ignore_errors=True)
    elif name == KBROKER_CLUSTER:
        root = request.getfixturevalue("tmp_path_factory").mktemp("compat-kbroker-cluster")
        with running_cluster(root, CLUSTER_SIZE, overrides=TARGET_OVERRIDES) as cluster:
            nodes = tuple(cluster.nodes.values())
            yield Target(name, cluster.bootstrap, replication_factor=CLUSTER_SIZE, nodes=nodes)
    else:
        process: BrokerProcess = request.getfixturevalue("_kbroker_session")
        yield Target("kbroker", process.bootstrap, process)


@pytest.fixture(autouse=True)
def _target_alive(request: pytest.FixtureRequest) -> None:
    """Attach the log of the broker started here (kbroker or Apache Kafka) to each compat failure, and revive it
    if an earlier scenario killed it (that scenario has failed already; the ones after it should still say
    something)."""
    if "target" not in request.fixturenames:
        return
    target: Target = request.getfixturevalue("target")
    for process in (target.process,) if target.process is not None else target.nodes:
        shared.register_broker(request, process)
        if not process.is_running():
            process.restart()


@pytest.fixture(scope="session")
def java_harness(java_tools: tuple[str, str], kafka_clients_classpath: list[Path]) -> JavaHarness:
    javac, java = java_tools
    build_dir = Path(__file__).resolve().parent / "java" / "build"
    return JavaHarness.compile(javac, java, kafka_clients_classpath, build_dir)


def go_program(name: str) -> Path:
    """A Go program of compat/go/ built (once per source, into ~/.cache/kbroker/go) by the machine's Go;
    scripts/test builds them first, so here this usually finds the binary."""
    try:
        go = go_build.find_go()
    except go_build.BuildFailed as error:
        shared.missing_tool(str(error))
    try:
        return go_build.build(name, go)
    except go_build.BuildFailed as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def franz_program() -> FranzProgram:
    return FranzProgram(go_program("franz"))


@pytest.fixture(scope="session")
def rpk_path() -> Path:
    return go_program("rpk")


@pytest.fixture
def members() -> Iterator[list[GroupMember]]:
    """The franz-go group members a test starts (FranzProgram.member); any still running at the end are killed
    by pid."""
    started: list[GroupMember] = []
    yield started
    for member in started:
        member.kill()


_EARLY_SIBLINGS = pytest.StashKey[dict[str, tuple[SiblingBroker, Future[Sibling]]]]()


def _start_sibling_early(request: pytest.FixtureRequest, target_name: str, kafka_version: str) -> None:
    """If a selected scenario of this target asks for `sibling`, start it now on a thread, beside the target."""
    wanted = any(
        "sibling" in getattr(item, "fixturenames", ())
        and getattr(getattr(item, "callspec", None), "params", {}).get("target") == target_name
        for item in request.session.items
    )
    if wanted:
        broker = SiblingBroker(target_name, kafka_version)
        starter = ThreadPoolExecutor(1, thread_name_prefix="sibling")
        future = starter.submit(broker.start)
        starter.shutdown(wait=False)  # its thread ends once the start is done
        request.config.stash.setdefault(_EARLY_SIBLINGS, {})[target_name] = (broker, future)


def _stop_early_sibling(request: pytest.FixtureRequest, target_name: str) -> None:
    """Stop a sibling started early that no scenario took (e.g. the session was interrupted)."""
    early = request.config.stash.get(_EARLY_SIBLINGS, {}).pop(target_name, None)
    if early is not None:
        early[1].exception()  # let its start finish, failed or not, before stopping it
        early[0].stop()


@pytest.fixture(scope="session")
def _sibling_session(request: pytest.FixtureRequest, target: Target) -> Iterator[Sibling]:
    early = request.config.stash.get(_EARLY_SIBLINGS, {}).pop(target.name, None)
    failed_before = request.session.testsfailed
    if early is not None:
        broker, future = early
    else:
        try:
            broker = SiblingBroker.of(target)
        except NoSibling as error:
            pytest.skip(f"no sibling broker: {error}")
    try:
        sibling = future.result() if early is not None else broker.start()
        yield sibling
    finally:
        broker.stop()
    if request.session.testsfailed == failed_before:
        shutil.rmtree(broker.base_dir, ignore_errors=True)


@pytest.fixture
def sibling(request: pytest.FixtureRequest, _sibling_session: Sibling) -> Sibling:
    """compat/sibling.py: one more broker of the target's kind, auto-creation off, reached through a FaultProxy;
    started when a scenario first asks for it, stopped with its target. Failure reports carry its log."""
    assert _sibling_session.target.process is not None
    shared.register_broker(request, _sibling_session.target.process)
    return _sibling_session
