"""What differs between a single node and a cluster: three narrow interfaces, each with two implementations.

| interface          | single node (kbroker/metadata/local.py)  | cluster (kbroker/cluster/etcd_metadata.py)        |
|--------------------|------------------------------------------|---------------------------------------------------|
| `MetadataView`     | topics.json; this node leads everything  | etcd's watch cache; roles from the controller     |
| `TopicAdmin`       | writes topics.json                       | writes the topic record; the controller places it |
| `ClusterAdmin`     | one replica: nothing to elect or move    | compare-and-swap of partition states in etcd      |
| `ProducerIdManager`| blocks reserved in a file                | blocks reserved with a compare-and-swap in etcd   |
| `SecurityAdmin`    | security.json (credentials, ACLs, quotas)| keys under scram/, acls/, quotas/ in etcd         |

Everything else (partitions, replication, the purgatory, the group coordinator, the handlers) is the same code for
both. Images reach the rest of the broker through publishers: `subscribe(fn)` before `run`, and every new image is
handed to each publisher in order, synchronously, before anyone can observe it (the composition root subscribes the
replica manager first, then the group coordinator).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Protocol

import trio

from kbroker.common import KafkaError, TopicPartition
from kbroker.metadata.image import MetadataImage, PartitionState, TopicMetadata
from kbroker.security.image import SecurityChange

MetadataPublisher = Callable[[MetadataImage], None]
ConfigChange = Callable[[Mapping[str, str]], Mapping[str, str]]
"""The new configs of a resource from its current ones (KafkaError to refuse); applied atomically by the store."""
PREFERRED_ELECTION = 0
UNCLEAN_ELECTION = 1


class MetadataView(Protocol):
    def image(self) -> MetadataImage:
        """The latest published image."""
        ...

    def subscribe(self, publisher: MetadataPublisher) -> None:
        """Have `publisher` called with every image published from now on."""
        ...

    async def wait_for(
        self, predicate: Callable[[MetadataImage], bool], timeout_s: float
    ) -> MetadataImage | None:
        """The first published image (the current one included) satisfying `predicate`; None after `timeout_s`."""
        ...

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
        """A partition leader's ISR change (Kafka's AlterPartition), validated against the current state; the new
        state, or KafkaError (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, INELIGIBLE_REPLICA, STALE_BROKER_EPOCH,
        REQUEST_TIMED_OUT when the store is unreachable)."""
        ...


class TopicAdmin(Protocol):
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
        """Create a topic (KafkaError if refused), returning once this node's image shows it with every partition
        placed (on `assignments`, partition -> replicas, where given). With validate_only, only check that it could
        be created."""
        ...

    async def delete_topic(self, name: str) -> None:
        """Delete a topic (KafkaError if refused), returning once this node's image no longer shows it."""
        ...

    async def create_partitions(
        self,
        name: str,
        total: int,
        assignments: Sequence[Sequence[int]] | None,
        *,
        validate_only: bool = False,
    ) -> TopicMetadata:
        """Raise a topic's partition count to `total` (CreatePartitions), the new partitions on `assignments` if
        given; returns once this node's image shows them placed."""
        ...

    async def alter_topic_configs(
        self, name: str, change: ConfigChange, *, validate_only: bool = False
    ) -> None:
        """Replace a topic's configs with `change(current)`, atomically; returns once this node's image shows it."""
        ...

    async def alter_broker_configs(
        self, entity: str, change: ConfigChange, *, validate_only: bool = False
    ) -> None:
        """The same for the dynamic configs of broker `entity` (its id), or of every broker ("")."""
        ...


class ClusterAdmin(Protocol):
    async def elect_leaders(
        self, election_type: int, partitions: Collection[TopicPartition]
    ) -> dict[TopicPartition, KafkaError | None]:
        """ElectLeaders (PREFERRED_ELECTION or UNCLEAN_ELECTION) of each partition: None where a leader was elected,
        else why not (ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE, ...)."""
        ...

    async def alter_reassignments(
        self, targets: Mapping[TopicPartition, Sequence[int] | None]
    ) -> dict[TopicPartition, KafkaError | None]:
        """AlterPartitionReassignments: move each partition to its target replicas (None cancels the reassignment
        in progress); None where accepted, else why not."""
        ...

    async def controlled_shutdown(self, timeout_s: float) -> None:
        """Before this node stops: have its leaderships moved to other in-sync replicas and wait (at most
        `timeout_s`) until none is left that could move."""
        ...


class ProducerIdManager(Protocol):
    async def next_producer_id(self) -> int:
        """A producer id never handed out before by any node of the cluster, across restarts."""
        ...


class SecurityAdmin(Protocol):
    async def alter_security(self, change: SecurityChange) -> None:
        """Apply one change of SCRAM credentials, ACLs and client quotas atomically, returning once this node's
        image shows it (KafkaError REQUEST_TIMED_OUT when the store is unreachable)."""
        ...


class MetadataService(MetadataView, TopicAdmin, ClusterAdmin, ProducerIdManager, SecurityAdmin, Protocol):
    """One object implementing the five, plus the task that publishes its images (LocalMetadata, EtcdMetadata)."""

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Publish the current image (started once it is published), then every change, until cancelled."""
        ...
