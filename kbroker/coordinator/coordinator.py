"""The group coordinator: every group and its committed offsets, one synchronous method per API.

Each method takes plain values and the current time, and returns an `Outcome`: the response to its own request, the
completions of parked JoinGroup / SyncGroup requests it answered on the way, and the records to append to
`__consumer_offsets` (by partition). The caller appends the records before it sends any of the responses, as Kafka
answers only once the records are written. The state changes at once, in memory; the log is what a restart replays
(`load`).

Offsets committed in a transaction (TxnOffsetCommit, KIP-98/KIP-447) are written at once, in a transactional
batch of the producer, but stay pending, invisible to OffsetFetch, until the transaction coordinator's marker
reaches the group's partition: a COMMIT makes them the group's offsets (unless the group committed newer ones
meanwhile), an ABORT drops them. OffsetFetch with require_stable (KIP-447) answers UNSTABLE_OFFSET_COMMIT for a
partition with pending offsets, so a read_committed consumer never starts from an offset that may yet change.

Sockets, the log format beyond "key bytes, value bytes" and the protocol classes are not known here.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from kbroker.common import TopicPartition
from kbroker.coordinator import records as rec
from kbroker.coordinator.group import (
    Completion,
    Effects,
    Group,
    GroupConfig,
    GroupState,
    JoinRequest,
    JoinResult,
    LeaveMemberResult,
    LeaveResult,
    Member,
    MemberIdentity,
    Pending,
    SyncRequest,
    SyncResult,
    random_member_id,
)
from kbroker.coordinator.offsets import (
    FetchedOffset,
    OffsetAndMetadata,
    OffsetCommitEntry,
    OffsetStore,
    PartitionResult,
    expired_offsets,
)
from protocol.errors import ErrorCode

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

# Records to append, by `__consumer_offsets` partition: (key, value) with None as the value of a tombstone.
RecordsByPartition = Mapping[int, Sequence[rec.Record]]


@dataclass(frozen=True)
class Outcome(Generic[T_co]):
    response: T_co
    completions: tuple[Completion, ...] = ()
    records: RecordsByPartition = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CoordinatorConfig:
    group: GroupConfig = field(default_factory=GroupConfig)
    offset_metadata_max_bytes: int = 4096
    offsets_retention_minutes: int = 7 * 24 * 60
    offsets_retention_check_interval_ms: int = 600_000
    offsets_topic_num_partitions: int = 50

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60_000


# ---- answers of the read-only APIs ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OffsetFetchResult:
    error: ErrorCode
    partitions: tuple[FetchedOffset, ...] = ()


@dataclass(frozen=True, slots=True)
class OffsetDeleteResult:
    error: ErrorCode
    partitions: tuple[PartitionResult, ...] = ()


@dataclass(frozen=True, slots=True)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True, slots=True)
class GroupDescription:
    error: ErrorCode
    group_id: str
    state: str
    protocol_type: str
    # The selected protocol; only given (with member metadata and assignments) while the group is Stable.
    protocol_data: str
    members: tuple[MemberDescription, ...] = ()


@dataclass(frozen=True, slots=True)
class GroupListing:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = "classic"


# APIs for which Kafka accepts an empty group id (old clients commit and fetch offsets under ""); OffsetDelete is not
# one of them (INVALID_GROUP_ID, as Kafka).
_EMPTY_GROUP_ID_OK = frozenset({"OffsetCommit", "OffsetFetch", "DescribeGroups", "DeleteGroups"})


class GroupCoordinator:
    def __init__(
        self,
        config: CoordinatorConfig | None = None,
        *,
        owned_partitions: Iterable[int] | None = None,
        new_member_id: Callable[[str], str] = random_member_id,
    ) -> None:
        self.config = config or CoordinatorConfig()
        self.groups: dict[str, Group] = {}
        self.offsets = OffsetStore(self.config.offset_metadata_max_bytes)
        # The `__consumer_offsets` partitions this broker leads; None: all of them (a single broker).
        self.owned_partitions: set[int] | None = None if owned_partitions is None else set(owned_partitions)
        self._tickets = itertools.count(1)
        self._new_member_id = new_member_id
        # Next run of the offset expiry; set by the first on_tick.
        self.next_expiry_check_ms: int | None = None
        # Offsets of open transactions: producer id -> group -> partition -> offset.
        self.pending_txn_offsets: dict[int, dict[str, dict[TopicPartition, OffsetAndMetadata]]] = {}
        # Orders commits as their records are ordered in the log (see OffsetAndMetadata.order).
        self._order = itertools.count(1)

    # ---- helpers -----------------------------------------------------------------------------------------------

    def partition_for(self, group_id: str) -> int:
        return rec.partition_for(group_id, self.config.offsets_topic_num_partitions)

    def is_coordinator_for(self, group_id: str) -> bool:
        return self.owned_partitions is None or self.partition_for(group_id) in self.owned_partitions

    def _group_status(self, group_id: str, api: str) -> ErrorCode:
        if group_id == "" and api not in _EMPTY_GROUP_ID_OK:
            return ErrorCode.INVALID_GROUP_ID
        if not self.is_coordinator_for(group_id):
            return ErrorCode.NOT_COORDINATOR
        return ErrorCode.NONE

    def _new_group(self, group_id: str) -> Group:
        # A new group is Empty without a state timestamp, as in Kafka.
        group = Group(group_id, self.config.group, tickets=self._tickets, new_member_id=self._new_member_id)
        self.groups[group_id] = group
        return group

    def _outcome(self, response: T, group: Group | None, effects: Effects) -> Outcome[T]:
        records: dict[int, list[rec.Record]] = {}
        if group is not None and effects.store_group and group.state is not GroupState.DEAD:
            records[self.partition_for(group.group_id)] = [self._group_record(group)]
        return Outcome(response, effects.completions, records)

    def _group_record(self, group: Group) -> rec.Record:
        value = rec.GroupMetadataValue(
            protocol_type=group.protocol_type or "",
            generation=group.generation_id,
            protocol=group.protocol_name,
            leader=group.leader_id,
            current_state_timestamp=group.state_timestamp_ms if group.state_timestamp_ms is not None else -1,
            members=tuple(
                rec.MemberMetadataValue(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    rebalance_timeout=m.rebalance_timeout_ms,
                    session_timeout=m.session_timeout_ms,
                    subscription=m.metadata(group.protocol_name),
                    assignment=m.assignment,
                )
                for m in group.members.values()
            ),
        )
        return rec.group_metadata_record(group.group_id, value)

    def _offset_record(self, group_id: str, tp: TopicPartition, o: OffsetAndMetadata | None) -> rec.Record:
        value = None
        if o is not None:
            value = rec.OffsetCommitValue(
                offset=o.offset,
                leader_epoch=o.leader_epoch,
                metadata=o.metadata,
                commit_timestamp=o.commit_timestamp_ms,
                expire_timestamp=o.expire_timestamp_ms if o.expire_timestamp_ms is not None else -1,
            )
        return rec.offset_commit_record(group_id, tp.topic, tp.partition, value)

    def _delete_group(
        self, group: Group, now_ms: int, out: dict[int, list[rec.Record]]
    ) -> tuple[Completion, ...]:
        """Drop a group and its offsets, with the tombstones that make the deletion survive a restart."""
        partition_records = out.setdefault(self.partition_for(group.group_id), [])
        for tp in self.offsets.remove_all(group.group_id):
            partition_records.append(self._offset_record(group.group_id, tp, None))
        partition_records.append(rec.group_metadata_record(group.group_id, None))
        effects = group.mark_dead(now_ms)
        del self.groups[group.group_id]
        return effects.completions

    def _maybe_delete_empty_group(self, group: Group, now_ms: int, out: dict[int, list[rec.Record]]) -> None:
        # An empty group without offsets has nothing left to remember (Kafka's cleanupGroupMetadata).
        if (
            group.state is GroupState.EMPTY
            and not self.offsets.has_offsets(group.group_id)
            and not group.pending_members
            and not self.has_pending_txn_offsets(group.group_id)
        ):
            self._delete_group(group, now_ms, out)

    # ---- JoinGroup / SyncGroup / Heartbeat / LeaveGroup --------------------------------------------------------

    def join_group(self, group_id: str, request: JoinRequest, now_ms: int) -> Outcome[JoinResult | Pending]:
        error = self._group_status(group_id, "JoinGroup")
        if error is ErrorCode.NONE and not (
            self.config.group.group_min_session_timeout_ms
            <= request.session_timeout_ms
            <= self.config.group.group_max_session_timeout_ms
        ):
            error = ErrorCode.INVALID_SESSION_TIMEOUT
        if error is not ErrorCode.NONE:
            return Outcome(JoinResult(error, member_id=request.member_id))
        group = self.groups.get(group_id)
        if group is None:
            if request.member_id != "":
                # The group is gone (deleted, or we restarted without it): the member must start over.
                return Outcome(JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=request.member_id))
            group = self._new_group(group_id)
        response, effects = group.join(request, now_ms)
        return self._outcome(response, group, effects)

    def sync_group(self, group_id: str, request: SyncRequest, now_ms: int) -> Outcome[SyncResult | Pending]:
        error = self._group_status(group_id, "SyncGroup")
        if error is not ErrorCode.NONE:
            return Outcome(SyncResult(error))
        group = self.groups.get(group_id)
        if group is None:
            return Outcome(SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
        response, effects = group.sync(request, now_ms)
        return self._outcome(response, group, effects)

    def heartbeat(
        self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int, now_ms: int
    ) -> Outcome[ErrorCode]:
        error = self._group_status(group_id, "Heartbeat")
        if error is not ErrorCode.NONE:
            return Outcome(error)
        group = self.groups.get(group_id)
        if group is None:
            return Outcome(ErrorCode.UNKNOWN_MEMBER_ID)
        return Outcome(group.heartbeat(member_id, group_instance_id, generation_id, now_ms))

    def leave_group(
        self, group_id: str, members: Sequence[MemberIdentity], now_ms: int
    ) -> Outcome[LeaveResult]:
        error = self._group_status(group_id, "LeaveGroup")
        if error is not ErrorCode.NONE:
            return Outcome(LeaveResult(error))
        group = self.groups.get(group_id)
        if group is None:
            unknown = tuple(
                LeaveMemberResult(m.member_id, m.group_instance_id, ErrorCode.UNKNOWN_MEMBER_ID)
                for m in members
            )
            return Outcome(LeaveResult(ErrorCode.NONE, unknown))
        response, effects = group.leave(members, now_ms)
        return self._outcome(response, group, effects)

    # ---- offsets -----------------------------------------------------------------------------------------------

    def commit_offsets(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Sequence[OffsetCommitEntry],
        now_ms: int,
        retention_time_ms: int = -1,
    ) -> Outcome[tuple[PartitionResult, ...]]:
        """OffsetCommit. v0 (no generation) passes generation_id=-1 and member_id=""; -1 retention: the default."""

        def all_failed(error: ErrorCode) -> Outcome[tuple[PartitionResult, ...]]:
            return Outcome(tuple(PartitionResult(e.topic, e.partition, error) for e in offsets))

        error = self._group_status(group_id, "OffsetCommit")
        if error is not ErrorCode.NONE:
            return all_failed(error)
        group = self.groups.get(group_id)
        if group is None:
            if generation_id >= 0:
                # A member of a generation of a group we do not know: it is from before a deletion or a restart.
                return all_failed(ErrorCode.ILLEGAL_GENERATION)
            # Offsets stored for a consumer that manages its partitions itself: an Empty group without protocol.
            group = self._new_group(group_id)
        error = group.validate_offset_commit(member_id, group_instance_id, generation_id, now_ms)
        if error is not ErrorCode.NONE:
            return all_failed(error)
        results, accepted = self.offsets.check_commit(offsets, now_ms, retention_time_ms)
        partition_records: list[rec.Record] = []
        for tp, o in accepted.items():
            self.offsets.store(group_id, tp, dataclasses.replace(o, order=next(self._order)))
            partition_records.append(self._offset_record(group_id, tp, o))
        records = {self.partition_for(group_id): partition_records} if partition_records else {}
        return Outcome(tuple(results), (), records)

    # ---- transactional offsets (TxnOffsetCommit) ---------------------------------------------------------------

    def txn_commit_offsets(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Sequence[OffsetCommitEntry],
        now_ms: int,
    ) -> tuple[tuple[PartitionResult, ...], dict[TopicPartition, OffsetAndMetadata]]:
        """TxnOffsetCommit's checks: (the result per partition, the offsets to write). Nothing changes here until
        they are written: then `store_pending`."""

        def all_failed(
            error: ErrorCode,
        ) -> tuple[tuple[PartitionResult, ...], dict[TopicPartition, OffsetAndMetadata]]:
            return tuple(PartitionResult(e.topic, e.partition, error) for e in offsets), {}

        error = self._group_status(group_id, "TxnOffsetCommit")
        if error is not ErrorCode.NONE:
            return all_failed(error)
        group = self.groups.get(group_id)
        if group is not None:
            error = group.validate_txn_offset_commit(member_id, group_instance_id, generation_id)
        elif generation_id >= 0 or member_id != "" or group_instance_id is not None:
            error = ErrorCode.UNKNOWN_MEMBER_ID
        if error is not ErrorCode.NONE:
            return all_failed(error)
        results, accepted = self.offsets.check_commit(offsets, now_ms)
        return tuple(results), accepted

    def offset_records(
        self, group_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata]
    ) -> list[rec.Record]:
        return [self._offset_record(group_id, tp, o) for tp, o in offsets.items()]

    def store_pending(
        self, producer_id: int, group_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata]
    ) -> None:
        """A TxnOffsetCommit's records are written: its offsets wait for the transaction's end."""
        if not self.is_coordinator_for(group_id):
            return
        if group_id not in self.groups:
            # Like OffsetCommit: a group that only stores offsets (created Empty, without a protocol).
            self._new_group(group_id)
        pending = self.pending_txn_offsets.setdefault(producer_id, {}).setdefault(group_id, {})
        for tp, o in offsets.items():
            pending[tp] = dataclasses.replace(o, order=next(self._order))

    def has_pending_txn_offsets(self, group_id: str, tp: TopicPartition | None = None) -> bool:
        for by_group in self.pending_txn_offsets.values():
            pending = by_group.get(group_id)
            if pending and (tp is None or tp in pending):
                return True
        return False

    def complete_transaction(self, partitions: Collection[int], producer_id: int, commit: bool) -> None:
        """The producer's marker is written on these `__consumer_offsets` partitions: its pending offsets of their
        groups become visible (commit) or are dropped (abort)."""
        by_group = self.pending_txn_offsets.get(producer_id)
        if not by_group:
            return
        for group_id in [g for g in by_group if self.partition_for(g) in partitions]:
            pending = by_group.pop(group_id)
            if not commit:
                continue
            for tp, o in pending.items():
                current = self.offsets.get(group_id, tp)
                if current is None or current.order < o.order:
                    self.offsets.store(group_id, tp, o)
        if not by_group:
            del self.pending_txn_offsets[producer_id]

    def fetch_offsets(
        self, group_id: str, topics: Sequence[tuple[str, Sequence[int]]] | None, require_stable: bool = False
    ) -> OffsetFetchResult:
        """OffsetFetch; `topics` None asks for every committed offset of the group (v2+). With `require_stable`
        (v7+, KIP-447), a partition with offsets of an open transaction gets UNSTABLE_OFFSET_COMMIT instead."""
        error = self._group_status(group_id, "OffsetFetch")
        if error is not ErrorCode.NONE:
            return OffsetFetchResult(error)
        # Answered whatever the group's state: the group may only use us to store offsets.
        fetched = self.offsets.fetch(group_id, topics)
        if require_stable and self.has_pending_txn_offsets(group_id):
            fetched = [
                FetchedOffset(f.topic, f.partition, -1, -1, "", ErrorCode.UNSTABLE_OFFSET_COMMIT)
                if self.has_pending_txn_offsets(group_id, TopicPartition(f.topic, f.partition))
                else f
                for f in fetched
            ]
        return OffsetFetchResult(ErrorCode.NONE, tuple(fetched))

    def delete_offsets(
        self, group_id: str, topics: Sequence[tuple[str, Sequence[int]]], now_ms: int
    ) -> Outcome[OffsetDeleteResult]:
        """OffsetDelete: only offsets of topics the group does not consume (or of a group without members)."""
        error = self._group_status(group_id, "OffsetDelete")
        if error is not ErrorCode.NONE:
            return Outcome(OffsetDeleteResult(error))
        group = self.groups.get(group_id)
        if group is None or group.state is GroupState.DEAD:
            return Outcome(OffsetDeleteResult(ErrorCode.GROUP_ID_NOT_FOUND))
        if group.state is not GroupState.EMPTY and group.protocol_type != "consumer":
            # Without ConsumerProtocol we cannot tell which topics the members use.
            return Outcome(OffsetDeleteResult(ErrorCode.NON_EMPTY_GROUP))
        results: list[PartitionResult] = []
        to_remove: list[TopicPartition] = []
        for topic, partitions in topics:
            subscribed = group.state is not GroupState.EMPTY and group.is_subscribed_to(topic)
            for partition in partitions:
                if subscribed:
                    results.append(PartitionResult(topic, partition, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC))
                else:
                    results.append(PartitionResult(topic, partition, ErrorCode.NONE))
                    to_remove.append(TopicPartition(topic, partition))
        out: dict[int, list[rec.Record]] = {}
        removed = self.offsets.remove(group_id, to_remove)
        if removed:
            out[self.partition_for(group_id)] = [self._offset_record(group_id, tp, None) for tp in removed]
        self._maybe_delete_empty_group(group, now_ms, out)
        return Outcome(OffsetDeleteResult(ErrorCode.NONE, tuple(results)), (), out)

    def delete_groups(
        self, group_ids: Sequence[str], now_ms: int
    ) -> Outcome[tuple[tuple[str, ErrorCode], ...]]:
        results: list[tuple[str, ErrorCode]] = []
        completions: list[Completion] = []
        out: dict[int, list[rec.Record]] = {}
        for group_id in group_ids:
            error = self._group_status(group_id, "DeleteGroups")
            group = self.groups.get(group_id)
            if error is ErrorCode.NONE:
                if group is None or group.state is GroupState.DEAD:
                    error = ErrorCode.GROUP_ID_NOT_FOUND
                elif group.state is not GroupState.EMPTY:
                    error = ErrorCode.NON_EMPTY_GROUP
            if error is ErrorCode.NONE and group is not None:
                completions.extend(self._delete_group(group, now_ms, out))
            results.append((group_id, error))
        return Outcome(tuple(results), tuple(completions), out)

    def on_topics_deleted(self, topics: Collection[str], now_ms: int) -> Outcome[None]:
        """Drop the committed offsets of deleted topics from every group (with tombstones)."""
        out: dict[int, list[rec.Record]] = {}
        completions: list[Completion] = []
        for group_id in self.offsets.group_ids():
            removed = self.offsets.remove_topics(group_id, topics)
            if removed:
                out.setdefault(self.partition_for(group_id), []).extend(
                    self._offset_record(group_id, tp, None) for tp in removed
                )
                group = self.groups.get(group_id)
                if group is not None:
                    self._maybe_delete_empty_group(group, now_ms, out)
        return Outcome(None, tuple(completions), out)

    def expire_offsets(self, now_ms: int) -> Outcome[None]:
        """Remove offsets past their retention; delete groups left Empty without offsets."""
        out: dict[int, list[rec.Record]] = {}
        completions: list[Completion] = []
        for group in list(self.groups.values()):
            expired = expired_offsets(
                self.offsets.all(group.group_id),
                now_ms=now_ms,
                retention_ms=self.config.offsets_retention_ms,
                protocol_type=group.protocol_type,
                is_empty=group.state is GroupState.EMPTY,
                state_timestamp_ms=group.state_timestamp_ms,
                subscribed_topics=group.subscribed_topics,
            )
            if expired:
                self.offsets.remove(group.group_id, expired)
                out.setdefault(self.partition_for(group.group_id), []).extend(
                    self._offset_record(group.group_id, tp, None) for tp in expired
                )
            self._maybe_delete_empty_group(group, now_ms, out)
        return Outcome(None, tuple(completions), out)

    # ---- describe / list ---------------------------------------------------------------------------------------

    def describe_group(self, group_id: str) -> GroupDescription:
        error = self._group_status(group_id, "DescribeGroups")
        if error is not ErrorCode.NONE:
            return GroupDescription(error, group_id, "", "", "")
        group = self.groups.get(group_id)
        if group is None:
            return GroupDescription(ErrorCode.NONE, group_id, GroupState.DEAD.value, "", "")
        stable = group.state is GroupState.STABLE
        members = tuple(
            MemberDescription(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                # Metadata and assignment mean something only once the group has settled on a protocol.
                metadata=m.metadata(group.protocol_name) if stable else b"",
                assignment=m.assignment if stable else b"",
            )
            for m in group.members.values()
        )
        return GroupDescription(
            ErrorCode.NONE,
            group_id,
            group.state.value,
            group.protocol_type or "",
            (group.protocol_name or "") if stable else "",
            members,
        )

    def list_groups(
        self, states_filter: Collection[str] = (), types_filter: Collection[str] = ()
    ) -> list[GroupListing]:
        """ListGroups; filters (v4+ states, v5+ types) compare case-insensitively, empty means all."""
        if types_filter and "classic" not in {t.lower() for t in types_filter}:
            return []
        states = {s.lower() for s in states_filter}
        return [
            GroupListing(g.group_id, g.protocol_type or "", g.state.value)
            for g in self.groups.values()
            if not states or g.state.value.lower() in states
        ]

    # ---- timers ------------------------------------------------------------------------------------------------

    def next_deadline(self) -> int | None:
        deadlines = [d for d in (g.next_deadline() for g in self.groups.values()) if d is not None]
        if self.next_expiry_check_ms is not None:
            deadlines.append(self.next_expiry_check_ms)
        return min(deadlines, default=None)

    def on_tick(self, now_ms: int) -> Outcome[None]:
        """Fire everything due: sessions, join and sync timeouts, the initial delay, the offset expiry."""
        completions: list[Completion] = []
        out: dict[int, list[rec.Record]] = {}
        for group in list(self.groups.values()):
            deadline = group.next_deadline()
            if deadline is None or deadline > now_ms:
                continue
            effects = group.on_tick(now_ms)
            completions.extend(effects.completions)
            if effects.store_group:
                out.setdefault(self.partition_for(group.group_id), []).append(self._group_record(group))
        if self.next_expiry_check_ms is None:
            self.next_expiry_check_ms = now_ms + self.config.offsets_retention_check_interval_ms
        elif self.next_expiry_check_ms <= now_ms:
            self.next_expiry_check_ms = now_ms + self.config.offsets_retention_check_interval_ms
            expiry = self.expire_offsets(now_ms)
            completions.extend(expiry.completions)
            for partition, partition_records in expiry.records.items():
                out.setdefault(partition, []).extend(partition_records)
        return Outcome(None, tuple(completions), out)

    # ---- loading -----------------------------------------------------------------------------------------------

    def load(
        self, partition: int, records: Iterable[rec.RawRecord | rec.TxnRecord | rec.TxnMarker], now_ms: int
    ) -> None:
        """Become coordinator of a `__consumer_offsets` partition: rebuild its groups and offsets from its records
        (with the offsets of transactions still open as pending ones)."""
        state = rec.load(records)
        # Later commits must order after everything read back.
        base = next(self._order)
        self._order = itertools.count(base + state.entries + 1)
        if self.owned_partitions is not None:
            self.owned_partitions.add(partition)
        for group_id, value in state.groups.items():
            group = self._new_group(group_id)
            members = [
                Member(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    # v0 records have no rebalance timeout; Kafka then uses the session timeout.
                    rebalance_timeout_ms=m.rebalance_timeout
                    if m.rebalance_timeout >= 0
                    else m.session_timeout,
                    session_timeout_ms=m.session_timeout,
                    protocol_type=value.protocol_type,
                    protocols=((value.protocol or "", m.subscription),),
                    assignment=m.assignment,
                )
                for m in value.members
            ]
            group.restore(
                generation_id=value.generation,
                protocol_type=value.protocol_type,
                protocol_name=value.protocol,
                leader_id=value.leader,
                state_timestamp_ms=value.current_state_timestamp
                if value.current_state_timestamp >= 0
                else None,
                members=members,
                now_ms=now_ms,
            )
        for group_id, group_offsets in state.offsets.items():
            if group_id not in self.groups:
                # Offsets without group metadata: a group that only stores offsets.
                self._new_group(group_id)
            for tp, v in group_offsets.items():
                self.offsets.store(
                    group_id, tp, _offset_and_metadata(v, base + state.positions.get((group_id, tp), 0))
                )
        for producer_id, pending in state.pending.items():
            for p in pending:
                if p.value is None:
                    continue
                if p.group not in self.groups:
                    self._new_group(p.group)
                self.pending_txn_offsets.setdefault(producer_id, {}).setdefault(p.group, {})[p.tp] = (
                    _offset_and_metadata(p.value, base + p.position)
                )

    def unload(self, partition: int, now_ms: int) -> Outcome[None]:
        """Stop coordinating a partition's groups; parked requests learn NOT_COORDINATOR and go find the new one."""
        completions: list[Completion] = []
        for group in [g for g in self.groups.values() if self.partition_for(g.group_id) == partition]:
            completions.extend(group.mark_dead(now_ms, ErrorCode.NOT_COORDINATOR).completions)
            del self.groups[group.group_id]
            self.offsets.remove_all(group.group_id)
            for by_group in self.pending_txn_offsets.values():
                by_group.pop(group.group_id, None)
        self.pending_txn_offsets = {
            pid: by_group for pid, by_group in self.pending_txn_offsets.items() if by_group
        }
        if self.owned_partitions is None:
            self.owned_partitions = set(range(self.config.offsets_topic_num_partitions))
        self.owned_partitions.discard(partition)
        return Outcome(None, tuple(completions))


def _offset_and_metadata(v: rec.OffsetCommitValue, order: int) -> OffsetAndMetadata:
    return OffsetAndMetadata(
        offset=v.offset,
        leader_epoch=v.leader_epoch,
        metadata=v.metadata,
        commit_timestamp_ms=v.commit_timestamp,
        expire_timestamp_ms=v.expire_timestamp if v.expire_timestamp >= 0 else None,
        order=order,
    )
