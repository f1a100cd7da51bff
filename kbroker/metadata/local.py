"""The metadata of a single node: topics (and the dynamic broker configs) in `topics.json`, producer ids in
`producer-ids`, in the data directory.

A single node is a cluster of one: its image names itself as the only live broker and the controller, and every
partition with itself as leader (epoch 0) and only in-sync replica, so there is never a leader to elect or a replica
to move (ElectLeaders answers ELECTION_NOT_NEEDED, a reassignment can only name this node). Changes (topics, their
partition counts and configs, dynamic broker configs) are written to `topics.json` atomically (temporary file, fsync,
rename, fsync of the directory), so a crash leaves either the old or the new file, then published as a new image. In
a cluster the same facts live in etcd (kbroker/cluster/etcd_metadata.py).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import trio

from kbroker.common import KafkaError, TopicPartition
from kbroker.config import BrokerConfig
from kbroker.log.files import replace_file
from kbroker.metadata.api import ConfigChange
from kbroker.metadata.image import (
    BrokerRegistration,
    ControllerRecord,
    MetadataImage,
    PartitionState,
    TopicMetadata,
)
from kbroker.metadata.publisher import ImagePublisher
from kbroker.metadata.topics import (
    UNKNOWN_TOPIC_MESSAGE,
    UnknownTopic,
    check_new_partitions,
    check_new_topic,
    validate_replicas,
)
from kbroker.security.image import EMPTY_SECURITY, SecurityChange, SecurityImage
from protocol.errors import ErrorCode
from protocol.primitives import ZERO_UUID

log = logging.getLogger(__name__)

TOPICS_FILE = "topics.json"
PRODUCER_IDS_FILE = "producer-ids"
SECURITY_FILE = "security.json"
PRODUCER_ID_BLOCK_SIZE = 1000
# This node's registration, as if made at revision 0: every partition state (revision >= 1) is newer, so the node
# leads them all (see MetadataImage.is_leader).
_BROKER_EPOCH = 0


def _write_durably(path: Path, data: bytes) -> None:
    replace_file(path, data, fsync=True, fsync_dir=True)


class LocalMetadata(ImagePublisher):
    """MetadataView, TopicAdmin and ProducerIdManager of a single node."""

    def __init__(
        self,
        config: BrokerConfig,
        cluster_id: str,
        host: str,
        port: int,
        endpoints: Mapping[str, tuple[str, int]] | None = None,
    ) -> None:
        self._config = config
        self._node_id = config.node_id
        self._topics_path = config.data_dir / TOPICS_FILE
        self._producer_ids_path = config.data_dir / PRODUCER_IDS_FILE
        self._security_path = config.data_dir / SECURITY_FILE
        self._security = _read_security(self._security_path)
        self._broker = BrokerRegistration(
            self._node_id, host, port, None, _BROKER_EPOCH, dict(endpoints or {})
        )
        self._cluster_id = cluster_id
        topics, broker_configs = _read_topics(self._topics_path)
        self._topics: dict[str, TopicMetadata] = {t.name: t for t in topics}
        self._broker_configs: dict[str, dict[str, str]] = broker_configs
        self._topic_revisions = dict.fromkeys(self._topics, 1)
        self._revision = 1
        super().__init__(self._build(None))
        self._next_producer_id = _read_producer_id_end(self._producer_ids_path)
        self._producer_id_end = self._next_producer_id

    # ---- MetadataView ------------------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Publish the image read at start-up; every later change is published by the call that makes it."""
        self._publish(self._image)
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
        # The only replica is the leader itself, so its ISR can never change.
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"{tp} has no followers on a single node")

    # ---- TopicAdmin --------------------------------------------------------------------------------------------

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
        # (an explicit assignment can only name this node, the one registered broker: CreateTopics checks it)
        check_new_topic(self._image, self._config, name, num_partitions, replication_factor, configs)
        if validate_only:
            await trio.lowlevel.checkpoint()
            return TopicMetadata(name, ZERO_UUID, num_partitions, replication_factor, dict(configs))
        topic = TopicMetadata(name, uuid.uuid4(), num_partitions, replication_factor, dict(configs))
        self._topics[name] = topic
        self._save()
        self._revision += 1
        self._topic_revisions[name] = self._revision
        log.info("created topic %s with %d partitions", name, num_partitions)
        self._publish(self._build(self._image))
        await trio.lowlevel.checkpoint()
        return topic

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
        topic = dataclasses.replace(self._topics[name], num_partitions=total)
        if validate_only:
            return topic
        self._change_topic(topic)
        log.info("topic %s now has %d partitions", name, total)
        return topic

    async def alter_topic_configs(
        self, name: str, change: ConfigChange, *, validate_only: bool = False
    ) -> None:
        await trio.lowlevel.checkpoint()
        topic = self._topics.get(name)
        if topic is None:
            raise UnknownTopic(UNKNOWN_TOPIC_MESSAGE)
        configs = dict(change(topic.configs))
        if not validate_only and configs != topic.configs:
            self._change_topic(dataclasses.replace(topic, configs=configs))
            log.info("topic %s configs: %s", name, configs)

    async def alter_broker_configs(
        self, entity: str, change: ConfigChange, *, validate_only: bool = False
    ) -> None:
        await trio.lowlevel.checkpoint()
        current = self._broker_configs.get(entity, {})
        configs = dict(change(current))
        if validate_only or configs == current:
            return
        if configs:
            self._broker_configs[entity] = configs
        else:
            self._broker_configs.pop(entity, None)
        self._save()
        self._revision += 1
        log.info("dynamic configs of %s: %s", f"broker {entity}" if entity else "every broker", configs)
        self._publish(self._build(self._image))

    def _change_topic(self, topic: TopicMetadata) -> None:
        self._topics[topic.name] = topic
        self._save()
        self._revision += 1
        self._publish(self._build(self._image))

    # ---- ClusterAdmin: one replica of everything ---------------------------------------------------------------

    async def elect_leaders(
        self, election_type: int, partitions: Collection[TopicPartition]
    ) -> dict[TopicPartition, KafkaError | None]:
        await trio.lowlevel.checkpoint()
        not_needed = KafkaError(
            ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."
        )
        return {tp: self._sole_replica(tp) or not_needed for tp in partitions}

    async def alter_reassignments(
        self, targets: Mapping[TopicPartition, Sequence[int] | None]
    ) -> dict[TopicPartition, KafkaError | None]:
        await trio.lowlevel.checkpoint()
        results: dict[TopicPartition, KafkaError | None] = {}
        for tp, target in targets.items():
            error = self._sole_replica(tp)
            if error is None and target is None:
                error = KafkaError(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS)  # with no message, as Kafka
            elif error is None and target is not None:
                try:
                    validate_replicas(target, self._image.brokers, f"partition {tp.partition}")
                except KafkaError as exc:
                    error = exc
            results[tp] = error
        return results

    async def controlled_shutdown(self, timeout_s: float) -> None:
        # Nothing can move: this node holds the only replica of every partition.
        await trio.lowlevel.checkpoint()

    def _sole_replica(self, tp: TopicPartition) -> KafkaError | None:
        if self._image.has_partition(tp.topic, tp.partition):
            return None
        return UnknownTopic(UNKNOWN_TOPIC_MESSAGE)

    async def delete_topic(self, name: str) -> None:
        if self._topics.pop(name, None) is None:
            raise KafkaError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."
            )
        self._topic_revisions.pop(name, None)
        self._save()
        self._revision += 1
        log.info("deleted topic %s", name)
        self._publish(self._build(self._image))
        await trio.lowlevel.checkpoint()

    # ---- SecurityAdmin ---------------------------------------------------------------------------------------

    async def alter_security(self, change: SecurityChange) -> None:
        security = change.apply(self._security)
        _write_durably(
            self._security_path, json.dumps({"version": 1, **security.to_json()}, indent=1).encode()
        )
        self._security = security
        self._revision += 1
        self._publish(self._build(self._image))
        await trio.lowlevel.checkpoint()

    # ---- ProducerIdManager -------------------------------------------------------------------------------------

    async def next_producer_id(self) -> int:
        """Ids are reserved 1000 at a time, the end of the block written durably before any of it is handed out, so
        a crash can only skip ids, never reuse one."""
        if self._next_producer_id >= self._producer_id_end:
            end = self._next_producer_id + PRODUCER_ID_BLOCK_SIZE
            _write_durably(self._producer_ids_path, f"{end}\n".encode())
            self._producer_id_end = end
        producer_id = self._next_producer_id
        self._next_producer_id += 1
        await trio.lowlevel.checkpoint()
        return producer_id

    # ---- images ------------------------------------------------------------------------------------------------

    def _build(self, previous: MetadataImage | None) -> MetadataImage:
        """This node leads every partition at epoch 0, alone in its ISR. Unchanged topics share their partition
        maps with the previous image, so a topic change costs its own partitions, not every topic's."""
        node = self._node_id
        partitions: dict[str, Mapping[int, PartitionState]] = {}
        revisions: dict[str, Mapping[int, int]] = {}
        for name, topic in self._topics.items():
            revision = self._topic_revisions[name]
            if previous is not None and previous.topics.get(name) == topic:
                partitions[name] = previous.partitions[name]
                revisions[name] = previous.partition_revisions[name]
                continue
            state = PartitionState(node, 0, (node,), (node,), 0)
            partitions[name] = dict.fromkeys(range(topic.num_partitions), state)
            revisions[name] = dict.fromkeys(range(topic.num_partitions), revision)
        return MetadataImage(
            revision=self._revision,
            brokers={node: self._broker},
            controller=ControllerRecord(node, 0),
            topics=dict(self._topics),
            topic_revisions=dict(self._topic_revisions),
            partitions=partitions,
            partition_revisions=revisions,
            cluster_id=self._cluster_id,
            broker_epoch=_BROKER_EPOCH,
            topics_by_id={t.topic_id: t for t in self._topics.values()},
            security=self._security,
            broker_configs={entity: dict(configs) for entity, configs in self._broker_configs.items()},
        )

    def _save(self) -> None:
        doc = {
            "version": 1,
            "broker_configs": self._broker_configs,
            "topics": [
                {
                    "name": t.name,
                    "topic_id": str(t.topic_id),
                    "num_partitions": t.num_partitions,
                    "replication_factor": t.replication_factor,
                    "configs": dict(t.configs),
                }
                for t in self._topics.values()
            ],
        }
        _write_durably(self._topics_path, json.dumps(doc, indent=1).encode())


def _read_topics(path: Path) -> tuple[list[TopicMetadata], dict[str, dict[str, str]]]:
    """The topics and the dynamic broker configs."""
    if not path.exists():
        return [], {}
    doc = json.loads(path.read_text())
    topics = [
        TopicMetadata(
            name=raw["name"],
            topic_id=uuid.UUID(raw["topic_id"]),
            num_partitions=raw["num_partitions"],
            replication_factor=raw["replication_factor"],
            configs=dict(raw["configs"]),
        )
        for raw in doc["topics"]
    ]
    broker_configs = {str(entity): dict(configs) for entity, configs in doc.get("broker_configs", {}).items()}
    return topics, broker_configs


def _read_security(path: Path) -> SecurityImage:
    if not path.exists():
        return EMPTY_SECURITY
    return SecurityImage.from_json(json.loads(path.read_text()))


def _read_producer_id_end(path: Path) -> int:
    return int(path.read_text().strip()) if path.exists() else 0
