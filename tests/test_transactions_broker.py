"""Transactions through a whole broker in process, over the handlers (tests/inprocess.py), with the timers in virtual
time (trio's MockClock at real speed, jumped forward past the timeouts: fsyncs run in worker threads, so the clock
must not jump by itself while they do; the broker's clock is a TrioClock).

A timed-out transaction is aborted and its producer fenced; a zombie producer is fenced at the coordinator and at
the partitions; a commit decided before a crash is completed by the restarted coordinator; a transaction's consumer
offsets become visible only when it commits (and survive a restart as they were: committed, or still pending); idle
transactional ids expire.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from kbroker.app import Broker
from kbroker.clock import TrioClock
from kbroker.common import TopicPartition
from kbroker.transaction.coordinator import TxnWrite
from protocol.errors import ErrorCode as E
from protocol.messages.add_offsets_to_txn_request import AddOffsetsToTxnRequest
from protocol.messages.add_partitions_to_txn_request import AddPartitionsToTxnRequest, AddPartitionsToTxnTopic
from protocol.messages.describe_transactions_request import DescribeTransactionsRequest
from protocol.messages.end_txn_request import EndTxnRequest
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.fetch_response import FetchResponse
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.init_producer_id_request import InitProducerIdRequest
from protocol.messages.offset_fetch_request import OffsetFetchRequest, OffsetFetchRequestTopic
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.messages.txn_offset_commit_request import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from protocol.records import (
    Record,
    RecordBatch,
    build_batch,
    decode_records,
    iter_batches,
    read_end_txn_marker,
)
from tests.inprocess import call, running_broker, wait_until

pytestmark = [pytest.mark.timeout(120), pytest.mark.trio]

T = "events"
TP = TopicPartition(T, 0)
G = "group"
START_MS = 1_700_000_000_000
TIMEOUT_MS = 10_000
SETTINGS = {
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
    "transaction.remove.expired.transaction.cleanup.interval.ms": "10000",
    "transactional.id.expiration.ms": "60000",
}


@asynccontextmanager
async def broker_on(data: Path) -> AsyncIterator[Broker]:
    async with running_broker(data, SETTINGS, clock=TrioClock(START_MS)) as broker:
        if T not in broker.metadata.image().topics:
            await broker.metadata.create_topic(T, 1, 1, {})
        yield broker


class Producer:
    """A transactional producer speaking the protocol as the Java client does (v3-v9 requests)."""

    def __init__(self, broker: Broker, transactional_id: str) -> None:
        self.broker, self.id = broker, transactional_id
        self.pid, self.epoch, self.seq = -1, -1, 0

    async def init(self) -> None:
        with trio.fail_after(60):
            while True:
                find = await call(self.broker, FindCoordinatorRequest(key=self.id, key_type=1), 3)
                if find.error_code == E.NONE:
                    break
                await trio.sleep(0.1)
            while True:
                request = InitProducerIdRequest(transactional_id=self.id, transaction_timeout_ms=TIMEOUT_MS)
                response = await call(self.broker, request, 4)
                if response.error_code not in (E.CONCURRENT_TRANSACTIONS, E.NOT_COORDINATOR):
                    break
                await trio.sleep(0.1)
        assert response.error_code == E.NONE
        self.pid, self.epoch, self.seq = response.producer_id, response.producer_epoch, 0

    async def add(self, tp: TopicPartition = TP) -> int:
        request = AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=self.id,
            v3_and_below_producer_id=self.pid,
            v3_and_below_producer_epoch=self.epoch,
            v3_and_below_topics=[AddPartitionsToTxnTopic(name=tp.topic, partitions=[tp.partition])],
        )
        with trio.fail_after(30):
            while True:
                response = await call(self.broker, request, 3)
                error = response.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code
                if error != E.CONCURRENT_TRANSACTIONS:
                    return int(error)
                await trio.sleep(0.02)

    async def send(self, *values: bytes) -> tuple[int, int]:
        """(error, base offset) of one transactional batch to T-0."""
        now = self.broker.clock.now_ms()
        batch = build_batch(
            [Record(i, now, None, v) for i, v in enumerate(values)],
            producer_id=self.pid,
            producer_epoch=self.epoch,
            base_sequence=self.seq,
            is_transactional=True,
        )
        self.seq += len(values)
        request = ProduceRequest(
            transactional_id=self.id,
            acks=-1,
            timeout_ms=30_000,
            topic_data=[
                TopicProduceData(name=T, partition_data=[PartitionProduceData(index=0, records=bytes(batch))])
            ],
        )
        response = await call(self.broker, request, 9)
        partition = response.responses[0].partition_responses[0]
        return int(partition.error_code), int(partition.base_offset)

    async def end(self, commit: bool) -> int:
        request = EndTxnRequest(
            transactional_id=self.id, producer_id=self.pid, producer_epoch=self.epoch, committed=commit
        )
        return int((await call(self.broker, request, 3)).error_code)

    async def commit_offset(self, group: str, offset: int) -> int:
        add = AddOffsetsToTxnRequest(
            transactional_id=self.id, producer_id=self.pid, producer_epoch=self.epoch, group_id=group
        )
        error = (await call(self.broker, add, 3)).error_code
        if error != E.NONE:
            return int(error)
        request = TxnOffsetCommitRequest(
            transactional_id=self.id,
            group_id=group,
            producer_id=self.pid,
            producer_epoch=self.epoch,
            topics=[
                TxnOffsetCommitRequestTopic(
                    name=T,
                    partitions=[TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=offset)],
                )
            ],
        )
        response = await call(self.broker, request, 3)
        return int(response.topics[0].partitions[0].error_code)


async def state_of(broker: Broker, transactional_id: str) -> tuple[int, str, int]:
    response = await call(broker, DescribeTransactionsRequest(transactional_ids=[transactional_id]), 0)
    s = response.transaction_states[0]
    return s.error_code, s.transaction_state, s.producer_epoch


async def wait_for_state(broker: Broker, transactional_id: str, state: str) -> None:
    """Until DescribeTransactions shows `state` ("" once the id is gone)."""
    with trio.fail_after(60):
        while (await state_of(broker, transactional_id))[1] != state:  # noqa: ASYNC110 (polling the broker)
            await trio.sleep(0.05)


async def read_committed(broker: Broker, offset: int = 0) -> tuple[list[bytes], list[tuple[int, int]], int]:
    """(values a read_committed consumer keeps, aborted transactions, LSO)."""
    request = FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        max_bytes=1 << 20,
        isolation_level=1,
        topics=[
            FetchTopic(
                topic=T,
                partitions=[FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)],
            )
        ],
    )
    response: FetchResponse = await call(broker, request, 12)
    partition = response.responses[0].partitions[0]
    aborted = [(a.producer_id, a.first_offset) for a in partition.aborted_transactions or []]
    return consumed(partition.records or b"", aborted), aborted, int(partition.last_stable_offset)


def consumed(records: bytes | memoryview, aborted: list[tuple[int, int]]) -> list[bytes]:
    """What a read_committed consumer keeps (Kafka's consumer algorithm): a producer's transactional batches are
    skipped from the first offset of one of its aborted transactions until its ABORT marker."""
    upcoming = sorted(aborted, key=lambda a: a[1])
    skipping: set[int] = set()
    kept: list[bytes] = []
    for batch in iter_batches(records):
        while upcoming and upcoming[0][1] <= batch.last_offset:
            skipping.add(upcoming.pop(0)[0])
        if batch.is_control:
            marker = read_end_txn_marker(RecordBatch(bytearray(batch.buf)))
            if marker is not None and not marker.commit:
                skipping.discard(batch.producer_id)
            continue
        if batch.is_transactional and batch.producer_id in skipping:
            continue
        kept += [r.value for r in decode_records(batch) if r.value is not None]
    return kept


async def committed_offset(broker: Broker, group: str, require_stable: bool) -> tuple[int, int]:
    """(offset, error) of T-0 for `group` (OffsetFetch v7)."""
    request = OffsetFetchRequest(
        group_id=group,
        topics=[OffsetFetchRequestTopic(name=T, partition_indexes=[0])],
        require_stable=require_stable,
    )
    response: Any = await call(broker, request, 7)
    p = response.topics[0].partitions[0]
    return int(p.committed_offset), int(p.error_code)


async def test_a_timed_out_transaction_is_aborted_and_its_producer_fenced(
    tmp_path: Path, mock_clock: trio.testing.MockClock
) -> None:
    mock_clock.rate = 1
    async with broker_on(tmp_path / "data") as broker:
        producer = Producer(broker, "slow")
        await producer.init()
        assert await producer.add() == E.NONE
        error, first = await producer.send(b"never")
        assert error == E.NONE
        assert (await read_committed(broker))[2] == first, "the LSO waits for the transaction"
        assert (await state_of(broker, "slow"))[1] == "Ongoing"
        mock_clock.jump(TIMEOUT_MS / 1000 + 2)  # the abort task runs every second
        await wait_for_state(broker, "slow", "CompleteAbort")
        kept, aborted, lso = await read_committed(broker)
        assert (kept, aborted) == ([], [(producer.pid, first)])
        assert lso == broker.replicas.leader_log(TP).high_watermark  # type: ignore[union-attr]
        assert (await state_of(broker, "slow"))[2] == producer.epoch + 1, "fenced"
        assert await producer.end(commit=True) == E.PRODUCER_FENCED
        assert (await producer.send(b"zombie"))[0] == E.INVALID_PRODUCER_EPOCH


async def test_a_new_producer_fences_the_zombie_everywhere(tmp_path: Path) -> None:
    async with broker_on(tmp_path / "data") as broker:
        zombie = Producer(broker, "app")
        await zombie.init()
        assert await zombie.add() == E.NONE
        _, first = await zombie.send(b"from-the-zombie")
        fresh = Producer(broker, "app")
        await fresh.init()  # aborts the zombie's transaction first
        assert (fresh.pid, fresh.epoch) == (zombie.pid, zombie.epoch + 2)
        assert await zombie.add() == E.PRODUCER_FENCED
        assert await zombie.end(commit=True) == E.PRODUCER_FENCED
        assert (await zombie.send(b"late"))[0] == E.INVALID_PRODUCER_EPOCH
        assert await fresh.add() == E.NONE
        await fresh.send(b"from-the-new-one")
        assert await fresh.end(commit=True) == E.NONE
        await wait_for_state(broker, "app", "CompleteCommit")
        kept, aborted, _ = await read_committed(broker)
        assert kept == [b"from-the-new-one"]
        assert aborted == [(zombie.pid, first)]


async def test_a_restarted_coordinator_completes_the_commit_it_decided(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with broker_on(data) as broker:
        producer = Producer(broker, "decided")
        await producer.init()
        assert await producer.add() == E.NONE
        await producer.send(b"one", b"two")
        # What a coordinator that dies right after the decision leaves: PrepareCommit durable, no marker anywhere.
        coordinator = broker.transactions.coordinator
        decision = coordinator.prepare_end("decided", producer.pid, producer.epoch, True, True, 0)
        assert isinstance(decision, TxnWrite)
        assert await broker.transactions._write(decision) == E.NONE
        assert (await state_of(broker, "decided"))[1] == "PrepareCommit"
        assert (await read_committed(broker))[0] == []
    async with broker_on(data) as restarted:
        await wait_for_state(restarted, "decided", "CompleteCommit")
        assert (await read_committed(restarted))[0] == [b"one", b"two"]


async def test_transactional_offsets_are_visible_only_once_committed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with broker_on(data) as broker:
        producer = Producer(broker, "offsets")
        await producer.init()
        assert await producer.commit_offset(G, 10) == E.NONE
        assert await committed_offset(broker, G, require_stable=False) == (-1, E.NONE)
        assert await committed_offset(broker, G, require_stable=True) == (-1, E.UNSTABLE_OFFSET_COMMIT)
        assert await producer.end(commit=True) == E.NONE
        await wait_for_state(broker, "offsets", "CompleteCommit")
        assert await committed_offset(broker, G, require_stable=True) == (10, E.NONE)
        assert await producer.commit_offset(G, 20) == E.NONE
        assert await producer.end(commit=False) == E.NONE
        await wait_for_state(broker, "offsets", "CompleteAbort")
        assert await committed_offset(broker, G, require_stable=True) == (10, E.NONE), "aborted: unchanged"
        assert await producer.commit_offset(G, 30) == E.NONE  # still open when the broker stops
    async with broker_on(data) as restarted:
        assert await committed_offset(restarted, G, require_stable=True) == (-1, E.UNSTABLE_OFFSET_COMMIT)
        assert await committed_offset(restarted, G, require_stable=False) == (10, E.NONE)
        again = Producer(restarted, "offsets")
        await again.init()  # aborts the open transaction: its offset 30 is dropped
        await wait_until(lambda: not restarted.groups.coordinator.pending_txn_offsets)
        assert await committed_offset(restarted, G, require_stable=True) == (10, E.NONE)


async def test_idle_transactional_ids_expire(tmp_path: Path, mock_clock: trio.testing.MockClock) -> None:
    mock_clock.rate = 1
    data = tmp_path / "data"
    async with broker_on(data) as broker:
        producer = Producer(broker, "idle")
        await producer.init()
        assert (await state_of(broker, "idle"))[0] == E.NONE
        mock_clock.jump(80)  # past transactional.id.expiration.ms, and a removal round
        await wait_for_state(broker, "idle", "")
    async with broker_on(data) as restarted:
        await wait_until(lambda: bool(restarted.transactions.coordinator.partitions))
        assert (await state_of(restarted, "idle"))[0] == E.TRANSACTIONAL_ID_NOT_FOUND
