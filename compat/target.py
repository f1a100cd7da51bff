"""The broker a compat scenario runs against."""

from __future__ import annotations

import time
import uuid
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from protocol.errors import ErrorCode
from protocol.messages.create_topics_request import CreatableTopic, CreatableTopicConfig, CreateTopicsRequest
from protocol.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from tests.broker_process import BrokerProcess
from tests.test_groups_support import Wire

TOPIC_READY_TIMEOUT_S = 30.0
LATEST = -1  # ListOffsets' timestamp for the high watermark


@dataclass(frozen=True)
class Target:
    """A broker under test: its name in test ids and where clients connect. `process` is set for a broker the
    suite started, a kbroker or an Apache Kafka (a KafkaProcess); None for an external broker or a container.
    A cluster started here lists its nodes in `nodes` and wants its topics at `replication_factor`."""

    name: str
    bootstrap: str
    process: BrokerProcess | None = None
    replication_factor: int = 1
    nodes: tuple[BrokerProcess, ...] = ()

    def topic(self, prefix: str) -> str:
        """A topic name no earlier scenario used, so a long-lived broker can serve many runs."""
        return f"{prefix}-{uuid.uuid4().hex[:12]}"

    def create_topic(self, topic: str, partitions: int, configs: Mapping[str, str] | None = None) -> None:
        """CreateTopics (our own codec) at the target's replication factor, then wait_topic_ready."""
        request = CreateTopicsRequest(
            topics=[
                CreatableTopic(
                    name=topic,
                    num_partitions=partitions,
                    replication_factor=self.replication_factor,
                    configs=[CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()],
                )
            ],
            timeout_ms=30_000,
        )
        with Wire(self.bootstrap.split(",")[0], client_id="compat-create-topic") as wire:
            response = wire.call(request, 7)
        (result,) = response.topics
        assert result.error_code == ErrorCode.NONE, (
            f"CreateTopics {topic}: {result.error_code} {result.error_message}"
        )
        self.wait_topic_ready(topic, partitions)

    def wait_topic_ready(self, topic: str, partitions: int, timeout: float = TOPIC_READY_TIMEOUT_S) -> None:
        """Return once every partition of a topic just created has a leader that answers ListOffsets for it
        (and, on a replicated target, all `replication_factor` replicas in sync).

        Apache Kafka (KRaft) answers CreateTopics as soon as its controller has committed the topic; the brokers
        create the partitions a moment later, and a produce in between gets NOT_LEADER_OR_FOLLOWER. A client
        without idempotence and with several requests in flight retries that batch behind later ones, out of send
        order (confluent-kafka against Kafka 4.3.1 did). Kafka's own tests wait like this after creating a topic.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                waiting = self._partitions_not_ready(topic, partitions)
            except OSError as error:
                waiting = {-1: f"{type(error).__name__}: {error}"}
            if not waiting:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"topic {topic} not ready after {timeout} s: {waiting}")
            time.sleep(0.05)

    def _partitions_not_ready(self, topic: str, partitions: int) -> dict[int, str]:
        """partition -> why it is not ready yet; empty when all are."""
        with Wire(self.bootstrap.split(",")[0], client_id="compat-topic-ready") as wire:
            metadata = wire.call(
                MetadataRequest(topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False),
                12,
            )
        addresses = {broker.node_id: f"{broker.host}:{broker.port}" for broker in metadata.brokers}
        by_leader: dict[int, list[int]] = defaultdict(list)
        out_of_sync: dict[int, str] = {}
        for answer in metadata.topics:
            for partition in answer.partitions:
                if partition.error_code == 0 and partition.leader_id in addresses:
                    by_leader[partition.leader_id].append(partition.partition_index)
                if len(partition.isr_nodes) < self.replication_factor:
                    out_of_sync[partition.partition_index] = f"in-sync replicas {partition.isr_nodes}"
        waiting = {p: "no leader in Metadata" for p in range(partitions)}
        for leader, indexes in by_leader.items():
            request = ListOffsetsRequest(
                replica_id=-1,
                topics=[
                    ListOffsetsTopic(
                        name=topic,
                        partitions=[
                            ListOffsetsPartition(partition_index=p, timestamp=LATEST) for p in indexes
                        ],
                    )
                ],
            )
            with Wire(addresses[leader], client_id="compat-topic-ready") as wire:
                response = wire.call(request, 7)
            for answer in response.topics:
                for partition in answer.partitions:
                    if partition.error_code == 0:
                        waiting.pop(partition.partition_index, None)
                    else:
                        waiting[partition.partition_index] = f"ListOffsets error {partition.error_code}"
        return {**waiting, **out_of_sync}
