"""The transaction coordinator killed with SIGKILL mid-commit in a 3-node cluster: the same scenario and the same
history check against a kbroker cluster (private etcd, tests/cluster_fixture.py) and a 3-node Apache Kafka 3.9.2
(KRaft, compat/kafka/process.py).

A confluent-kafka transactional producer writes transactions of six records over a topic of three partitions
(replication factor 3, min.insync.replicas 2). While one of them is being committed, the node that coordinates the
producer's transactional id is killed; the producer goes on with the new coordinator (a new producer with the same
id when the old one is fenced or stuck), the killed node comes back. A read_committed consumer reads all along, and
reads everything again once it is over. kbroker/testing/history.py's transaction check then requires: no record of
an aborted transaction read, nothing read during the faults that the settled log lacks (nothing served beyond the
last stable offset), no committed record lost, every transaction visible whole or not at all (the one whose commit
the kill interrupted too, whichever way it was decided), no duplicates.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from compat.kafka import KAFKA_3
from compat.kafka.process import KafkaCluster
from compat.test_transactions import read_all, wait_stable
from kbroker.testing import history
from protocol.errors import ErrorCode
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from tests.cluster_fixture import running_cluster
from tests.test_groups_support import Wire

pytestmark = [pytest.mark.timeout(420), pytest.mark.cluster]

TOPIC = "txn-failover"
PARTITIONS = 3
TRANSACTIONS_BEFORE, TRANSACTIONS_AFTER = 6, 6
RECORDS_PER_TRANSACTION = 6
# Quick failure detection on both: a killed node's leaderships move within seconds.
KBROKER_SETTINGS = {"transaction.state.log.num.partitions": "3"}
KAFKA_SETTINGS = {
    "broker.session.timeout.ms": "3000",
    "broker.heartbeat.interval.ms": "500",
    "transaction.state.log.num.partitions": "3",
    "offsets.topic.num.partitions": "3",
}


@dataclass
class ClusterUnderTest:
    name: str
    bootstrap: str
    kill: Callable[[int], None]
    restart: Callable[[int], None]
    node_bootstraps: dict[int, str] = field(default_factory=dict)


@contextmanager
def kbroker_cluster(root: Path, request: pytest.FixtureRequest) -> Iterator[ClusterUnderTest]:
    with running_cluster(root, 3, overrides=KBROKER_SETTINGS, request=request) as cluster:
        yield ClusterUnderTest(
            "kbroker",
            cluster.bootstrap,
            cluster.kill,
            cluster.restart,
            {i: cluster.node(i).bootstrap for i in cluster.nodes},
        )


@contextmanager
def kafka_cluster(root: Path, release: Callable[[str], Path]) -> Iterator[ClusterUnderTest]:
    release(KAFKA_3)
    with KafkaCluster(KAFKA_3, root, size=3, overrides=KAFKA_SETTINGS) as cluster:

        def kill(node_id: int) -> None:
            cluster.node(node_id).kill()

        def restart(node_id: int) -> None:
            cluster.node(node_id).restart()

        yield ClusterUnderTest(
            f"kafka-{KAFKA_3}",
            cluster.bootstrap,
            kill,
            restart,
            {node.node_id: node.bootstrap for node in cluster.nodes},
        )


def cluster_names(config: pytest.Config) -> list[str]:
    names = ["kbroker"]
    if config.getoption("--kafka") != "none" and not config.getoption("--bootstrap"):
        names.append(f"kafka-{KAFKA_3}")
    return names


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "cluster_name" in metafunc.fixturenames:
        metafunc.parametrize("cluster_name", cluster_names(metafunc.config))


@pytest.fixture
def cluster(
    cluster_name: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    kafka_release: Callable[[str], Path],
) -> Iterator[ClusterUnderTest]:
    if cluster_name == "kbroker":
        with kbroker_cluster(tmp_path, request) as c:
            yield c
    else:
        with kafka_cluster(tmp_path, kafka_release) as c:
            yield c


def coordinator_of(cluster: ClusterUnderTest, transactional_id: str) -> int:
    deadline = time.monotonic() + 60
    while True:
        for bootstrap in cluster.node_bootstraps.values():
            try:
                with Wire(bootstrap) as wire:
                    response = wire.call(FindCoordinatorRequest(key=transactional_id, key_type=1), 3)
            except OSError:
                continue
            if response.error_code == ErrorCode.NONE:
                return int(response.node_id)
        assert time.monotonic() < deadline, "no transaction coordinator found"
        time.sleep(0.5)


class LiveReader:
    """A read_committed consumer reading the topic from the start, all along the faults."""

    def __init__(self, bootstrap: str) -> None:
        self.records: list[history.LogRecord] = []
        self._stop = threading.Event()
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": "txn-failover-live",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
        self._consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            message = self._consumer.poll(0.2)
            if message is None or message.error() is not None:
                continue
            partition, offset = message.partition(), message.offset()
            assert partition is not None
            assert offset is not None
            self.records.append(history.LogRecord(TOPIC, partition, offset, message.value() or b"", "live"))

    def stop(self) -> list[history.LogRecord]:
        self._stop.set()
        self._thread.join(timeout=30)
        self._consumer.close()
        return self.records


class TransactionalWriter:
    """Transactions of RECORDS_PER_TRANSACTION records, their outcomes as the producer learns them."""

    def __init__(self, bootstrap: str, transactional_id: str) -> None:
        self.bootstrap, self.transactional_id = bootstrap, transactional_id
        self.transactions: list[history.Transaction] = []
        self.producer = self._new_producer()

    def _new_producer(self) -> Producer:
        producer = Producer(
            {
                "bootstrap.servers": self.bootstrap,
                "transactional.id": self.transactional_id,
                "transaction.timeout.ms": 20_000,
            }
        )
        producer.init_transactions(120)
        return producer

    def write(self, number: int, during_commit: Callable[[], None] | None = None) -> None:
        values = tuple(b"txn%d-%d" % (number, j) for j in range(RECORDS_PER_TRANSACTION))
        self.producer.begin_transaction()
        for j, value in enumerate(values):
            self.producer.produce(TOPIC, value=value, partition=j % PARTITIONS)
        outcome = history.UNKNOWN
        try:
            if during_commit is None:
                self.producer.commit_transaction(120)
            else:
                committing = threading.Thread(target=self._commit_recording, args=(values,), daemon=True)
                self._commit_error: KafkaException | None = None
                committing.start()
                during_commit()
                committing.join(timeout=180)
                if self._commit_error is not None:
                    raise self._commit_error
            outcome = history.COMMITTED
        except KafkaException as failure:
            error: KafkaError = failure.args[0]
            outcome = self._recover(error)
        self.transactions.append(history.Transaction(f"txn{number}", values, outcome))

    def _commit_recording(self, _values: tuple[bytes, ...]) -> None:
        try:
            self.producer.commit_transaction(120)
        except KafkaException as failure:
            self._commit_error = failure

    def _recover(self, error: KafkaError) -> str:
        """After a failed commit: abort if the producer can, else start a new one (which fences the old and
        aborts whatever the coordinator had not decided). The outcome stays unknown: the commit may have been
        decided before the failure."""
        if error.txn_requires_abort():
            try:
                self.producer.abort_transaction(120)
                return history.UNKNOWN
            except KafkaException:
                pass
        self.producer = self._new_producer()
        return history.UNKNOWN


def test_the_coordinator_killed_mid_commit(cluster: ClusterUnderTest) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3, config={"min.insync.replicas": "2"})])[TOPIC].result(
        60
    )
    transactional_id = f"failover-{time.monotonic_ns()}"
    writer = TransactionalWriter(cluster.bootstrap, transactional_id)
    reader = LiveReader(cluster.bootstrap)
    rng = random.Random()
    for number in range(TRANSACTIONS_BEFORE):
        writer.write(number)
    coordinator = coordinator_of(cluster, transactional_id)
    delay = rng.uniform(0, 0.05)

    def kill_the_coordinator() -> None:
        time.sleep(delay)  # the EndTxn is on its way, or being written, or answered
        cluster.kill(coordinator)

    writer.write(TRANSACTIONS_BEFORE, during_commit=kill_the_coordinator)
    for number in range(TRANSACTIONS_BEFORE + 1, TRANSACTIONS_BEFORE + 1 + TRANSACTIONS_AFTER):
        writer.write(number)
    new_coordinator = coordinator_of(cluster, transactional_id)
    assert new_coordinator != coordinator
    cluster.restart(coordinator)
    wait_stable(cluster.bootstrap, TOPIC, PARTITIONS)
    live = reader.stop()
    settled = [
        history.LogRecord(TOPIC, r.partition, r.offset, r.value, "settled")
        for r in read_all(cluster.bootstrap, TOPIC, PARTITIONS, "read_committed")
    ]
    verdict = history.check_transactions(writer.transactions, live + settled, live_sources=["live"])
    assert verdict.valid, verdict.report()
    outcomes = [t.outcome for t in writer.transactions]
    assert outcomes.count(history.COMMITTED) >= TRANSACTIONS_BEFORE + TRANSACTIONS_AFTER - 1, outcomes
    print(
        f"{cluster.name}: killed coordinator {coordinator} {delay * 1000:.0f} ms into a commit; {verdict.report()}"
    )
