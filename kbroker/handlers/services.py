"""What request handlers may use of the broker: its services, each behind the narrow interface handlers need.

The composition root (kbroker/app.py) builds one `BrokerServices` and every request's context carries it. A handler
depends on these interfaces only, never on the server, the connection or how the services are wired, so each can be
tested in process against real services on a temporary data directory.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kbroker.clock import Clock
from kbroker.common import TopicPartition
from kbroker.config import BrokerConfig
from kbroker.coordinator.coordinator import (
    GroupDescription,
    GroupListing,
    OffsetDeleteResult,
    OffsetFetchResult,
)
from kbroker.coordinator.group import (
    JoinRequest,
    JoinResult,
    LeaveResult,
    MemberIdentity,
    SyncRequest,
    SyncResult,
)
from kbroker.coordinator.offsets import OffsetCommitEntry, PartitionResult
from kbroker.log.producer_state import ProducerStateEntry
from kbroker.metadata.api import MetadataView, ProducerIdManager, SecurityAdmin, TopicAdmin
from kbroker.metadata.image import BrokerRegistration
from kbroker.replication.partition import PartitionRead
from kbroker.replication.replica_manager import FetchParams, ProduceResult
from kbroker.security.authorizer import AllowAll, Authorizer
from kbroker.security.quotas import ClientQuotas
from kbroker.security.sasl import SaslAuthenticator
from protocol.errors import ErrorCode


class Replicas(Protocol):
    """The partitions of this node (kbroker/replication/replica_manager.py)."""

    def append_records(
        self,
        entries: Iterable[tuple[TopicPartition, bytearray]],
        *,
        required_acks: int,
        now_ms: int,
        internal_topics_allowed: bool = False,
    ) -> list[ProduceResult]: ...

    async def wait_for_acks(self, results: Sequence[ProduceResult], timeout_ms: int) -> None: ...

    async def fetch_messages(self, params: FetchParams) -> list[PartitionRead]: ...

    def list_offset(
        self,
        tp: TopicPartition,
        timestamp: int,
        current_leader_epoch: int,
        replica_id: int,
        isolation_level: int = 0,
    ) -> tuple[int, int, int]: ...

    def last_offset_for_leader_epoch(
        self, tp: TopicPartition, current_leader_epoch: int, leader_epoch: int
    ) -> tuple[int, int]: ...

    def active_producers(self, tp: TopicPartition) -> list[ProducerStateEntry]: ...


class Groups(Protocol):
    """The consumer group APIs (kbroker/coordinator/runtime.py)."""

    async def join_group(self, group_id: str, request: JoinRequest) -> JoinResult: ...

    async def sync_group(self, group_id: str, request: SyncRequest) -> SyncResult: ...

    async def heartbeat(
        self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> ErrorCode: ...

    async def leave_group(self, group_id: str, members: Sequence[MemberIdentity]) -> LeaveResult: ...

    async def commit_offsets(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Sequence[OffsetCommitEntry],
        retention_time_ms: int = -1,
    ) -> tuple[PartitionResult, ...]: ...

    def fetch_offsets(
        self, group_id: str, topics: Sequence[tuple[str, Sequence[int]]] | None
    ) -> OffsetFetchResult: ...

    def describe_group(self, group_id: str) -> GroupDescription: ...

    def list_groups(
        self, states_filter: Collection[str] = (), types_filter: Collection[str] = ()
    ) -> list[GroupListing]: ...

    async def delete_groups(self, group_ids: Sequence[str]) -> tuple[tuple[str, ErrorCode], ...]: ...

    async def delete_offsets(
        self, group_id: str, topics: Sequence[tuple[str, Sequence[int]]]
    ) -> OffsetDeleteResult: ...


class CoordinatorLocator(Protocol):
    """FindCoordinator's question (kbroker/coordinator/wiring.py)."""

    def find_group_coordinator(self, group_id: str) -> BrokerRegistration: ...


@dataclass(frozen=True, slots=True)
class BrokerServices:
    config: BrokerConfig
    clock: Clock
    metadata: MetadataView
    topic_admin: TopicAdmin
    producer_ids: ProducerIdManager
    replicas: Replicas
    groups: Groups
    coordinators: CoordinatorLocator
    security_admin: SecurityAdmin
    sasl: SaslAuthenticator | None = None
    """None when no listener uses SASL."""
    authorizer: Authorizer = field(default_factory=AllowAll)
    quotas: ClientQuotas = field(default_factory=lambda: ClientQuotas(11, 1))
