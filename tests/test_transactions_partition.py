"""The partition side of transactions through the handlers, in process: Fetch at read_committed stops at the last
stable offset and names the aborted transactions its records overlap, ListOffsets at read_committed answers the LSO,
a parked read_committed fetch wakes when a marker makes records stable, and DescribeProducers shows open
transactions. Batches and markers are written through the replica manager, as the Produce and WriteTxnMarkers
handlers do (the coordinator's side is tests/test_transactions_coordinator.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from kbroker.app import Broker
from kbroker.common import TopicPartition
from protocol.errors import ErrorCode
from protocol.messages.describe_producers_request import DescribeProducersRequest, TopicRequest
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.fetch_response import FetchResponse
from protocol.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.records import Record, build_batch, decode_records, iter_batches
from tests.handler_tables import Setup, started, wire_call
from tests.inprocess import wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.trio]

T = "txn"
TP = TopicPartition(T, 0)
P1, P2 = 9001, 9002


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with started(tmp_path, Setup(), {T: (1, {})}) as running:
        yield running


class Producer:
    def __init__(self, pid: int) -> None:
        self.pid, self.seq = pid, 0

    def send(self, broker: Broker, *values: bytes) -> int:
        """Append a transactional batch (verified, as the Produce handler does); its base offset."""
        now = broker.clock.now_ms()
        guards = broker.replicas.begin_transaction_verification(self.pid, [TP], now)
        batch = build_batch(
            [Record(i, now, None, v) for i, v in enumerate(values)],
            producer_id=self.pid,
            producer_epoch=0,
            base_sequence=self.seq,
            is_transactional=True,
        )
        self.seq += len(values)
        [result] = broker.replicas.append_records(
            [(TP, batch)], required_acks=1, now_ms=now, verification_guards=guards
        )
        assert result.error is None
        assert result.info is not None
        return result.info.base_offset

    async def end(self, broker: Broker, commit: bool) -> None:
        results = broker.replicas.append_end_txn_markers(
            [TP],
            producer_id=self.pid,
            producer_epoch=0,
            coordinator_epoch=0,
            commit=commit,
            now_ms=broker.clock.now_ms(),
        )
        await broker.replicas.wait_for_acks(results, 5000)
        assert results[0].error is None


def plain(broker: Broker, value: bytes) -> None:
    [result] = broker.replicas.append_records(
        [(TP, build_batch([Record(0, 0, None, value)]))], required_acks=1, now_ms=broker.clock.now_ms()
    )
    assert result.error is None


def fetch(offset: int, isolation_level: int, max_wait_ms: int = 0) -> FetchRequest:
    return FetchRequest(
        replica_id=-1,
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=isolation_level,
        topics=[
            FetchTopic(
                topic=T,
                partitions=[FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)],
            )
        ],
    )


def values(response: FetchResponse) -> list[bytes | None]:
    data = response.responses[0].partitions[0].records or b""
    return [r.value for b in iter_batches(data) if not b.is_control for r in decode_records(b)]


async def list_offset(broker: Broker, isolation_level: int) -> int:
    request = ListOffsetsRequest(
        replica_id=-1,
        isolation_level=isolation_level,
        topics=[ListOffsetsTopic(name=T, partitions=[ListOffsetsPartition(partition_index=0, timestamp=-1)])],
    )
    response = await wire_call(broker, request, 9)
    return int(response.topics[0].partitions[0].offset)


async def test_read_committed_reads_up_to_the_lso_with_the_aborted_transactions(broker: Broker) -> None:
    committed, aborted = Producer(P1), Producer(P2)
    plain(broker, b"plain-0")
    first_committed = committed.send(broker, b"c1", b"c2")
    first_aborted = aborted.send(broker, b"a1")
    plain(broker, b"plain-1")
    end = await list_offset(broker, 0)
    assert await list_offset(broker, 1) == first_committed, "the LSO: the first open transaction"

    response = await wire_call(broker, fetch(0, isolation_level=1), 12)
    partition = response.responses[0].partitions[0]
    assert (partition.high_watermark, partition.last_stable_offset) == (end, first_committed)
    assert values(response) == [b"plain-0"]
    assert partition.aborted_transactions == []
    uncommitted = await wire_call(broker, fetch(0, isolation_level=0), 12)
    assert values(uncommitted) == [b"plain-0", b"c1", b"c2", b"a1", b"plain-1"]
    assert uncommitted.responses[0].partitions[0].aborted_transactions is None

    await committed.end(broker, commit=True)
    await aborted.end(broker, commit=False)
    response = await wire_call(broker, fetch(0, isolation_level=1), 12)
    partition = response.responses[0].partitions[0]
    assert partition.last_stable_offset == partition.high_watermark == await list_offset(broker, 1)
    assert [(t.producer_id, t.first_offset) for t in partition.aborted_transactions] == [(P2, first_aborted)]
    # What a read_committed consumer keeps: everything but the aborted producer's records from its first offset.
    assert values(response) == [b"plain-0", b"c1", b"c2", b"a1", b"plain-1"]
    # A fetch from after the abort marker does not hear of it.
    after_markers = await list_offset(broker, 1)
    plain(broker, b"plain-2")
    later = await wire_call(broker, fetch(after_markers, isolation_level=1), 12)
    assert values(later) == [b"plain-2"]
    assert later.responses[0].partitions[0].aborted_transactions == []


async def test_a_parked_read_committed_fetch_wakes_when_the_marker_lands(broker: Broker) -> None:
    producer = Producer(P1)
    first = producer.send(broker, b"pending")
    got: list[FetchResponse] = []
    answered = trio.Event()

    async def consumer() -> None:
        got.append(await wire_call(broker, fetch(first, isolation_level=1, max_wait_ms=20_000), 12))
        answered.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(consumer)
        # Parked: the fetch waits on the partition (its first read found nothing stable).
        await wait_until(lambda: broker.replicas.purgatory.watching(TP) == 1)
        assert not got
        with trio.fail_after(5):
            await producer.end(broker, commit=True)
            await answered.wait()
    assert values(got[0]) == [b"pending"]


async def test_describe_producers_shows_open_transactions(broker: Broker) -> None:
    producer = Producer(P1)
    first = producer.send(broker, b"x")
    request = DescribeProducersRequest(topics=[TopicRequest(name=T, partition_indexes=[0, 5])])
    response = await wire_call(broker, request, 0)
    found, missing = response.topics[0].partitions
    assert found.error_code == ErrorCode.NONE
    [state] = found.active_producers
    assert (state.producer_id, state.producer_epoch, state.current_txn_start_offset) == (P1, 0, first)
    assert state.last_sequence == 0
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    await producer.end(broker, commit=True)
    response = await wire_call(broker, request, 0)
    assert response.topics[0].partitions[0].active_producers[0].current_txn_start_offset == -1
