"""Replication and retention timing in virtual time: the broker runs in process on trio's MockClock, with a
TrioClock as its one clock, so replica.lag.time.max.ms, the ISR task and log retention play out in seconds of virtual
time without sleeping.

The leader is this node (0) of a three-broker cluster whose metadata is held in memory (tests/memory_metadata.py:
it judges AlterPartition with the controller's own rule). Its followers are played by fetch requests with their
replica ids, sent to the leader's real fetch path, exactly as a follower's fetcher sends them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from kbroker.app import Broker
from kbroker.clock import TrioClock
from kbroker.common import TopicPartition
from kbroker.config import BrokerConfig
from protocol.errors import ErrorCode
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, build_batch
from tests.inprocess import call, running_broker, wait_until
from tests.memory_metadata import MemoryMetadata

pytestmark = pytest.mark.timeout(60)

LAG_MS = 10_000
TP = TopicPartition("r", 0)
START_MS = 1_700_000_000_000


def three_brokers(config: BrokerConfig) -> MemoryMetadata:
    return MemoryMetadata(config, {0: ("127.0.0.1", 9092), 1: ("127.0.0.1", 9), 2: ("127.0.0.1", 10)})


def memory(broker: Broker) -> MemoryMetadata:
    metadata = broker.metadata
    assert isinstance(metadata, MemoryMetadata)
    return metadata


async def produce(broker: Broker, value: bytes, *, topic: str = "r", timestamp: int = 0) -> int:
    batch = bytes(build_batch([Record(0, timestamp, b"k", value)]))
    request = ProduceRequest(
        acks=1,
        timeout_ms=1000,
        topic_data=[
            TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=0, records=batch)])
        ],
    )
    response = await call(broker, request, 9)
    (partition,) = response.responses[0].partition_responses
    assert partition.error_code == ErrorCode.NONE
    return int(partition.base_offset)


async def follower_fetch(broker: Broker, replica_id: int, offset: int) -> int:
    """What a follower's fetcher sends after replicating everything below `offset`; the error code."""
    request = FetchRequest(
        replica_id=replica_id,
        max_wait_ms=0,
        max_bytes=1 << 20,
        topics=[FetchTopic(topic=TP.topic, partitions=[FetchPartition(partition=0, fetch_offset=offset)])],
    )
    response = await call(broker, request, 12)
    return int(response.responses[0].partitions[0].error_code)


@pytest.mark.trio
async def test_isr_shrinks_after_the_lag_time_and_grows_back(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    overrides = {"replica.lag.time.max.ms": str(LAG_MS)}
    async with running_broker(
        tmp_path / "data", overrides, metadata=three_brokers, clock=TrioClock(START_MS)
    ) as b:
        metadata = memory(b)
        await b.metadata.create_topic("r", 1, 3, {})
        partition = b.replicas.partitions[TP]
        assert metadata.state(TP).isr == (0, 1, 2)
        # Every follower has fetched once: the high watermark is known.
        assert await follower_fetch(b, 1, 0) == ErrorCode.NONE
        assert await follower_fetch(b, 2, 0) == ErrorCode.NONE
        await produce(b, b"one")
        assert partition.high_watermark == 0  # not on the followers yet
        assert await follower_fetch(b, 1, 1) == ErrorCode.NONE  # follower 1 has it; follower 2 stops fetching
        assert partition.high_watermark == 0  # the ISR still includes follower 2

        # The ISR task checks every lag/2 (virtual) seconds: at 5 s follower 2 is behind for 5 s only.
        await trio.sleep(LAG_MS / 1000 - 1)
        assert metadata.alter_partition_calls == []
        assert metadata.state(TP).isr == (0, 1, 2)
        # Past replica.lag.time.max.ms: out of the ISR, and the high watermark moves without it.
        await trio.sleep(2 + LAG_MS / 2000)
        assert metadata.alter_partition_calls == [(TP, (0, 1))]
        assert metadata.state(TP).isr == (0, 1)
        assert partition.isr == (0, 1)
        assert partition.high_watermark == 1

        # Follower 2 returns: below the high watermark it is not in sync yet; once it reaches it, back in.
        assert await follower_fetch(b, 2, 0) == ErrorCode.NONE
        await trio.sleep(LAG_MS / 1000)
        assert metadata.state(TP).isr == (0, 1)
        assert await follower_fetch(b, 2, 1) == ErrorCode.NONE
        # The fetch wakes the ISR task at once: no lag period to wait out.
        await wait_until(lambda: partition.isr == (0, 1, 2), timeout_s=0.1)
        assert metadata.state(TP).isr == (0, 1, 2)


@pytest.mark.trio
async def test_a_dead_follower_is_neither_kept_nor_proposed_for_the_isr(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """A broker whose registration lapsed leaves the ISR (the controller's doing) and the leader never proposes it
    again, however long the partition stays idle with the follower's last position at the high watermark."""
    overrides = {"replica.lag.time.max.ms": str(LAG_MS)}
    async with running_broker(
        tmp_path / "data", overrides, metadata=three_brokers, clock=TrioClock(START_MS)
    ) as b:
        metadata = memory(b)
        await b.metadata.create_topic("r", 1, 3, {})
        for follower in (1, 2):
            assert await follower_fetch(b, follower, 0) == ErrorCode.NONE
        metadata.set_brokers({0, 1})
        metadata.set_partition(TP, leader=0, isr=(0, 1))
        # Follower 1 keeps fetching; 2 is dead. A minute of ISR checks (one every 5 s):
        for _ in range(12):
            await trio.sleep(5)
            assert await follower_fetch(b, 1, 0) == ErrorCode.NONE
        assert metadata.alter_partition_calls == []
        assert metadata.state(TP).isr == (0, 1)


@pytest.mark.trio
async def test_retention_by_time_runs_on_the_clock(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    overrides = {"log.retention.check.interval.ms": "1000", "log.segment.bytes": "1024"}
    clock = TrioClock(START_MS)
    async with running_broker(tmp_path / "data", overrides, clock=clock) as b:
        await b.metadata.create_topic("t", 1, 1, {"retention.ms": "60000"})
        for _ in range(10):
            await produce(b, b"v" * 300, topic="t", timestamp=clock.now_ms())
        plog = b.replicas.leader_log(TopicPartition("t", 0))
        assert plog is not None
        segments = len(plog.segments)
        assert segments > 3
        # Retention has run every second for 59 s: nothing is old enough yet.
        await trio.sleep(59)
        assert (len(plog.segments), plog.log_start_offset) == (segments, 0)
        # Past retention.ms every segment goes, the active one too (a new empty one is rolled first, as Kafka
        # does); consumers find the log start moved.
        await trio.sleep(3)
        assert len(plog.segments) == 1
        assert plog.log_start_offset > 0
        request = FetchRequest(
            replica_id=-1,
            max_wait_ms=0,
            max_bytes=1 << 20,
            topics=[FetchTopic(topic="t", partitions=[FetchPartition(partition=0, fetch_offset=0)])],
        )
        response = await call(b, request, 12)
        assert response.responses[0].partitions[0].error_code == ErrorCode.OFFSET_OUT_OF_RANGE


@pytest.mark.trio
async def test_acks_1_writes_are_fsynced_within_the_flush_interval(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """log.flush.interval.ms bounds what acks=1 can lose to a power cut: nothing else asks for their fsync."""
    overrides = {"log.flush.interval.ms": "1000"}
    async with running_broker(tmp_path / "data", overrides, clock=TrioClock(START_MS)) as b:
        await b.metadata.create_topic("t", 1, 1, {})
        await produce(b, b"one", topic="t")
        found = b.replicas.leader_log(TopicPartition("t", 0))
        assert found is not None
        plog = found
        assert plog.recovery_point < plog.log_end_offset == 1  # written, not fsynced
        await trio.sleep(0.9)
        assert plog.recovery_point == 0
        await wait_until(lambda: plog.recovery_point == 1, timeout_s=60)  # the fsync runs in a worker thread
    async with running_broker(
        tmp_path / "never", {"log.flush.interval.ms": "0"}, clock=TrioClock(START_MS)
    ) as b:
        await b.metadata.create_topic("t", 1, 1, {})
        await produce(b, b"one", topic="t")
        never = b.replicas.leader_log(TopicPartition("t", 0))
        assert never is not None
        # Without it (Kafka's default), an hour later the write is still only in the page cache.
        await trio.sleep(3600)
        assert never.recovery_point == 0
