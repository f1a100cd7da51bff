"""One topic-partition this node holds a replica of: its log, its leader and epoch, the ISR and the high watermark.

The same class serves a single node and a cluster: a single node is a cluster of one, leading every partition with
the ISR {itself}, so its high watermark follows its log end at once. Roles come from metadata (`make_leader`,
`make_follower`, `make_idle`); requests come through `ReplicaManager`, which finds the Partition ("exists"), then one
check chain here decides, in Kafka's order:

    log offline           -> KAFKA_STORAGE_ERROR
    client's leader epoch -> FENCED_LEADER_EPOCH (older than ours) / UNKNOWN_LEADER_EPOCH (newer: our metadata lags)
    leadership            -> NOT_LEADER_OR_FOLLOWER

Plain synchronous code, no trio: whatever moves the partition (an append, the high watermark, a role change) calls
`on_progress(tp)`, which wakes the requests parked on it (kbroker/replication/purgatory.py).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from kbroker.common import KafkaError, TopicPartition
from kbroker.log.config import LogConfig
from kbroker.log.partition_log import AppendInfo, PartitionLog
from kbroker.log.producer_state import VerificationGuard
from kbroker.log.segment import FileRecords
from kbroker.log.txn_index import AbortedTxn
from kbroker.metadata.image import NO_LEADER, PartitionState
from kbroker.replication.partition_leader import PartitionLeader
from protocol.errors import ErrorCode
from protocol.records import iter_batches

log = logging.getLogger(__name__)

LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5

READ_UNCOMMITTED = 0
READ_COMMITTED = 1


@dataclass(slots=True)
class PartitionRead:
    """One partition's part of a Fetch response."""

    error: ErrorCode
    high_watermark: int = -1
    log_start_offset: int = -1
    records: bytes | FileRecords = b""
    last_stable_offset: int = -1
    aborted_transactions: list[AbortedTxn] | None = None
    """Filled in for a read_committed read that succeeded: the aborted transactions overlapping `records`."""
    settled: bool = False
    """Nothing to read: the fetch offset is at the read limit (and a follower is in the ISR, or in the expansion
    being made: the maximal ISR, so that not hearing from it on this partition changes nothing here; an expansion
    that fails wakes the partition). Until the partition is woken (kbroker/replication/purgatory.py) the same read
    gives the same answer; a fetch session then need not read it (FetchSession.unsettled)."""


class Partition:
    def __init__(
        self,
        tp: TopicPartition,
        topic_id: uuid.UUID,
        log: PartitionLog,
        *,
        node_id: int,
        on_progress: Callable[[TopicPartition], None],
        on_append: Callable[[TopicPartition], None] | None = None,
        follower_fetch_ms: Mapping[int, int] | None = None,
        fsync_before_acks: bool = True,
    ) -> None:
        self.tp = tp
        self._fsync_before_acks = fsync_before_acks
        """log.flush.acks.all.enable: whether acks=-1 also waits for this log's fsync (false: Kafka's default)."""
        self._follower_fetch_ms: Mapping[int, int] = {} if follower_fetch_ms is None else follower_fetch_ms
        """Each follower node's latest fetch time (ReplicaManager's, shared by every partition)."""
        self.topic_id = topic_id
        self.log = log
        self.node_id = node_id
        self._on_progress = on_progress
        # An append as leader: the purgatory's `wake_appended` (what an append can complete), `on_progress` if none.
        self._on_append = on_append or on_progress
        self.leader_id = NO_LEADER
        self.leader_epoch = -1
        self.partition_epoch = -1
        self.replicas: tuple[int, ...] = ()
        self.replication: PartitionLeader | None = None
        """The leader's view of its followers; present exactly while this node leads the partition."""

    def __repr__(self) -> str:
        return f"Partition({self.tp}, leader={self.leader_id}, epoch={self.leader_epoch})"

    @property
    def is_leader(self) -> bool:
        return self.replication is not None

    @property
    def isr(self) -> tuple[int, ...]:
        return self.replication.isr if self.replication is not None else ()

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def config(self) -> LogConfig:
        return self.log.config

    # ---- roles, from metadata ----------------------------------------------------------------------------------

    def make_leader(self, state: PartitionState, now_ms: int) -> bool:
        """Lead at `state.leader_epoch`. True if this starts a new leadership (a new epoch); an ISR or replica change
        within the same epoch (our own AlterPartition, the controller removing a dead follower) only updates it.
        Raises OSError if the new epoch cannot be recorded: the partition then stays without a role."""
        current = self.replication
        if current is not None and current.leader_epoch == state.leader_epoch:
            if current.update_partition_state(state.isr, state.replicas, state.partition_epoch, now_ms):
                self.partition_epoch, self.replicas = state.partition_epoch, state.replicas
                self.maybe_advance_high_watermark()
                # A follower that left the ISR must be read again (its fetches let it rejoin).
                self._on_progress(self.tp)
            return False
        self.replication = None
        # Every record appended from now on carries this epoch; followers find where their logs diverge from ours
        # through this entry, and ListOffsets / OffsetForLeaderEpoch answer with it, even for an empty log (as
        # Kafka). An empty log's entry is written without fsync: a crash can only lose an epoch no record carries,
        # and it spares a new topic's partitions two fsyncs each.
        log = self.log
        log.leader_epoch_cache.assign(
            state.leader_epoch, log.log_end_offset, durable=log.log_end_offset > log.log_start_offset
        )
        self._set_state(state)
        self.replication = PartitionLeader(
            node_id=self.node_id,
            leader_epoch=state.leader_epoch,
            epoch_start_offset=self.log.log_end_offset,
            isr=state.isr,
            replicas=state.replicas,
            partition_epoch=state.partition_epoch,
            now_ms=now_ms,
        )
        self.maybe_advance_high_watermark()
        self._on_progress(self.tp)
        return True

    def make_follower(self, state: PartitionState) -> bool:
        """Follow `state.leader` at `state.leader_epoch`. True if the leader or its epoch changed."""
        changed = self.replication is not None or (self.leader_id, self.leader_epoch) != (
            state.leader,
            state.leader_epoch,
        )
        self.replication = None
        self._set_state(state)
        if changed:
            self._on_progress(self.tp)
        return changed

    def make_idle(self, state: PartitionState | None) -> bool:
        """Neither lead nor follow (no live leader, or a leadership of ours from before this node's restart).
        True if this ends a leadership."""
        was_leader = self.replication is not None
        self.replication = None
        if state is not None:
            self._set_state(state)
        if was_leader:
            self._on_progress(self.tp)
        return was_leader

    def _set_state(self, state: PartitionState) -> None:
        self.leader_id = state.leader
        self.leader_epoch = state.leader_epoch
        self.partition_epoch = state.partition_epoch
        self.replicas = state.replicas

    # ---- the check chain ---------------------------------------------------------------------------------------

    def check(self, current_leader_epoch: int = -1, *, require_leader: bool = True) -> None:
        """Raise KafkaError unless a request naming `current_leader_epoch` (-1: none) may be served here."""
        if self.log.offline:
            raise KafkaError(
                ErrorCode.KAFKA_STORAGE_ERROR, f"the log of {self.tp} is offline after a disk error"
            )
        if current_leader_epoch >= 0:
            # KIP-320: an epoch older than ours is fenced; a newer one means our metadata is behind.
            if current_leader_epoch < self.leader_epoch:
                raise KafkaError(ErrorCode.FENCED_LEADER_EPOCH)
            if current_leader_epoch > self.leader_epoch:
                raise KafkaError(ErrorCode.UNKNOWN_LEADER_EPOCH)
        if require_leader and self.replication is None:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)

    # ---- produce -----------------------------------------------------------------------------------------------

    def append_records_as_leader(
        self,
        records: bytes | bytearray | memoryview,
        required_acks: int,
        now_ms: int,
        *,
        from_client: bool = True,
        verification_required: bool = False,
        verification_guard: VerificationGuard | None = None,
    ) -> AppendInfo:
        """Validate and append one batch (KafkaError if refused). acks=-1 needs min.insync.replicas in the ISR first
        (NOT_ENOUGH_REPLICAS), as Kafka refuses before writing. See PartitionLog.append_as_leader for the rest."""
        self._check_append(required_acks)
        previous_end = self.log.log_end_offset
        try:
            info = self.log.append_as_leader(
                records,
                self.leader_epoch,
                now_ms,
                from_client=from_client,
                verification_required=verification_required,
                verification_guard=verification_guard,
            )
        except KafkaError:
            self._woken_if_offline()
            raise
        if not info.duplicate:
            self._appended(previous_end)
        return info

    def append_end_txn_marker(
        self, producer_id: int, producer_epoch: int, coordinator_epoch: int, commit: bool, now_ms: int
    ) -> AppendInfo:
        """WriteTxnMarkers: end the producer's transaction here, as leader (written with acks=-1, as Kafka)."""
        self._check_append(-1)
        previous_end = self.log.log_end_offset
        try:
            info = self.log.append_end_txn_marker(
                producer_id, producer_epoch, coordinator_epoch, commit, self.leader_epoch, now_ms
            )
        except KafkaError:
            self._woken_if_offline()
            raise
        self._appended(previous_end)
        return info

    def begin_verification(self, producer_id: int, now_ms: int) -> VerificationGuard | None:
        """The KIP-890 guard for a transactional batch of this producer that would begin a transaction here; None
        if its transaction is open here already (no verification needed) or we do not lead the partition."""
        if self.replication is None:
            return None
        state = self.log.producer_state
        entry = state.producers.get(producer_id)
        if entry is not None and entry.current_txn_first_offset >= 0:
            return None
        return state.begin_verification(producer_id, now_ms)

    def _check_append(self, required_acks: int) -> None:
        self.check()
        if required_acks == -1:
            min_isr = self.log.config.min_insync_replicas
            if len(self.isr) < min_isr:
                raise KafkaError(
                    ErrorCode.NOT_ENOUGH_REPLICAS,
                    f"the in-sync replicas of {self.tp} ({len(self.isr)}) are fewer than min.insync.replicas "
                    f"({min_isr})",
                )

    def _woken_if_offline(self) -> None:
        """After an append refused: a disk error that took the log offline changes every fetch's answer
        (KAFKA_STORAGE_ERROR): wake it."""
        if self.log.offline:
            self._on_progress(self.tp)

    def _appended(self, previous_end: int) -> None:
        # The log end moved (followers' parked fetches), and with an ISR of one the high watermark too: one wake
        # for both. (Not of the parked acks=-1 produces: they wait for an fsync round, and an append moves the high
        # watermark only with an ISR of one, past them already.)
        if self.replication is not None:
            self.replication.record_append(previous_end, self._follower_fetch_ms)
        self._advance_high_watermark()
        self._on_append(self.tp)

    def acks_reached(self, last_offset: int, leader_epoch: int, truncations: int) -> bool:
        """Whether an acks=-1 produce of offsets up to `last_offset`, appended at `leader_epoch`, is decided: either
        the high watermark passed it and it is fsynced here, or it can never be (see `acks_error`)."""
        log = self.log
        if log.offline or self.replication is None or self.leader_epoch != leader_epoch:
            return True
        if log.truncations != truncations:
            return True
        return self._committed(last_offset)

    def _committed(self, last_offset: int) -> bool:
        log = self.log
        return log.high_watermark > last_offset and (
            log.recovery_point > last_offset or not self._fsync_before_acks
        )

    def acks_error(self, last_offset: int, leader_epoch: int, truncations: int) -> KafkaError | None:
        """The answer to a decided acks=-1 produce (None: acknowledged)."""
        log = self.log
        if log.offline:
            return KafkaError(
                ErrorCode.KAFKA_STORAGE_ERROR, f"the log of {self.tp} is offline after a disk error"
            )
        # Leadership first: once deposed, this log's high watermark is the new leader's, and the offset it passes may
        # hold another record (ours truncated away) by then.
        if self.replication is None or self.leader_epoch != leader_epoch or log.truncations != truncations:
            return KafkaError(
                ErrorCode.NOT_LEADER_OR_FOLLOWER,
                f"leadership of {self.tp} changed before the write was replicated",
            )
        if not self._committed(last_offset):
            return None  # not decided: the caller times out
        min_isr = log.config.min_insync_replicas
        if len(self.isr) < min_isr:
            # Kafka's NOT_ENOUGH_REPLICAS_AFTER_APPEND: committed, but by fewer replicas than the topic asks for.
            return KafkaError(
                ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                f"written, but the ISR of {self.tp} shrank below min.insync.replicas ({min_isr})",
            )
        return None

    # ---- fetch -------------------------------------------------------------------------------------------------

    def read(
        self,
        *,
        fetch_offset: int,
        max_bytes: int,
        min_one_batch: bool,
        current_leader_epoch: int,
        replica_id: int,
        now_ms: int,
        isolation_level: int = READ_UNCOMMITTED,
        follower_log_start_offset: int = -1,
        advance_high_watermark: bool = True,
    ) -> PartitionRead:
        """Serve a consumer (replica_id < 0: up to the high watermark, or up to the last stable offset at
        read_committed, with the aborted transactions the records overlap) or a follower (up to the log end; its
        fetch offset also tells us how far it has replicated, and its log start offset how far DeleteRecords has
        reached on it)."""
        try:
            self.check(current_leader_epoch)
        except KafkaError as exc:
            return PartitionRead(exc.code)
        assert self.replication is not None
        log = self.log
        if replica_id >= 0 and not self.replication.is_replica(replica_id):
            return PartitionRead(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        start = log.log_start_offset
        if fetch_offset < start or fetch_offset > log.log_end_offset:
            return PartitionRead(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                log.high_watermark,
                start,
                last_stable_offset=log.last_stable_offset,
            )
        if replica_id >= 0:
            self.record_follower_fetch(
                replica_id, fetch_offset, now_ms, follower_log_start_offset, advance=advance_high_watermark
            )
        hw = log.high_watermark
        lso = log.last_stable_offset
        # Consumers read below the high watermark only (or the LSO, at read_committed). Above it (a new leader's
        # high watermark can lag the old one's) they get nothing yet, not an error, as in Kafka.
        limit = self._read_limit(replica_id, isolation_level)
        committed = replica_id < 0 and isolation_level == READ_COMMITTED
        if fetch_offset >= limit or (max_bytes <= 0 and not min_one_batch):
            return PartitionRead(
                ErrorCode.NONE,
                hw,
                start,
                last_stable_offset=lso,
                aborted_transactions=[] if committed else None,
                settled=fetch_offset >= limit
                and (replica_id < 0 or replica_id in self.replication.maximal_isr),
            )
        try:
            records = log.read_records(fetch_offset, max_bytes, limit, min_one_batch=min_one_batch)
        except KafkaError as exc:
            return PartitionRead(exc.code, hw, start, last_stable_offset=lso)
        aborted = None
        if committed:
            upper = _next_offset_after(records, fetch_offset)
            aborted = log.aborted_transactions(fetch_offset, upper) if upper > fetch_offset else []
        return PartitionRead(ErrorCode.NONE, hw, start, records, lso, aborted)

    def _read_limit(self, replica_id: int, isolation_level: int) -> int:
        log = self.log
        if replica_id >= 0:
            return log.log_end_offset
        if isolation_level == READ_COMMITTED:
            return log.last_stable_offset
        return log.high_watermark

    def bytes_available(
        self,
        fetch_offset: int,
        replica_id: int,
        current_leader_epoch: int,
        isolation_level: int = READ_UNCOMMITTED,
    ) -> int | None:
        """What a parked fetch could return now, without reading it; None if the fetch must be answered at once
        (the partition can no longer serve it: its response carries the error)."""
        try:
            self.check(current_leader_epoch)
        except KafkaError:
            return None
        return self.log.bytes_available(fetch_offset, self._read_limit(replica_id, isolation_level))

    # ---- replication (leader side) -----------------------------------------------------------------------------

    def record_follower_fetch(
        self,
        replica_id: int,
        fetch_offset: int,
        now_ms: int,
        log_start_offset: int = -1,
        *,
        advance: bool = True,
    ) -> None:
        """A follower fetched from `fetch_offset`: it has everything below (and nothing below its log start).
        `advance=False`: the caller moves the high watermark itself (once per fetch round, after every partition of
        the fetch is recorded)."""
        assert self.replication is not None
        self.replication.record_fetch(replica_id, fetch_offset, self.log.log_end_offset, now_ms)
        if self.replication.record_log_start_offset(replica_id, log_start_offset):
            self._on_progress(self.tp)  # a DeleteRecords may be waiting for it
        if advance:
            self.maybe_advance_high_watermark()

    def low_watermark(self, live_brokers: Collection[int]) -> int:
        """The smallest log start offset over this leader and its live followers (Kafka's low watermark: what
        DeleteRecords waits for). -1 while a live follower has not said its own yet in this leader epoch."""
        start = self.log.log_start_offset
        leader = self.replication
        if leader is None:
            return start
        for follower in leader.followers.values():
            if follower.replica_id in live_brokers:
                start = min(start, follower.log_start_offset)
        return start

    def may_join_isr(self, replica_id: int, fetch_offset: int) -> bool:
        """Whether a fetch from `fetch_offset` makes that follower a candidate for the ISR."""
        leader = self.replication
        return (
            leader is not None
            and replica_id not in leader.isr
            and leader.pending_isr is None
            and fetch_offset >= self.log.high_watermark
            and fetch_offset >= leader.epoch_start_offset
        )

    def maybe_advance_high_watermark(self) -> bool:
        """Move the high watermark as far as the ISR has the log; wake the partition's parked requests if it moved."""
        if self._advance_high_watermark():
            self._on_progress(self.tp)
            return True
        return False

    def _advance_high_watermark(self) -> bool:
        leader = self.replication
        if leader is None:
            return False
        hw = leader.high_watermark(self.log.log_end_offset)
        return hw >= 0 and self.log.advance_high_watermark(hw)

    def isr_proposal(
        self, now_ms: int, lag_time_max_ms: int, live_brokers: Collection[int]
    ) -> tuple[int, ...] | None:
        leader = self.replication
        if leader is None or self.log.offline:
            return None
        return leader.isr_proposal(
            self.log.log_end_offset, self.log.high_watermark, now_ms, lag_time_max_ms, live_brokers
        )

    # ---- replication (follower side) ---------------------------------------------------------------------------

    def append_as_follower(self, records: bytes | memoryview, now_ms: int) -> AppendInfo | None:
        return self.log.append_as_follower(records, now_ms)

    def follow_high_watermark(self, leader_high_watermark: int) -> None:
        """A follower's high watermark is the leader's (it may go down after a leader change), never above what this
        replica has."""
        self.log.high_watermark = min(leader_high_watermark, self.log.log_end_offset)

    # ---- offsets -----------------------------------------------------------------------------------------------

    def offset_for_timestamp(
        self,
        timestamp: int,
        current_leader_epoch: int,
        replica_id: int,
        isolation_level: int = READ_UNCOMMITTED,
    ) -> tuple[int, int, int]:
        """ListOffsets: (offset, timestamp, leader epoch). At read_committed the latest offset is the last stable
        offset, and a search by time finds only records below it."""
        self.check(current_leader_epoch)
        log = self.log
        cache = log.leader_epoch_cache
        limit = self._read_limit(replica_id, isolation_level)
        if timestamp == LATEST_TIMESTAMP:
            return limit, -1, cache.epoch_for_offset(limit)
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            start = log.log_start_offset
            return start, -1, cache.epoch_for_offset(start)
        if timestamp == LATEST_TIERED_TIMESTAMP:
            return -1, -1, -1  # nothing is tiered (Kafka's answer with remote storage disabled)
        if timestamp == MAX_TIMESTAMP:
            found = log.max_timestamp_offset(limit)
            if found is None:
                return -1, -1, -1
            return found[0], found[1], cache.epoch_for_offset(found[0])
        found = log.offset_for_timestamp(timestamp, limit)
        if found is None:
            return -1, -1, -1
        return found[0], found[1], cache.epoch_for_offset(found[0])

    def last_offset_for_leader_epoch(self, current_leader_epoch: int, leader_epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: the largest epoch at or below `leader_epoch` in our log and where it ends."""
        self.check(current_leader_epoch)
        return self.log.leader_epoch_cache.end_offset_for(leader_epoch, self.log.log_end_offset)


def _next_offset_after(records: bytes | FileRecords, fetch_offset: int) -> int:
    """The offset after the last batch of `records` (whole batches), or fetch_offset if there are none."""
    if isinstance(records, FileRecords):
        return records.next_offset
    end = fetch_offset
    for batch in iter_batches(records):
        end = batch.next_offset
    return end
