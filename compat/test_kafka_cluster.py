"""compat/kafka/'s 3-node KRaft cluster, the reference for replication scenarios: it forms, replicates, survives
the loss of a node and stops by pid.

The single node behind every `kafka-*` target is exercised by the other compat scenarios.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from compat.kafka import DEFAULT_VERSIONS
from compat.kafka.process import KafkaCluster
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from tests.test_groups_support import Wire, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

TOPIC = "replicated"
# The controller fences a broker that stopped heartbeating after 3 s instead of 9, so a killed leader is replaced
# sooner.
FAST_FENCING = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"}


def metadata(bootstrap: str, topic: str) -> tuple[dict[int, int], dict[int, tuple[int, list[int]]]]:
    """(broker id -> port, partition -> (leader, in-sync replicas)) as one node answers Metadata."""
    with Wire(bootstrap) as wire:
        response = wire.call(MetadataRequest(topics=[MetadataRequestTopic(name=topic)]), 12)
    brokers = {broker.node_id: broker.port for broker in response.brokers}
    (answer,) = response.topics
    return brokers, {p.partition_index: (p.leader_id, sorted(p.isr_nodes)) for p in answer.partitions}


def produce(bootstrap: str, count: int, partition: int = -1) -> None:
    """`count` records at acks=all, to `partition` (-1: wherever the client's partitioner puts them)."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "message.timeout.ms": 60_000})
    failures: list[object] = []

    def delivered(error: object, _message: object) -> None:
        if error is not None:
            failures.append(error)

    for i in range(count):
        producer.produce(TOPIC, value=b"%d" % i, partition=partition, on_delivery=delivered)
    assert producer.flush(90) == 0, "records still unsent"
    assert failures == []


@pytest.mark.parametrize("version", DEFAULT_VERSIONS)
def test_three_nodes_replicate_and_survive_a_killed_node(
    version: str, kafka_release: Callable[[str], Path], tmp_path: Path
) -> None:
    kafka_release(version)
    cluster = KafkaCluster(version, tmp_path, size=3, overrides=FAST_FENCING)
    started = time.monotonic()
    with cluster:
        print(f"Kafka {version}: 3 nodes ready in {time.monotonic() - started:.1f} s")
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        admin.create_topics([NewTopic(TOPIC, 3, 3)])[TOPIC].result(60)
        produce(cluster.bootstrap, 100)

        brokers, partitions = metadata(cluster.nodes[0].bootstrap, TOPIC)
        assert brokers == {node.node_id: node.port for node in cluster.nodes}
        assert sorted(partitions) == [0, 1, 2]
        assert all(isr == [1, 2, 3] for _, isr in partitions.values()), partitions

        # SIGKILL the leader of partition 0: once the controller fences it, another replica leads and acks=all
        # succeeds again with the two replicas left in sync.
        # The records go to partition 0 itself, which only a new leader can acknowledge. Keyless, they could all go
        # to one other partition (librdkafka's sticky partitioner puts a burst into one) and be acknowledged before
        # the controller fenced the victim: CI failed so once, the survivor still naming the victim as leader.
        victim = cluster.node(partitions[0][0])
        victim.kill()
        produce(cluster.bootstrap, 100, partition=0)
        # Another node's metadata follows the controller's log a moment later.
        survivor = next(node for node in cluster.nodes if node is not victim)
        wait_for(
            f"a leader of {TOPIC}-0 other than the killed node {victim.node_id} in node {survivor.node_id}'s metadata",
            lambda: metadata(survivor.bootstrap, TOPIC)[1][0][0] not in (victim.node_id, -1),
        )
    assert not any(node.is_running() for node in cluster.nodes)
