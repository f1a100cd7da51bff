"""Cluster metadata held in memory, for running the real broker core in process with several brokers' worth of roles.

`MemoryMetadata` implements the same three interfaces as the single node's files and etcd (kbroker/metadata/api.py),
so `kbroker.app.open_broker(config, metadata=...)` builds an unchanged broker on it. What etcd and the controller would
do is done by the test: `set_partition` moves a leadership or changes an ISR (bumping the epochs as the controller
does), `set_brokers` changes who is live. AlterPartition is judged by the controller's own rule
(kbroker.cluster.metadata.alter_isr), so ISR changes a leader proposes take effect as they would in a cluster.
It stands in for etcd, not for the broker: everything above the metadata store is the real code.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

import trio

from kbroker.cluster.metadata import alter_isr, initial_partition_state
from kbroker.common import KafkaError, TopicPartition
from kbroker.config import BrokerConfig
from kbroker.metadata.api import ConfigChange
from kbroker.metadata.image import (
    BrokerRegistration,
    ControllerRecord,
    MetadataImage,
    PartitionState,
    TopicMetadata,
)
from kbroker.metadata.publisher import ImagePublisher
from kbroker.metadata.topics import check_new_partitions, check_new_topic
from kbroker.security.image import EMPTY_SECURITY, SecurityChange
from protocol.errors import ErrorCode
from protocol.primitives import ZERO_UUID

BROKER_EPOCH = 1


class MemoryMetadata(ImagePublisher):
    def __init__(
        self, config: BrokerConfig, brokers: Mapping[int, tuple[str, int]], cluster_id: str = "memory"
    ) -> None:
        self._config = config
        self._node_id = config.node_id
        self._revision = BROKER_EPOCH
        self._brokers = {
            node: BrokerRegistration(node, host, port, None, BROKER_EPOCH)
            for node, (host, port) in brokers.items()
        }
        self._topics: dict[str, TopicMetadata] = {}
        self._topic_revisions: dict[str, int] = {}
        self._partitions: dict[str, dict[int, PartitionState]] = {}
        self._partition_revisions: dict[str, dict[int, int]] = {}
        self._broker_configs: dict[str, dict[str, str]] = {}
        self._cluster_id = cluster_id
        self._next_producer_id = 0
        self._security = EMPTY_SECURITY
        super().__init__(self._build())
        self.alter_partition_calls: list[tuple[TopicPartition, tuple[int, ...]]] = []

    # ---- MetadataView ------------------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        self._publish(self._build())
        task_status.started()
        await trio.sleep_forever()

    async def alter_partition(
        self,
        tp: TopicPartition,
        *,
        leader_id: int,
        broker_epoch: int,
        leader_epoch: int,
        partition_epoch: int,
        new_isr: Collection[int],
    ) -> PartitionState:
        await trio.lowlevel.checkpoint()
        self.alter_partition_calls.append((tp, tuple(new_isr)))
        state = self._partitions[tp.topic][tp.partition]
        new_state = alter_isr(
            state,
            leader_id=leader_id,
            leader_epoch=leader_epoch,
            partition_epoch=partition_epoch,
            new_isr=new_isr,
            live_brokers=self._brokers,
        )
        if new_state is not state:
            self._put(tp, new_state)
        return new_state

    # ---- TopicAdmin and ProducerIdManager ----------------------------------------------------------------------

    async def create_topic(
        self,
        name: str,
        num_partitions: int,
        replication_factor: int,
        configs: Mapping[str, str],
        *,
        validate_only: bool = False,
        assignments: Mapping[int, Sequence[int]] | None = None,
    ) -> TopicMetadata:
        await trio.lowlevel.checkpoint()
        check_new_topic(self._image, self._config, name, num_partitions, replication_factor, configs)
        if validate_only:
            return TopicMetadata(name, ZERO_UUID, num_partitions, replication_factor, dict(configs))
        topic = TopicMetadata(name, uuid.uuid4(), num_partitions, replication_factor, dict(configs))
        self._revision += 1
        self._topics[name] = topic
        self._topic_revisions[name] = self._revision
        # This node first (it leads every new partition), then the others in id order: predictable roles for tests.
        replicas = (self._node_id, *sorted(b for b in self._brokers if b != self._node_id))[
            :replication_factor
        ]
        self._partitions[name] = {p: initial_partition_state(replicas) for p in range(num_partitions)}
        self._partition_revisions[name] = dict.fromkeys(range(num_partitions), self._revision)
        self._publish(self._build())
        return topic

    async def delete_topic(self, name: str) -> None:
        await trio.lowlevel.checkpoint()
        if self._topics.pop(name, None) is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        self._partitions.pop(name)
        self._partition_revisions.pop(name)
        self._topic_revisions.pop(name)
        self._revision += 1
        self._publish(self._build())

    async def create_partitions(
        self,
        name: str,
        total: int,
        assignments: Sequence[Sequence[int]] | None,
        *,
        validate_only: bool = False,
    ) -> TopicMetadata:
        await trio.lowlevel.checkpoint()
        check_new_partitions(self._image, name, total, assignments)
        topic = replace(self._topics[name], num_partitions=total)
        if validate_only:
            return topic
        self._revision += 1
        self._topics[name] = topic
        state = next(iter(self._partitions[name].values()))
        for p in range(len(self._partitions[name]), total):
            self._partitions[name][p] = initial_partition_state(state.replicas)
            self._partition_revisions[name][p] = self._revision
        self._publish(self._build())
        return topic

    async def alter_topic_configs(
        self, name: str, change: ConfigChange, *, validate_only: bool = False
    ) -> None:
        await trio.lowlevel.checkpoint()
        topic = self._topics[name]
        configs = dict(change(topic.configs))
        if not validate_only:
            self._revision += 1
            self._topics[name] = replace(topic, configs=configs)
            self._publish(self._build())

    async def alter_broker_configs(
        self, entity: str, change: ConfigChange, *, validate_only: bool = False
    ) -> None:
        await trio.lowlevel.checkpoint()
        configs = dict(change(self._broker_configs.get(entity, {})))
        if not validate_only:
            self._revision += 1
            self._broker_configs[entity] = configs
            self._publish(self._build())

    # ---- ClusterAdmin: the test moves leaders itself (set_partition) ----------------------------------------------

    async def elect_leaders(
        self, election_type: int, partitions: Collection[TopicPartition]
    ) -> dict[TopicPartition, KafkaError | None]:
        await trio.lowlevel.checkpoint()
        return dict.fromkeys(partitions, KafkaError(ErrorCode.INVALID_REQUEST, "not modelled in memory"))

    async def alter_reassignments(
        self, targets: Mapping[TopicPartition, Sequence[int] | None]
    ) -> dict[TopicPartition, KafkaError | None]:
        await trio.lowlevel.checkpoint()
        return dict.fromkeys(targets, KafkaError(ErrorCode.INVALID_REQUEST, "not modelled in memory"))

    async def controlled_shutdown(self, timeout_s: float) -> None:
        await trio.lowlevel.checkpoint()

    async def next_producer_id(self) -> int:
        await trio.lowlevel.checkpoint()
        self._next_producer_id += 1
        return self._next_producer_id - 1

    async def alter_security(self, change: SecurityChange) -> None:
        await trio.lowlevel.checkpoint()
        self._security = change.apply(self._security)
        self._revision += 1
        self._publish(self._build())

    # ---- what the controller would do --------------------------------------------------------------------------

    def set_partition(
        self,
        tp: TopicPartition,
        *,
        leader: int,
        isr: tuple[int, ...],
        replicas: tuple[int, ...] | None = None,
    ) -> PartitionState:
        """Move a partition's leadership or change its ISR, as the controller writes it (a new leader bumps the
        leader epoch)."""
        state = self._partitions[tp.topic][tp.partition]
        epoch = state.leader_epoch + (1 if leader != state.leader else 0)
        new_state = PartitionState(
            leader,
            epoch,
            isr,
            replicas if replicas is not None else state.replicas,
            state.partition_epoch + 1,
        )
        self._put(tp, new_state)
        return new_state

    def set_brokers(self, live: Collection[int]) -> None:
        """Only these brokers stay registered (the others' leases lapsed)."""
        self._brokers = {node: reg for node, reg in self._brokers.items() if node in live}
        self._revision += 1
        self._publish(self._build())

    def state(self, tp: TopicPartition) -> PartitionState:
        return self._partitions[tp.topic][tp.partition]

    # ---- images ------------------------------------------------------------------------------------------------

    def _put(self, tp: TopicPartition, state: PartitionState) -> None:
        self._revision += 1
        self._partitions[tp.topic][tp.partition] = state
        self._partition_revisions[tp.topic][tp.partition] = self._revision
        self._publish(self._build())

    def _build(self) -> MetadataImage:
        return MetadataImage(
            security=self._security,
            revision=self._revision,
            brokers=dict(self._brokers),
            controller=ControllerRecord(self._node_id, BROKER_EPOCH),
            topics=dict(self._topics),
            topic_revisions=dict(self._topic_revisions),
            partitions={name: dict(states) for name, states in self._partitions.items()},
            partition_revisions={name: dict(revs) for name, revs in self._partition_revisions.items()},
            cluster_id=self._cluster_id,
            broker_epoch=BROKER_EPOCH if self._node_id in self._brokers else -1,
            topics_by_id={t.topic_id: t for t in self._topics.values()},
            broker_configs={entity: dict(configs) for entity, configs in self._broker_configs.items()},
        )
