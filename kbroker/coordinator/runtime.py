"""The trio side of the group coordinator: a timer task, parked JoinGroup/SyncGroup requests, record appends.

`GroupCoordinator` decides everything synchronously; this layer only waits. Request handlers call the async methods
here with plain values (the protocol messages translated) and get plain results back. `run()` is the one task the
coordinator needs: it sleeps until the coordinator's next deadline and fires it (session expiry, rebalance timeouts,
the initial rebalance delay, offset expiry).

Ordering: a coordinator call and the synchronous part of the append of its records happen with no await in between,
so `__consumer_offsets` receives records in the order the state changed. Responses (the caller's and the parked ones
the call completed) are released only after the append returned, as Kafka answers only once records are written.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import trio

from kbroker.clock import TrioClock
from kbroker.common import KafkaError
from kbroker.coordinator.coordinator import (
    GroupCoordinator,
    GroupDescription,
    GroupListing,
    OffsetDeleteResult,
    OffsetFetchResult,
    Outcome,
)
from kbroker.coordinator.group import (
    JoinRequest,
    JoinResult,
    LeaveResult,
    MemberIdentity,
    Pending,
    SyncRequest,
    SyncResult,
)
from kbroker.coordinator.offsets import OffsetCommitEntry, PartitionResult
from kbroker.coordinator.records import LogEntry, Record, TxnMarker, TxnRecord
from protocol.errors import ErrorCode
from protocol.records import Record as LogRecord
from protocol.records import build_batch, decode_records, iter_batches, read_end_txn_marker

logger = logging.getLogger(__name__)


class OffsetsWriter(Protocol):
    """Appends records to `__consumer_offsets` partitions.

    Contract: the records must be in the logs (offsets assigned) before the first await inside `append`, so that two
    calls cannot interleave their records; the await then waits for durability (fsync, replication). Raising fails the
    call (OffsetCommit answers COORDINATOR_NOT_AVAILABLE).
    """

    def append(self, records: Mapping[int, Sequence[Record]], now_ms: int) -> Awaitable[None]: ...


class TransactionalOffsetsWriter(OffsetsWriter, Protocol):
    """An OffsetsWriter that also writes TxnOffsetCommit's transactional batches."""

    def append_transactional(
        self,
        partition: int,
        records: Sequence[Record],
        now_ms: int,
        *,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
    ) -> Awaitable[None]:
        """One transactional batch of the producer (a TxnOffsetCommit), written once the partition is verified to
        be in its transaction (KIP-890). Raises KafkaError with the code the client hears."""
        ...


@dataclass(slots=True)
class _Waiter:
    event: trio.Event = field(default_factory=trio.Event)
    result: JoinResult | SyncResult | None = None


class CoordinatorRuntime:
    def __init__(
        self,
        coordinator: GroupCoordinator,
        writer: OffsetsWriter | None = None,
        *,
        clock: Callable[[], int] | None = None,
        txn_writer: TransactionalOffsetsWriter | None = None,
    ) -> None:
        self.coordinator = coordinator
        # None: records are not persisted (tests of the runtime alone).
        self.writer = writer
        self.txn_writer = txn_writer
        # Wall-clock ms: commit timestamps are stored and must survive restarts. By default trio's clock moves it,
        # so MockClock drives session timeouts in tests; the broker passes its one clock.
        self.now_ms: Callable[[], int] = clock if clock is not None else TrioClock().now_ms
        self._waiters: dict[int, _Waiter] = {}
        self._wakeup = trio.Event()

    # ---- the timer task ------------------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Fire the coordinator's timers forever. Start it in the broker's nursery."""
        task_status.started()
        while True:
            await self._apply(self.coordinator.on_tick(self.now_ms()))
            # A fresh event before reading the deadline: a call made from now on wakes us to look again.
            self._wakeup = trio.Event()
            deadline = self.coordinator.next_deadline()
            if deadline is None:
                await self._wakeup.wait()
                continue
            delay_ms = deadline - self.now_ms()
            if delay_ms > 0:
                with trio.move_on_after(delay_ms / 1000):
                    await self._wakeup.wait()

    def _wake(self) -> None:
        self._wakeup.set()

    # ---- plumbing --------------------------------------------------------------------------------------------------

    async def _apply(self, outcome: Outcome[object]) -> bool:
        """Append the outcome's records, then release the parked requests it completed. False if the append failed."""
        ok = True
        if outcome.records and self.writer is not None:
            count = sum(map(len, outcome.records.values()))
            try:
                await self.writer.append(outcome.records, self.now_ms())
            except KafkaError as exc:
                # Expected during a failover (the partition moved, or the ISR could not acknowledge in time). The
                # in-memory state already moved on; the log misses these records until the next write of the same
                # keys. Kafka answers with an error too; clients retry.
                logger.warning("could not write %d group records to __consumer_offsets: %s", count, exc)
                ok = False
            except Exception:
                logger.exception("could not write %d group records to __consumer_offsets", count)
                ok = False
        for completion in outcome.completions:
            waiter = self._waiters.get(completion.ticket)
            if waiter is not None:  # None: its request was cancelled (client gone)
                waiter.result = completion.result
                waiter.event.set()
        return ok

    async def _call(self, outcome: Outcome[JoinResult | Pending]) -> JoinResult:
        result = await self._settle(outcome)
        assert isinstance(result, JoinResult)
        return result

    async def _settle(self, outcome: Outcome[JoinResult | SyncResult | Pending]) -> JoinResult | SyncResult:
        """Apply the outcome and, if the request was parked, wait for its completion."""
        response = outcome.response
        # Register before any await: the completion may come from the very next coordinator call.
        waiter = (
            self._waiters.setdefault(response.ticket, _Waiter()) if isinstance(response, Pending) else None
        )
        self._wake()
        try:
            await self._apply(outcome)
            if waiter is None:
                assert not isinstance(response, Pending)
                return response
            await waiter.event.wait()
            assert waiter.result is not None
            return waiter.result
        finally:
            if isinstance(response, Pending):
                self._waiters.pop(response.ticket, None)

    # ---- the APIs --------------------------------------------------------------------------------------------------

    async def join_group(self, group_id: str, request: JoinRequest) -> JoinResult:
        """JoinGroup; waits (possibly up to the rebalance timeout) until the join phase completes."""
        return await self._call(self.coordinator.join_group(group_id, request, self.now_ms()))

    async def sync_group(self, group_id: str, request: SyncRequest) -> SyncResult:
        """SyncGroup; a follower waits until the leader sent the assignment."""
        result = await self._settle(self.coordinator.sync_group(group_id, request, self.now_ms()))
        assert isinstance(result, SyncResult)
        return result

    async def heartbeat(
        self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> ErrorCode:
        outcome = self.coordinator.heartbeat(
            group_id, member_id, group_instance_id, generation_id, self.now_ms()
        )
        return outcome.response

    async def leave_group(self, group_id: str, members: Sequence[MemberIdentity]) -> LeaveResult:
        outcome = self.coordinator.leave_group(group_id, members, self.now_ms())
        self._wake()
        await self._apply(outcome)
        return outcome.response

    async def commit_offsets(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Sequence[OffsetCommitEntry],
        retention_time_ms: int = -1,
    ) -> tuple[PartitionResult, ...]:
        outcome = self.coordinator.commit_offsets(
            group_id, member_id, group_instance_id, generation_id, offsets, self.now_ms(), retention_time_ms
        )
        if await self._apply(outcome):
            return outcome.response
        return tuple(
            PartitionResult(r.topic, r.partition, ErrorCode.COORDINATOR_NOT_AVAILABLE)
            if r.error is ErrorCode.NONE
            else r
            for r in outcome.response
        )

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
    ) -> tuple[PartitionResult, ...]:
        """TxnOffsetCommit: the offsets are written in the producer's transaction and stay pending until it ends."""
        now = self.now_ms()
        results, accepted = self.coordinator.txn_commit_offsets(
            group_id, member_id, group_instance_id, generation_id, offsets, now
        )
        if not accepted or self.txn_writer is None:
            if accepted:
                self.coordinator.store_pending(producer_id, group_id, accepted)
            return results
        partition = self.coordinator.partition_for(group_id)
        records = self.coordinator.offset_records(group_id, accepted)
        try:
            await self.txn_writer.append_transactional(
                partition,
                records,
                now,
                transactional_id=transactional_id,
                producer_id=producer_id,
                producer_epoch=producer_epoch,
            )
        except KafkaError as exc:
            logger.info("could not write the transactional offsets of %r: %s", group_id, exc)
            return tuple(
                PartitionResult(r.topic, r.partition, exc.code) if r.error is ErrorCode.NONE else r
                for r in results
            )
        self.coordinator.store_pending(producer_id, group_id, accepted)
        return results

    async def complete_transaction(self, partitions: Collection[int], producer_id: int, commit: bool) -> None:
        """A transaction's marker is on these partitions (called by WriteTxnMarkers once it is acknowledged)."""
        self.coordinator.complete_transaction(partitions, producer_id, commit)

    def fetch_offsets(
        self, group_id: str, topics: Sequence[tuple[str, Sequence[int]]] | None, require_stable: bool = False
    ) -> OffsetFetchResult:
        return self.coordinator.fetch_offsets(group_id, topics, require_stable)

    def describe_group(self, group_id: str) -> GroupDescription:
        return self.coordinator.describe_group(group_id)

    def list_groups(
        self, states_filter: Collection[str] = (), types_filter: Collection[str] = ()
    ) -> list[GroupListing]:
        return self.coordinator.list_groups(states_filter, types_filter)

    async def delete_groups(self, group_ids: Sequence[str]) -> tuple[tuple[str, ErrorCode], ...]:
        outcome = self.coordinator.delete_groups(group_ids, self.now_ms())
        await self._apply(outcome)
        return outcome.response

    async def delete_offsets(
        self, group_id: str, topics: Sequence[tuple[str, Sequence[int]]]
    ) -> OffsetDeleteResult:
        outcome = self.coordinator.delete_offsets(group_id, topics, self.now_ms())
        await self._apply(outcome)
        return outcome.response

    async def on_topics_deleted(self, topics: Collection[str]) -> None:
        await self._apply(self.coordinator.on_topics_deleted(topics, self.now_ms()))

    def load_partition(self, partition: int, records: Iterator[LogEntry]) -> None:
        """Rebuild a `__consumer_offsets` partition's groups (at startup, before serving its groups)."""
        self.coordinator.load(partition, records, self.now_ms())
        self._wake()

    async def unload_partition(self, partition: int) -> None:
        await self._apply(self.coordinator.unload(partition, self.now_ms()))


# ---- the records of __consumer_offsets (the log is duck-typed: this module does not import it) -------------------


class _ReadableLog(Protocol):
    @property
    def log_start_offset(self) -> int: ...

    @property
    def log_end_offset(self) -> int: ...

    def read(self, fetch_offset: int, max_bytes: int, max_offset: int | None = None) -> bytes: ...


def offsets_batch(
    records: Sequence[Record], now_ms: int, producer_id: int = -1, producer_epoch: int = -1
) -> bytearray:
    """One uncompressed v2 batch of coordinator records, as Kafka writes them (CreateTime = now, no producer); with
    a producer, a transactional batch of it (a TxnOffsetCommit's, base sequence 0 as Kafka stamps them)."""
    transactional = producer_id >= 0
    return build_batch(
        [LogRecord(offset=i, timestamp=now_ms, key=k, value=v) for i, (k, v) in enumerate(records)],
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=0 if transactional else -1,
        is_transactional=transactional,
    )


def read_records(log: _ReadableLog, max_bytes: int = 1 << 20) -> Iterator[Record]:
    """Every (key, value) of a coordinator's partition from its log start (control batches skipped)."""
    for entry in read_log_entries(log, max_bytes):
        if isinstance(entry, tuple):
            yield entry


def read_log_entries(log: _ReadableLog, max_bytes: int = 1 << 20) -> Iterator[LogEntry]:
    """Every record of a `__consumer_offsets` partition from its log start, for GroupCoordinator.load: (key, value)
    for plain batches, TxnRecord for the records of transactional ones, TxnMarker for transaction markers.
    """
    offset = log.log_start_offset
    end = log.log_end_offset
    while offset < end:
        data = log.read(offset, max_bytes, max_offset=end)
        if not data:
            break
        start = offset
        for batch in iter_batches(bytearray(data)):
            if batch.is_control:
                marker = read_end_txn_marker(batch)
                if marker is not None and batch.base_offset >= offset:
                    yield TxnMarker(batch.producer_id, marker.commit)
            else:
                for record in decode_records(batch):
                    if record.offset >= offset and record.key is not None:
                        if batch.is_transactional:
                            yield TxnRecord(record.key, record.value, batch.producer_id)
                        else:
                            yield record.key, record.value
            offset = max(offset, batch.next_offset)
        if offset == start:
            raise RuntimeError(f"reading __consumer_offsets made no progress at offset {offset}")
