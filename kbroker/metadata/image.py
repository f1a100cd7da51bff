"""The cluster metadata as one immutable value: brokers, controller, topics and every partition's leader and ISR.

A `MetadataImage` is what a node knows of the cluster at one moment. Both metadata sources produce it: the single
node's topics.json (`kbroker/metadata/local.py`) and etcd's watch cache (`kbroker/cluster/store.py`). Everything that
reads metadata (the replica manager deciding roles, Metadata/DescribeCluster responses, the group coordinator finding
a group's leader) reads an image, so what it sees is consistent: never half of a change.

The stored forms (`to_json`/`from_json`) are the values kept in etcd.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kbroker.security.image import EMPTY_SECURITY, SecurityImage

NO_LEADER = -1
UNCLEAN_LEADER_ELECTION_CONFIG = "unclean.leader.election.enable"
OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC})
DEFAULT_BROKER_ENTITY = ""
"""The broker resource name of the cluster-wide dynamic defaults (kafka-configs --entity-default)."""


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """A live broker. broker_epoch is the etcd create_revision of its registration key, as Kafka's ZooKeeper mode
    used the czxid of the broker znode: a restarted broker always gets a larger epoch."""

    node_id: int
    host: str
    port: int
    """The address of the inter-broker listener (what followers connect to)."""
    rack: str | None = None
    broker_epoch: int = -1
    endpoints: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    """Every advertised listener by name (Kafka's endpoints); empty: host and port serve every listener."""
    in_controlled_shutdown: bool = False
    """The broker is stopping (SIGTERM): the controller moves its leaderships away and takes it out of every ISR
    (as KRaft's controller does for a broker whose heartbeat asks to shut down)."""
    new_log_dir: bool = False
    """This incarnation started on a new, empty log directory (a replaced or wiped disk): whatever partition states
    written before it registered say it had, it does not have (kbroker/cluster/controller.py never elects it from
    them)."""

    def endpoint(self, listener: str) -> tuple[str, int] | None:
        """Where a client of `listener` reaches this broker; None if it has no such listener (Kafka then leaves
        the broker out of that client's Metadata)."""
        if not self.endpoints:
            return self.host, self.port
        return self.endpoints.get(listener)

    def to_json(self) -> bytes:
        obj: dict[str, Any] = {
            "node_id": self.node_id,
            "host": self.host,
            "port": self.port,
            "rack": self.rack,
            "endpoints": {name: [host, port] for name, (host, port) in self.endpoints.items()},
        }
        if self.in_controlled_shutdown:
            obj["controlled_shutdown"] = True
        if self.new_log_dir:
            obj["new_log_dir"] = True
        return _dump(obj)

    @classmethod
    def from_json(cls, data: bytes, broker_epoch: int) -> BrokerRegistration:
        obj = _load(data)
        rack = obj.get("rack")
        return cls(
            int(obj["node_id"]),
            str(obj["host"]),
            int(obj["port"]),
            None if rack is None else str(rack),
            broker_epoch,
            {str(k): (str(v[0]), int(v[1])) for k, v in dict(obj.get("endpoints", {})).items()},
            bool(obj.get("controlled_shutdown", False)),
            bool(obj.get("new_log_dir", False)),
        )

    @property
    def incarnation(self) -> tuple[str, int, int, tuple[tuple[str, tuple[str, int]], ...]]:
        """What a connection to this incarnation depends on (not its shutdown flag)."""
        return (self.host, self.port, self.broker_epoch, tuple(sorted(self.endpoints.items())))


@dataclass(frozen=True, slots=True)
class ControllerRecord:
    """Who holds the controller key. controller_epoch is the key's create_revision."""

    node_id: int
    controller_epoch: int

    def to_json(self) -> bytes:
        return _dump({"node_id": self.node_id})

    @classmethod
    def from_json(cls, data: bytes, controller_epoch: int) -> ControllerRecord:
        return cls(int(_load(data)["node_id"]), controller_epoch)


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """A topic as created: its id, partition count, replication factor and the configs set on it explicitly.

    In etcd the record itself is the creation request: the controller places the partitions in range(num_partitions)
    that have no state yet (so raising num_partitions adds partitions, CreatePartitions), on the replicas
    `assignments` names for them (CreateTopics' or CreatePartitions' explicit assignment), else where it chooses.
    """

    name: str
    topic_id: uuid.UUID
    num_partitions: int
    replication_factor: int
    configs: Mapping[str, str] = field(default_factory=dict)
    assignments: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    @property
    def is_internal(self) -> bool:
        return self.name in INTERNAL_TOPICS

    def unclean_leader_election(self, default: bool = False) -> bool:
        value = self.configs.get(UNCLEAN_LEADER_ELECTION_CONFIG)
        return default if value is None else value.strip().lower() == "true"

    def to_json(self) -> bytes:
        obj: dict[str, Any] = {
            "topic_id": str(self.topic_id),
            "partitions": self.num_partitions,
            "replication_factor": self.replication_factor,
            "configs": dict(self.configs),
        }
        if self.assignments:
            obj["assignments"] = {str(p): list(r) for p, r in sorted(self.assignments.items())}
        return _dump(obj)

    @classmethod
    def from_json(cls, name: str, data: bytes) -> TopicMetadata:
        obj = _load(data)
        configs = {str(k): str(v) for k, v in dict(obj.get("configs", {})).items()}
        assignments = {
            int(p): tuple(int(b) for b in replicas)
            for p, replicas in dict(obj.get("assignments", {})).items()
        }
        return cls(
            name,
            uuid.UUID(str(obj["topic_id"])),
            int(obj["partitions"]),
            int(obj["replication_factor"]),
            configs,
            assignments,
        )


@dataclass(frozen=True, slots=True)
class PartitionState:
    """leader/leader_epoch/isr as in Kafka's LeaderAndIsr; partition_epoch is bumped by every change (KIP-497), so a
    proposer whose partition_epoch is not the current one is proposing against stale state.

    During a reassignment (KIP-455) `replicas` is the union of the old and the target replicas, `adding_replicas`
    the target's new ones and `removing_replicas` the old ones the target drops, as in Kafka's PartitionRecord."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    partition_epoch: int
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @property
    def reassigning(self) -> bool:
        return bool(self.adding_replicas or self.removing_replicas)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        """The replicas once the reassignment (if any) completes."""
        return tuple(b for b in self.replicas if b not in self.removing_replicas)

    @property
    def original_replicas(self) -> tuple[int, ...]:
        """The replicas before the reassignment (if any) began: what cancelling it goes back to."""
        return tuple(b for b in self.replicas if b not in self.adding_replicas)

    def to_json(self) -> bytes:
        obj: dict[str, Any] = {
            "leader": self.leader,
            "leader_epoch": self.leader_epoch,
            "isr": list(self.isr),
            "replicas": list(self.replicas),
            "partition_epoch": self.partition_epoch,
        }
        if self.adding_replicas:
            obj["adding_replicas"] = list(self.adding_replicas)
        if self.removing_replicas:
            obj["removing_replicas"] = list(self.removing_replicas)
        return _dump(obj)

    @classmethod
    def from_json(cls, data: bytes) -> PartitionState:
        obj = _load(data)
        return cls(
            int(obj["leader"]),
            int(obj["leader_epoch"]),
            tuple(int(b) for b in obj["isr"]),
            tuple(int(b) for b in obj["replicas"]),
            int(obj["partition_epoch"]),
            tuple(int(b) for b in obj.get("adding_replicas", ())),
            tuple(int(b) for b in obj.get("removing_replicas", ())),
        )


@dataclass(frozen=True)
class MetadataImage:
    """An immutable view of the cluster metadata as of `revision` (etcd's revision, or the single node's own change
    counter). Do not mutate its mappings: unchanged topics are shared between consecutive images."""

    revision: int
    brokers: Mapping[int, BrokerRegistration]
    controller: ControllerRecord | None
    topics: Mapping[str, TopicMetadata]
    topic_revisions: Mapping[str, int]
    """create_revision of each topic: it tells a topic from a deleted and re-created one of the same name."""
    partitions: Mapping[str, Mapping[int, PartitionState]]
    partition_revisions: Mapping[str, Mapping[int, int]]
    """The revision of the last change of each partition's state."""
    cluster_id: str = ""
    broker_epoch: int = -1
    """The epoch of this node's own current registration; -1 while it is not a member (its leaderships are void)."""
    topics_by_id: Mapping[uuid.UUID, TopicMetadata] = field(default_factory=dict)
    security: SecurityImage = EMPTY_SECURITY
    """SCRAM credentials, ACLs and client quotas (kbroker/security/image.py)."""
    broker_configs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Dynamic broker configs (IncrementalAlterConfigs / AlterConfigs of a broker resource): under "" the
    cluster-wide defaults, under a node id's string that broker's own, as Kafka keeps them."""

    def partition(self, topic: str, partition: int) -> PartitionState | None:
        return self.partitions.get(topic, {}).get(partition)

    def partition_revision(self, topic: str, partition: int) -> int:
        return self.partition_revisions.get(topic, {}).get(partition, 0)

    def has_partition(self, topic: str, partition: int) -> bool:
        metadata = self.topics.get(topic)
        return metadata is not None and 0 <= partition < metadata.num_partitions

    def live_brokers(self) -> set[int]:
        return set(self.brokers)

    def eligible_brokers(self) -> set[int]:
        """Live brokers that may lead or join an ISR: not in controlled shutdown (KIP-841)."""
        return {b for b, reg in self.brokers.items() if not reg.in_controlled_shutdown}

    def dynamic_broker_configs(self, node_id: int) -> dict[str, str]:
        """The dynamic configs that apply to broker `node_id`: its own over the cluster-wide defaults."""
        return {
            **self.broker_configs.get(DEFAULT_BROKER_ENTITY, {}),
            **self.broker_configs.get(str(node_id), {}),
        }

    @property
    def controller_id(self) -> int:
        return self.controller.node_id if self.controller is not None else -1

    def brokers_with_new_log_dirs_since(self, revision: int) -> set[int]:
        """Live brokers that registered after `revision` on a new, empty log directory: they lost whatever a partition
        state written at `revision` says they had."""
        return {b for b, reg in self.brokers.items() if reg.broker_epoch >= revision and reg.new_log_dir}

    def brokers_registered_before(self, revision: int) -> set[int]:
        """Live brokers whose current registration is older than `revision`. A broker registered after a partition
        state was written has restarted since then: its role in that state is not its own."""
        return {b for b, reg in self.brokers.items() if reg.broker_epoch < revision}

    def is_leader(self, topic: str, partition: int, node_id: int, broker_epoch: int) -> bool:
        """Whether this incarnation (node_id at broker_epoch) leads the partition. A restarted broker does not resume
        a leadership from before its restart: it waits for the controller to elect it again."""
        state = self.partition(topic, partition)
        return (
            state is not None
            and state.leader == node_id
            and broker_epoch < self.partition_revision(topic, partition)
            and node_id in self.brokers
            and self.brokers[node_id].broker_epoch == broker_epoch
        )

    def live_leader(self, topic: str, partition: int) -> int:
        """The partition's leader if it is a live broker, else NO_LEADER (what Metadata reports: a dead leader
        cannot be reached, so clients wait and ask again)."""
        state = self.partition(topic, partition)
        if state is None or state.leader not in self.brokers:
            return NO_LEADER
        return state.leader

    def current_leader(self, topic: str, partition: int) -> tuple[int, int, BrokerRegistration | None]:
        """KIP-951's hint after NOT_LEADER_OR_FOLLOWER (or FENCED_LEADER_EPOCH): the live leader, its leader epoch
        and its registration (whose endpoint the answer lists), so a client can go there without asking Metadata
        first; (-1, -1, None) for a partition this image does not have."""
        state = self.partition(topic, partition)
        if state is None:
            return NO_LEADER, -1, None
        leader = self.live_leader(topic, partition)
        return leader, state.leader_epoch, self.brokers.get(leader)

    def topic_complete(self, name: str) -> bool:
        """The topic exists and every one of its partitions has a state (the controller has placed them)."""
        topic = self.topics.get(name)
        return topic is not None and len(self.partitions.get(name, {})) >= topic.num_partitions


EMPTY_IMAGE = MetadataImage(
    revision=0,
    brokers={},
    controller=None,
    topics={},
    topic_revisions={},
    partitions={},
    partition_revisions={},
)


def _dump(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True).encode()


def _load(data: bytes) -> dict[str, Any]:
    obj = json.loads(data)
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    return obj
