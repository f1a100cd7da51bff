"""What request handlers may use of the broker: its services, each behind the narrow interface handlers need.

The composition root (kbroker/app.py) builds one `BrokerServices` and every request's context carries it. A handler
depends on these interfaces only, never on the server, the connection or how the services are wired, so each can be
tested in process against real services on a temporary data directory.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kbroker.clock import Clock, SystemClock
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
from kbroker.handlers.topic_descriptions import TopicDescriptions
from kbroker.log.producer_state import ProducerStateEntry, VerificationGuard
from kbroker.metadata.api import ClusterAdmin, MetadataView, ProducerIdManager, SecurityAdmin, TopicAdmin
from kbroker.metadata.image import BrokerRegistration
from kbroker.replication.fetch_session import FetchManager, FetchSessionCache
from kbroker.replication.partition import PartitionRead
from kbroker.replication.replica_manager import (
    FetchParams,
    LogDirPartition,
    PlanT,
    ProduceResult,
    SessionChanges,
)
from kbroker.security.authorizer import AllowAll, Authorizer
from kbroker.security.quotas import ClientQuotas
from kbroker.security.sasl import SaslAuthenticator
from kbroker.transaction.coordinator import TxnDescription, TxnListing
from kbroker.transaction.markers import Marker
from protocol.errors import ErrorCode


class Replicas(Protocol):
    """The partitions of this node (kbroker/replication/replica_manager.py)."""

    def append_records(
        self,
        entries: Iterable[tuple[TopicPartition, bytes | bytearray | memoryview]],
        *,
        required_acks: int,
        now_ms: int,
        internal_topics_allowed: bool = False,
        from_client: bool = True,
        verification_guards: Mapping[TopicPartition, VerificationGuard] | None = None,
    ) -> list[ProduceResult]: ...

    def begin_transaction_verification(
        self, producer_id: int, partitions: Iterable[TopicPartition], now_ms: int
    ) -> dict[TopicPartition, VerificationGuard]: ...

    async def wait_for_acks(self, results: Sequence[ProduceResult], timeout_ms: int) -> None: ...

    async def fetch_messages(self, params: FetchParams) -> list[PartitionRead]: ...

    async def fetch_in_session(
        self, session: SessionChanges, plan: Callable[[], PlanT]
    ) -> tuple[PlanT, list[PartitionRead]]: ...

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

    async def delete_records(self, tp: TopicPartition, offset: int, timeout_ms: int) -> int: ...

    def log_dir_partitions(self, topics: Mapping[str, Collection[int]] | None) -> list[LogDirPartition]: ...


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
        self, group_id: str, topics: Sequence[tuple[str, Sequence[int]]] | None, require_stable: bool = False
    ) -> OffsetFetchResult: ...

    async def txn_commit_offsets(
        self,
        transactional_id: str,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Sequence[OffsetCommitEntry],
    ) -> tuple[PartitionResult, ...]: ...

    def describe_group(self, group_id: str) -> GroupDescription: ...

    def list_groups(
        self, states_filter: Collection[str] = (), types_filter: Collection[str] = ()
    ) -> list[GroupListing]: ...

    async def delete_groups(self, group_ids: Sequence[str]) -> tuple[tuple[str, ErrorCode], ...]: ...

    async def delete_offsets(
        self, group_id: str, topics: Sequence[tuple[str, Sequence[int]]]
    ) -> OffsetDeleteResult: ...


class Transactions(Protocol):
    """The transaction coordinator and the markers this node writes (kbroker/transaction/service.py)."""

    def find_coordinator(self, transactional_id: str) -> BrokerRegistration: ...

    async def init_producer_id(
        self, transactional_id: str, timeout_ms: int, producer_id: int, producer_epoch: int
    ) -> tuple[ErrorCode, int, int]: ...

    async def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> ErrorCode: ...

    async def add_offsets(
        self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str
    ) -> ErrorCode: ...

    def verify_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]: ...

    async def verify_for_produce(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Sequence[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]: ...

    async def end_txn(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool
    ) -> ErrorCode: ...

    async def write_markers(self, markers: Sequence[Marker]) -> list[dict[TopicPartition, ErrorCode]]: ...

    def describe(self, transactional_id: str) -> TxnDescription: ...

    def list_transactions(
        self, states: Iterable[str], producer_ids: Iterable[int], duration_ms: int
    ) -> tuple[ErrorCode, list[TxnListing], list[str]]: ...


class CoordinatorLocator(Protocol):
    """FindCoordinator's question (kbroker/coordinator/wiring.py)."""

    def find_group_coordinator(self, group_id: str) -> BrokerRegistration: ...


@dataclass(frozen=True, slots=True)
class BrokerServices:
    config: BrokerConfig
    clock: Clock
    metadata: MetadataView
    topic_admin: TopicAdmin
    cluster_admin: ClusterAdmin
    producer_ids: ProducerIdManager
    replicas: Replicas
    groups: Groups
    coordinators: CoordinatorLocator
    security_admin: SecurityAdmin
    transactions: Transactions
    sasl: SaslAuthenticator | None = None
    """None when no listener uses SASL."""
    authorizer: Authorizer = field(default_factory=AllowAll)
    quotas: ClientQuotas = field(default_factory=lambda: ClientQuotas(11, 1))
    fetch_sessions: FetchManager = field(
        default_factory=lambda: FetchManager(FetchSessionCache(1000, 120_000), SystemClock())
    )
    """The fetch session cache (KIP-227)."""
    topic_descriptions: TopicDescriptions = field(default_factory=TopicDescriptions)
    """Metadata's per-topic answers, encoded once per topic state (kbroker/handlers/topic_descriptions.py)."""
