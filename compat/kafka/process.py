"""Apache Kafka in child processes, KRaft only: `KafkaProcess` is one node, `KafkaCluster` several.

Every node runs broker and controller in one JVM (`process.roles=broker,controller`) with a static quorum
(`controller.quorum.voters`), on free ports of 127.0.0.1: a single node is its own quorum; a cluster of three has
three voters. Starting a node writes its server.properties, formats its storage once (`kafka-storage format`) and
runs `java -cp 'libs/*' kafka.Kafka server.properties` in a new session; it is ready when its listener answers
ApiVersions and its Metadata lists every broker of the cluster (a KRaft broker answers only once it has caught up
with the metadata log and been unfenced). Stopping is by pid, SIGTERM then SIGKILL, as for a kbroker: KafkaProcess
is a BrokerProcess whose command is a JVM. The JVM's output (Kafka logs to stderr at INFO) goes to one log file
per node, base_dir/kafka.log, which outlives the process (compat/ keeps the directory when a scenario failed); its
tail and path are in every failure message.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from compat.kafka import major
from compat.kafka.install import install
from protocol.messages.api_versions_request import ApiVersionsRequest
from protocol.messages.metadata_request import MetadataRequest
from tests.broker_process import BrokerFailed, BrokerProcess, free_port
from tests.test_groups_support import Wire

HERE = Path(__file__).resolve().parent
SERVER_MAIN = "kafka.Kafka"
# `kafka-storage` is this class of kafka_2.13 in 3.9 and in 4.3 alike (kafka-storage.sh runs it).
STORAGE_TOOL_MAIN = "kafka.tools.StorageTool"

# A JVM start, metadata log replay and unfencing on 2 busy cores: seconds normally, a minute or two when loaded.
READY_TIMEOUT_S = 120.0
FORMAT_TIMEOUT_S = 120.0
# One probe of a listener that accepted the connection but does not answer requests yet.
PROBE_TIMEOUT_S = 2.0

# The broker: a small heap (the machine has 2 cores and runs clients beside it) and the GC settings of Kafka's own
# kafka-run-class.sh.
SERVER_JVM_OPTIONS = (
    "-Xmx512m",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-Djava.awt.headless=true",
)
# The storage tool and the other CLI tools run for seconds: the quickest JVM start there is.
TOOL_JVM_OPTIONS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")


class KafkaFailed(BrokerFailed):
    """Kafka did not come up (or its storage could not be formatted); the message carries the tail of its log."""


def random_cluster_id() -> str:
    """A cluster id as `kafka-storage random-uuid` prints one: 16 random bytes in unpadded URL-safe base64, never
    starting with '-' (Kafka avoids those so that the id cannot be mistaken for a command-line option)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def log_config_options(level: str) -> list[str]:
    """Both logging configurations, at `level`: each release reads the one its back end knows."""
    return [
        f"-Dkbroker.kafka.log.level={level}",
        f"-Dlog4j.configuration=file:{HERE / 'log4j.properties'}",
        f"-Dlog4j2.configurationFile={HERE / 'log4j2.properties'}",
    ]


class KafkaProcess(BrokerProcess):
    """One KRaft node of Apache Kafka `version` under `base_dir` (server.properties, data/, kafka.log).

    Alone (voters=None) it is a single-node cluster whose quorum is itself. `overrides` go into server.properties
    after the defaults here. `java` is the java binary (default: the one on PATH; every release used here runs on
    Java 17).
    """

    def __init__(
        self,
        version: str,
        base_dir: Path,
        *,
        node_id: int = 1,
        host: str = "127.0.0.1",
        port: int | None = None,
        controller_port: int | None = None,
        voters: dict[int, int] | None = None,
        cluster_id: str | None = None,
        overrides: dict[str, str] | None = None,
        java: str | None = None,
    ) -> None:
        self.base_dir = Path(base_dir)
        super().__init__(
            self.base_dir / "data",
            port=port,
            host=host,
            overrides=overrides,
            log_path=self.base_dir / "kafka.log",
        )
        self.version = version
        self.node_id = node_id
        self.controller_port = controller_port if controller_port is not None else free_port(host)
        # node id -> controller port of every voter, all on `host`
        self.voters = voters if voters is not None else {node_id: self.controller_port}
        self.cluster_id = cluster_id or random_cluster_id()
        self.java = java or shutil.which("java") or "java"
        self.config_path = self.base_dir / "server.properties"
        self._libs: Path | None = None

    @property
    def libs(self) -> Path:
        if self._libs is None:
            self._libs = install(self.version)
        return self._libs

    def properties(self) -> dict[str, str]:
        cluster_size = len(self.voters)
        replication = str(min(cluster_size, 3))
        properties = {
            "process.roles": "broker,controller",
            "node.id": str(self.node_id),
            "controller.quorum.voters": ",".join(
                f"{node}@{self.host}:{port}" for node, port in sorted(self.voters.items())
            ),
            "listeners": f"PLAINTEXT://{self.host}:{self.port},CONTROLLER://{self.host}:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://{self.host}:{self.port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": str(self.data_dir),
            # The internal topics fit the cluster's size (Kafka's defaults want three brokers).
            "offsets.topic.replication.factor": replication,
            "transaction.state.log.replication.factor": replication,
            "transaction.state.log.min.isr": str(min(cluster_size, 2)),
            # The first consumer group rebalances at once instead of waiting 3 s for more members.
            "group.initial.rebalance.delay.ms": "0",
        }
        if major(self.version) >= 4:
            # KIP-932's share-group state topic, which 4.x creates like the other internal topics.
            properties["share.coordinator.state.topic.replication.factor"] = replication
            properties["share.coordinator.state.topic.min.isr"] = str(min(cluster_size, 2))
        properties.update(self.overrides)
        return properties

    def java_command(
        self,
        main: str,
        *args: str,
        jvm_options: tuple[str, ...] = SERVER_JVM_OPTIONS,
        log_level: str = "INFO",
    ) -> list[str]:
        """`java` running `main` from this release's jars, logging at `log_level` to stderr."""
        classpath = f"{self.libs}/*"
        return [self.java, *jvm_options, *log_config_options(log_level), "-cp", classpath, main, *args]

    def tool_command(self, main: str, *args: str) -> list[str]:
        """One of the release's CLI tools, e.g. tool_command("org.apache.kafka.tools.TopicCommand", "--list",
        "--bootstrap-server", node.bootstrap): a quick-starting JVM that logs warnings only."""
        return self.java_command(main, *args, jvm_options=TOOL_JVM_OPTIONS, log_level="WARN")

    def command(self) -> list[str]:
        return self.java_command(SERVER_MAIN, str(self.config_path))

    def write_config(self) -> None:
        self.base_dir.mkdir(parents=True, exist_ok=True)
        lines = [f"{key}={value}" for key, value in self.properties().items()]
        self.config_path.write_text("# written by compat/kafka/process.py\n" + "\n".join(lines) + "\n")

    def is_formatted(self) -> bool:
        return (self.data_dir / "meta.properties").exists()

    def format_storage(self) -> None:
        """`kafka-storage format` of log.dirs with this node's cluster id, unless it was formatted before."""
        if self.is_formatted():
            return
        command = self.tool_command(
            STORAGE_TOOL_MAIN, "format", "--cluster-id", self.cluster_id, "--config", str(self.config_path)
        )
        with self.log_path.open("ab") as log:
            log.write(f"\n=== {' '.join(command)}\n".encode())
            log.flush()
            try:
                result = subprocess.run(
                    command,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    timeout=FORMAT_TIMEOUT_S,
                )
            except subprocess.TimeoutExpired:
                raise KafkaFailed(
                    f"kafka-storage format took over {FORMAT_TIMEOUT_S} s:\n{self.log_tail()}"
                ) from None
        if result.returncode != 0 or not self.is_formatted():
            raise KafkaFailed(f"kafka-storage format exited with {result.returncode}:\n{self.log_tail()}")

    def start(self) -> KafkaProcess:
        self.write_config()
        self.format_storage()
        super().start()
        return self

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Return once the listener answers ApiVersions and Metadata lists every broker of the cluster; raise
        with the log (after a SIGKILL) if the JVM exits first or the time runs out."""
        deadline = time.monotonic() + timeout
        expected = set(self.voters)
        while True:
            if not self.is_running():
                raise KafkaFailed(
                    f"Kafka {self.version} node {self.node_id} exited with {self.returncode()} before it was "
                    f"ready:\n{self.log_tail()}"
                )
            if expected <= self._probe_broker_ids():
                return
            if time.monotonic() > deadline:
                self.kill()
                raise KafkaFailed(
                    f"Kafka {self.version} node {self.node_id} not ready on {self.bootstrap} after {timeout} s:"
                    f"\n{self.log_tail()}"
                )
            time.sleep(0.2)

    def log_tail(self, chars: int = 8000) -> str:
        return f"(the whole log: {self.log_path})\n{super().log_tail(chars)}"

    def _probe_broker_ids(self) -> set[int]:
        """The broker ids this node's Metadata lists, or none while it does not answer."""
        try:
            with Wire(self.bootstrap, client_id="kbroker-compat-probe") as wire:
                wire.sock.settimeout(PROBE_TIMEOUT_S)
                wire.call(
                    ApiVersionsRequest(client_software_name="kbroker-compat", client_software_version="1"), 3
                )
                metadata = wire.call(MetadataRequest(topics=[]), 12)
        except OSError:
            return set()
        return {broker.node_id for broker in metadata.brokers}


class KafkaCluster:
    """`size` KRaft nodes of Kafka `version`, every one broker and voter, under base_dir/node<id>."""

    def __init__(
        self,
        version: str,
        base_dir: Path,
        *,
        size: int = 3,
        host: str = "127.0.0.1",
        overrides: dict[str, str] | None = None,
        java: str | None = None,
    ) -> None:
        self.version = version
        voters = {node_id: free_port(host) for node_id in range(1, size + 1)}
        cluster_id = random_cluster_id()
        self.nodes = [
            KafkaProcess(
                version,
                Path(base_dir) / f"node{node_id}",
                node_id=node_id,
                host=host,
                controller_port=controller_port,
                voters=voters,
                cluster_id=cluster_id,
                overrides=overrides,
                java=java,
            )
            for node_id, controller_port in voters.items()
        ]

    @property
    def bootstrap(self) -> str:
        return ",".join(node.bootstrap for node in self.nodes)

    def node(self, node_id: int) -> KafkaProcess:
        return next(node for node in self.nodes if node.node_id == node_id)

    def start(self) -> KafkaCluster:
        """Start every node at once (none is ready before a majority of the voters runs); stop them all if any
        fails to come up."""
        with ThreadPoolExecutor(len(self.nodes)) as pool:
            futures = [pool.submit(node.start) for node in self.nodes]
            errors = [error for error in (future.exception() for future in futures) if error is not None]
        if errors:
            self.stop()
            raise errors[0]
        return self

    def stop(self) -> None:
        """SIGTERM every node at once (one by one, the last ones would wait for a quorum that has gone), then
        SIGKILL whatever is still running after BrokerProcess's stop timeout."""
        with ThreadPoolExecutor(len(self.nodes)) as pool:
            list(pool.map(KafkaProcess.stop, self.nodes))

    def is_running(self) -> bool:
        return all(node.is_running() for node in self.nodes)

    def log_tail(self, chars: int = 8000) -> str:
        share = chars // len(self.nodes)
        return "\n".join(f"--- node {node.node_id} ---\n{node.log_tail(share)}" for node in self.nodes)

    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
