"""A kbroker cluster for end-to-end tests: a private etcd plus N broker processes on 127.0.0.1.

Each node is `python -m kbroker serve --node-id I --metadata etcd://... --listeners PLAINTEXT://127.0.0.1:PORT` with
its own data directory and log file; node ids are 1..N. Every process (etcd and brokers) is started and stopped by
its pid, never by name. Short timeouts make failures quick to detect: `broker.session.timeout.ms=3000` (a killed
node's registration lapses after about 3 s, then the controller moves its leaderships) and
`replica.lag.time.max.ms=5000` (a follower that stops fetching leaves the ISR after about 5 s).

Use it from a test module::

    from tests.cluster_fixture import Cluster, running_cluster

    @pytest.fixture
    def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
        with running_cluster(tmp_path, request=request) as c:
            yield c

    def test_something(cluster: Cluster) -> None:
        cluster.create_topic("t", partitions=3, replication_factor=3, configs={"min.insync.replicas": "2"})
        leader = cluster.partition("t", 0).leader
        cluster.kill(leader)                                   # SIGKILL
        moved = cluster.wait_for_leader("t", 0, other_than=leader)
        cluster.restart(leader)                                # same port and data directory
        cluster.wait_for_isr("t", 0, size=3)

API (see each method): `etcd_url`, `bootstrap` (every node) and `live_bootstrap` (running nodes), `node(i)`,
`start_node(i)`, `kill(i)`, `terminate(i)`, `restart(i)`, `pause(i)` / `resume(i)` (SIGSTOP / SIGCONT),
`running()`, `describe()` (a Metadata request with our own codec), `partition(topic, p)`, `create_topic(...)`,
`wait_for_leader(topic, p, other_than=X)`, `wait_for_isr(topic, p, size=N)`, `wait_until(predicate)`,
`serve_metrics()` before the start (then `metrics[i]`, each node's admin listener; `running_cluster(metrics=True)`).
On a test failure every node's log tail is attached to the report (when `request` is passed).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest

from kbroker.replication.client import SyncBrokerClient, parse_host_port
from kbroker.replication.topics_tool import ClusterDescription, PartitionDescription, describe
from protocol.errors import ErrorCode
from protocol.messages.create_topics_request import (
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)
from protocol.messages.create_topics_response import CreateTopicsResponse
from tests.broker_process import BrokerProcess, free_port
from tests.conftest import register_broker
from tests.etcd_process import EtcdProcess, running_etcd

DEFAULT_OVERRIDES: dict[str, str] = {
    "broker.session.timeout.ms": "3000",
    "replica.lag.time.max.ms": "5000",
    # Fewer __consumer_offsets partitions: less to create, place and replicate at every start.
    "offsets.topic.num.partitions": "3",
}
WAIT_TIMEOUT_S = 30.0


class ClusterNode(BrokerProcess):
    """One kbroker cluster node: a BrokerProcess that also passes --node-id and --metadata."""

    def __init__(
        self,
        node_id: int,
        etcd_url: str,
        data_dir: Path,
        *,
        port: int,
        overrides: Mapping[str, str],
        log_path: Path,
        source_dir: Path | None = None,
        extra_listeners: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__(
            data_dir, port=port, overrides=dict(overrides), log_path=log_path, source_dir=source_dir
        )
        self.node_id = node_id
        self.etcd_url = etcd_url
        self.extra_listeners = dict(extra_listeners or {})
        """Listeners beside PLAINTEXT (which the harness uses), by name: their ports."""

    def command(self) -> list[str]:
        command = [*super().command(), "--node-id", str(self.node_id), "--metadata", self.etcd_url]
        command[command.index("--listeners") + 1] += "".join(
            f",{name}://{self.host}:{port}" for name, port in self.extra_listeners.items()
        )
        return command

    def bootstrap_of(self, listener: str) -> str:
        return f"{self.host}:{self.extra_listeners[listener]}"


class Cluster:
    def __init__(
        self,
        root: Path,
        etcd: EtcdProcess,
        size: int = 3,
        overrides: Mapping[str, str] | None = None,
        request: pytest.FixtureRequest | None = None,
        *,
        source_dir: Path | None = None,
        base_overrides: Mapping[str, str] = DEFAULT_OVERRIDES,
        extra_listeners: tuple[str, ...] = (),
        extra_args: list[str] | None = None,
    ) -> None:
        """`source_dir`: run every node from that checkout (see BrokerProcess). `base_overrides`: the settings
        `overrides` add to; the tests' short timeouts by default, `{}` for the brokers' own defaults (benchmarks).
        `extra_listeners`: more listeners (e.g. SASL_SSL) on ports of their own; `extra_args`: more `kbroker serve`
        arguments (e.g. --add-scram)."""
        self.root = root
        self.etcd = etcd
        settings = {**base_overrides, **(overrides or {})}
        self.nodes: dict[int, ClusterNode] = {}
        self.metrics: dict[int, str] = {}
        """Each node's admin listener (base URL), once `serve_metrics` gave them one."""
        for node_id in range(1, size + 1):
            node = ClusterNode(
                node_id,
                etcd.url,
                root / f"node{node_id}",
                port=free_port(),
                overrides=settings,
                log_path=root / f"node{node_id}.log",
                source_dir=source_dir,
                extra_listeners={name: free_port() for name in extra_listeners},
            )
            node.extra_args = list(extra_args or [])
            self.nodes[node_id] = node
            if request is not None:
                register_broker(request, node)

    # ---- addresses ------------------------------------------------------------------------------------------

    @property
    def etcd_url(self) -> str:
        """What `--metadata` takes: etcd://127.0.0.1:PORT."""
        return self.etcd.url

    @property
    def bootstrap(self) -> str:
        """Every node, running or not (clients skip the ones that do not answer)."""
        return ",".join(node.bootstrap for node in self.nodes.values())

    @property
    def live_bootstrap(self) -> str:
        return ",".join(self.nodes[i].bootstrap for i in self.running())

    def node(self, node_id: int) -> ClusterNode:
        return self.nodes[node_id]

    def running(self) -> list[int]:
        return [i for i, node in self.nodes.items() if node.is_running()]

    def serve_metrics(self) -> dict[int, str]:
        """Give every node (before `start`) an admin listener; node id -> its base URL, for tests/test_metrics.py's
        `scrape`."""
        for node_id, node in self.nodes.items():
            url = f"http://127.0.0.1:{free_port()}"
            node.overrides["admin.listener"] = url
            self.metrics[node_id] = url
        return self.metrics

    # ---- processes ------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start every node at once; returns when all listen (each has joined the cluster by then)."""
        with ThreadPoolExecutor(len(self.nodes)) as pool:
            list(pool.map(lambda node: node.start(), self.nodes.values()))

    def start_node(self, node_id: int) -> None:
        self.nodes[node_id].start()

    def kill(self, node_id: int) -> None:
        """SIGKILL: the node's etcd registration lingers until its lease lapses (broker.session.timeout.ms)."""
        self.nodes[node_id].kill()

    def terminate(self, node_id: int) -> None:
        """SIGTERM: a clean shutdown revokes the registration at once."""
        self.nodes[node_id].terminate()

    def restart(self, node_id: int) -> None:
        """Start a stopped node again (same port, same data directory); a running one is terminated first."""
        self.nodes[node_id].restart()

    def pause(self, node_id: int) -> None:
        os.kill(self.nodes[node_id].pid, signal.SIGSTOP)

    def resume(self, node_id: int) -> None:
        os.kill(self.nodes[node_id].pid, signal.SIGCONT)

    def stop(self) -> None:
        for node in self.nodes.values():
            if node.is_running():
                os.kill(node.pid, signal.SIGCONT)
            node.stop()

    # ---- metadata -------------------------------------------------------------------------------------------

    def describe(self, topics: list[str] | None = None) -> ClusterDescription:
        """Metadata from the first running node that answers (our own codec, no client library)."""
        return describe(self.live_bootstrap, topics)

    def partition(self, topic: str, partition: int) -> PartitionDescription:
        found = self.describe([topic]).topics[topic]
        return found.partitions[partition]

    def create_topic(
        self,
        name: str,
        partitions: int,
        replication_factor: int,
        configs: Mapping[str, str] | None = None,
    ) -> None:
        """CreateTopics (our own codec), then wait until every partition has a leader and a full ISR."""
        host, port = parse_host_port(self.nodes[self.running()[0]].bootstrap)
        request = CreateTopicsRequest(
            topics=[
                CreatableTopic(
                    name=name,
                    num_partitions=partitions,
                    replication_factor=replication_factor,
                    configs=[CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()],
                )
            ],
            timeout_ms=30000,
        )
        with SyncBrokerClient(host, port) as client:
            response: CreateTopicsResponse = client.request(request, 7)
        result = response.topics[0]
        assert result.error_code == ErrorCode.NONE, (result.error_code, result.error_message)
        self.wait_until(
            lambda d: (
                name in d.topics
                and len(d.topics[name].partitions) == partitions
                and all(p.leader >= 0 and len(p.isr) == replication_factor for p in d.topics[name].partitions)
            ),
            f"{name} to have leaders and full ISRs",
        )

    def wait_until(
        self, predicate: Callable[[ClusterDescription], bool], what: str, timeout: float = WAIT_TIMEOUT_S
    ) -> ClusterDescription:
        """Poll Metadata until predicate holds; AssertionError naming `what` (and the last metadata) on timeout."""
        deadline = time.monotonic() + timeout
        last: ClusterDescription | None = None
        while True:
            try:
                last = self.describe()
                if predicate(last):
                    return last
            except Exception:  # a node going down mid-request: ask again
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}; last metadata: {last}")
            time.sleep(0.1)

    def wait_for_leader(
        self, topic: str, partition: int, *, other_than: int | None = None, timeout: float = WAIT_TIMEOUT_S
    ) -> PartitionDescription:
        """Wait until the partition has a live leader (other than `other_than`, e.g. a node just killed)."""

        def ok(d: ClusterDescription) -> bool:
            t = d.topics.get(topic)
            if t is None or partition >= len(t.partitions):
                return False
            p = t.partitions[partition]
            return p.leader >= 0 and p.leader != other_than and p.leader in d.brokers

        d = self.wait_until(ok, f"a leader of {topic}-{partition} other than {other_than}", timeout)
        return d.topics[topic].partitions[partition]

    def wait_for_isr(
        self, topic: str, partition: int, *, size: int, timeout: float = WAIT_TIMEOUT_S
    ) -> PartitionDescription:
        """Wait until the partition's ISR has exactly `size` replicas (and a leader)."""

        def ok(d: ClusterDescription) -> bool:
            t = d.topics.get(topic)
            if t is None or partition >= len(t.partitions):
                return False
            p = t.partitions[partition]
            return p.leader >= 0 and len(p.isr) == size

        d = self.wait_until(ok, f"the ISR of {topic}-{partition} to have {size} replicas", timeout)
        return d.topics[topic].partitions[partition]


@contextmanager
def running_cluster(
    root: Path,
    size: int = 3,
    *,
    overrides: Mapping[str, str] | None = None,
    request: pytest.FixtureRequest | None = None,
    metrics: bool = False,
) -> Iterator[Cluster]:
    """etcd plus `size` nodes, all started (skips the test if etcd is not installed); everything stopped on exit.
    With `metrics`, every node serves its metrics (`Cluster.metrics`)."""
    with running_etcd() as etcd:
        cluster = Cluster(root, etcd, size, overrides, request)
        if metrics:
            cluster.serve_metrics()
        try:
            cluster.start()
            yield cluster
        finally:
            cluster.stop()
