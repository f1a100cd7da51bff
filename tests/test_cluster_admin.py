"""kbroker's own cluster behaviour behind the admin APIs, on three processes and a private etcd (the same scenarios
as a Kafka user runs them, against Kafka too: compat/test_cluster_admin.py):

- auto.leader.rebalance.enable: after a node's controlled shutdown and restart, the controller alone moves every
  leadership back to its preferred replica (every leader.imbalance.check.interval.seconds);
- replication throttles: a replica added by a reassignment copies no faster than the follower throttle rate
  allows (kbroker/replication/throttle.py: at most rate x (t + 1 s) plus one batch after t seconds), and the
  reassignment completes;
- DeleteRecords answers once every replica's log start has moved (the low watermark): each replica's directory
  says so.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer

from kbroker.replication.client import SyncBrokerClient, parse_host_port
from protocol.errors import ErrorCode
from protocol.messages.alter_partition_reassignments_request import (
    AlterPartitionReassignmentsRequest,
    ReassignablePartition,
    ReassignableTopic,
)
from protocol.messages.create_topics_request import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreateTopicsRequest,
)
from protocol.messages.delete_records_request import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from protocol.messages.describe_log_dirs_request import DescribableLogDirTopic, DescribeLogDirsRequest
from protocol.messages.incremental_alter_configs_request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from protocol.messages.list_partition_reassignments_request import ListPartitionReassignmentsRequest
from tests.cluster_fixture import Cluster, running_cluster

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(180)]

TOPIC, BROKER = 2, 4
RATE = 300_000  # bytes per second
BATCH = 16_384


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    overrides = {"leader.imbalance.check.interval.seconds": "1"}
    with running_cluster(tmp_path_factory.mktemp("cluster-admin"), 3, overrides=overrides) as running:
        yield running


def call(cluster: Cluster, node: int, request: object, version: int) -> object:
    host, port = parse_host_port(cluster.node(node).bootstrap)
    with SyncBrokerClient(host, port) as client:
        response: object = client.request(request, version)
        return response


def create(cluster: Cluster, topic: str, assignments: dict[int, list[int]]) -> None:
    request = CreateTopicsRequest(
        topics=[
            CreatableTopic(
                name=topic,
                num_partitions=-1,
                replication_factor=-1,
                assignments=[
                    CreatableReplicaAssignment(partition_index=p, broker_ids=b)
                    for p, b in assignments.items()
                ],
            )
        ],
        timeout_ms=30_000,
    )
    answer = call(cluster, 1, request, 7).topics[0]  # type: ignore[attr-defined]
    assert answer.error_code == ErrorCode.NONE, answer
    for p, replicas in assignments.items():
        cluster.wait_for_isr(topic, p, size=len(replicas))


def produce(cluster: Cluster, topic: str, size: int) -> None:
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap, "acks": "all", "batch.size": BATCH, "linger.ms": 50}
    )
    for _ in range(size // 1000):
        producer.produce(topic, value=b"x" * 1000, partition=0)
        producer.poll(0)
    assert producer.flush(60) == 0


def alter(cluster: Cluster, resource_type: int, name: str, **configs: str) -> None:
    request = IncrementalAlterConfigsRequest(
        resources=[
            AlterConfigsResource(
                resource_type=resource_type,
                resource_name=name,
                configs=[
                    AlterableConfig(name=k.replace("_", "."), config_operation=0, value=v)
                    for k, v in configs.items()
                ],
            )
        ]
    )
    answer = call(cluster, 1, request, 1).responses[0]  # type: ignore[attr-defined]
    assert answer.error_code == ErrorCode.NONE, answer


def replica_size(cluster: Cluster, node: int, topic: str) -> int:
    request = DescribeLogDirsRequest(topics=[DescribableLogDirTopic(topic=topic, partitions=[0])])
    results = call(cluster, node, request, 4).results  # type: ignore[attr-defined]
    sizes = [p.partition_size for r in results for t in r.topics for p in t.partitions]
    return sizes[0] if sizes else 0


def test_leaderships_move_back_to_their_preferred_replicas_by_themselves(cluster: Cluster) -> None:
    topic = "rebalanced"
    cluster.create_topic(topic, 3, 3)
    preferred = {p.partition: p.replicas[0] for p in cluster.describe([topic]).topics[topic].partitions}
    victim = preferred[0]
    cluster.terminate(victim)
    moved = cluster.describe([topic]).topics[topic].partitions
    assert all(p.leader != victim for p in moved)
    assert "leads nothing another replica could" in cluster.node(victim).log_text(), "a controlled shutdown"
    cluster.start_node(victim)
    cluster.wait_until(
        lambda d: {p.partition: p.leader for p in d.topics[topic].partitions} == preferred,
        "every leadership back on its preferred replica",
    )


def test_an_added_replica_copies_within_the_throttle(cluster: Cluster) -> None:
    topic = "throttled"
    create(cluster, topic, {0: [1, 2]})
    total = 1_200_000
    produce(cluster, topic, total)
    alter(cluster, BROKER, "3", follower_replication_throttled_rate=str(RATE))
    alter(cluster, TOPIC, topic, follower_replication_throttled_replicas="0:3")
    request = AlterPartitionReassignmentsRequest(
        topics=[
            ReassignableTopic(
                name=topic, partitions=[ReassignablePartition(partition_index=0, replicas=[1, 2, 3])]
            )
        ]
    )
    started = time.monotonic()
    answer = call(cluster, 2, request, 0)
    assert answer.responses[0].partitions[0].error_code == ErrorCode.NONE  # type: ignore[attr-defined]
    samples: list[tuple[float, int]] = []
    while True:
        size = replica_size(cluster, 3, topic)
        elapsed = time.monotonic() - started
        samples.append((elapsed, size))
        # Measured after the request went: the copy began no sooner than `started`.
        assert size <= RATE * (elapsed + 1) + 2 * BATCH, samples
        ongoing = call(cluster, 1, ListPartitionReassignmentsRequest(topics=None), 0).topics  # type: ignore[attr-defined]
        if not ongoing and size >= replica_size(cluster, 1, topic):
            break
        assert elapsed < 60, samples
        time.sleep(0.2)
    assert len([s for _, s in samples if 0 < s < total]) >= 3, f"too few samples while copying: {samples}"
    assert cluster.wait_for_isr(topic, 0, size=3).replicas == (1, 2, 3)


def test_delete_records_waits_for_every_replica(cluster: Cluster) -> None:
    topic = "trimmed"
    create(cluster, topic, {0: [2, 3, 1]})
    produce(cluster, topic, 50_000)
    request = DeleteRecordsRequest(
        topics=[
            DeleteRecordsTopic(name=topic, partitions=[DeleteRecordsPartition(partition_index=0, offset=20)])
        ],
        timeout_ms=30_000,
    )
    answer = call(cluster, 2, request, 2).topics[0].partitions[0]  # type: ignore[attr-defined]
    assert (answer.error_code, answer.low_watermark) == (ErrorCode.NONE, 20)
    for node in (1, 2, 3):
        start = Path(cluster.node(node).data_dir, f"{topic}-0", "log-start-offset").read_text().strip()
        assert start == "20", f"node {node}"
