"""Fetch size limits, exactly as Kafka (KIP-74).

The request's `max_bytes` bounds the whole response and each partition's `partition_max_bytes` bounds that
partition; the only exception is the first record batch of the first non-empty partition in the response, which is
returned whole even if it is larger than either limit, so a consumer can always make progress. The rule is tabled in
process (exact batch sizes, exact limits); a stock consumer whose fetch.max.bytes is far below its
max.partition.fetch.bytes then reads partitions of ~1 MB records through a real socket without ever receiving a
response larger than it allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import kbroker.common
from kbroker.app import Broker
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.records import Record, build_batch, iter_batches
from tests.broker_process import BrokerProcess
from tests.inprocess import call, running_broker

pytestmark = pytest.mark.timeout(120)

TOPIC = "limits"
VALUE = 1000  # each batch: one record of this many value bytes
BATCH = len(build_batch([Record(0, 0, b"k", b"v" * VALUE)]))


async def fill(broker: Broker, batches_per_partition: Sequence[Sequence[int]]) -> None:
    """Partition p gets one batch per size in batches_per_partition[p] (sizes in records of VALUE bytes)."""
    await broker.metadata.create_topic(TOPIC, len(batches_per_partition), 1, {})
    replicas = broker.replicas
    for partition, sizes in enumerate(batches_per_partition):
        for records in sizes:
            batch = build_batch([Record(i, 0, b"k", b"v" * VALUE) for i in range(records)])
            tp = kbroker.common.TopicPartition(TOPIC, partition)
            (result,) = replicas.append_records([(tp, batch)], required_acks=1, now_ms=broker.clock.now_ms())
            assert result.error is None


def batch_counts(response: Any) -> list[int]:
    """Record counts of the batches returned, per partition, in request order."""
    (topic,) = response.responses
    return [sum(b.record_count for b in iter_batches(bytearray(p.records or b""))) for p in topic.partitions]


def fetch(
    max_bytes: int, partition_max_bytes: Sequence[int], offsets: Sequence[int] | None = None
) -> FetchRequest:
    return FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=max_bytes,
        topics=[
            FetchTopic(
                topic=TOPIC,
                partitions=[
                    FetchPartition(
                        partition=p, fetch_offset=(offsets or [0] * 9)[p], partition_max_bytes=limit
                    )
                    for p, limit in enumerate(partition_max_bytes)
                ],
            )
        ],
    )


def size(records: int) -> int:
    return len(build_batch([Record(i, 0, b"k", b"v" * VALUE) for i in range(records)]))


# Each row: the batches of each partition (records per batch), max_bytes, each partition's partition_max_bytes, the
# record counts each partition returns.
CASES = [
    pytest.param([[1, 1], [1]], 10 * BATCH, [10 * BATCH] * 2, [2, 1], id="everything-fits"),
    pytest.param(
        [[1, 1, 1], [1]], 10 * BATCH, [2 * BATCH, 10 * BATCH], [2, 1], id="partition-max-bytes-bounds-each"
    ),
    pytest.param(
        [[1, 1, 1], [1, 1]], 3 * BATCH, [10 * BATCH] * 2, [3, 0], id="max-bytes-bounds-the-response"
    ),
    pytest.param([[1, 1], [1, 1]], 3 * BATCH, [10 * BATCH] * 2, [2, 1], id="the-budget-carries-over"),
    pytest.param([[5, 1], [1]], BATCH, [BATCH] * 2, [5, 0], id="first-batch-whole-despite-both-limits"),
    pytest.param([[5], [5]], 100 * BATCH, [BATCH] * 2, [5, 0], id="only-the-first-partition-may-exceed"),
    pytest.param(
        [[], [5, 1], [1]], BATCH, [BATCH] * 3, [0, 5, 0], id="first-non-empty-partition-gets-the-exception"
    ),
    pytest.param([[1], [5]], 2 * BATCH, [10 * BATCH] * 2, [1, 0], id="a-later-large-batch-waits-its-turn"),
    pytest.param([[2, 2]], 10 * BATCH, [size(2) + size(2) - 1], [2], id="whole-batches-only"),
]


@pytest.mark.trio
@pytest.mark.parametrize(("batches", "max_bytes", "partition_max_bytes", "expected"), CASES)
async def test_fetch_size_limits(
    tmp_path: Path,
    batches: list[list[int]],
    max_bytes: int,
    partition_max_bytes: list[int],
    expected: list[int],
) -> None:
    async with running_broker(tmp_path / "data") as broker:
        await fill(broker, batches)
        response = await call(broker, fetch(max_bytes, partition_max_bytes), 12)
        assert batch_counts(response) == expected
        total = sum(len(p.records or b"") for t in response.responses for p in t.partitions)
        first = next((len(p.records) for t in response.responses for p in t.partitions if p.records), 0)
        # Over the limit only by the first batch of the first non-empty partition.
        assert total <= max(max_bytes, first)


def test_a_stock_consumer_asking_for_1_mb_per_response_never_receives_more(broker: BrokerProcess) -> None:
    """librdkafka drops a connection whose response is larger than receive.message.max.bytes; with 20 MB allowed per
    partition and 1 MB per response, a broker that bounded the first partition only by its own limit would send
    ~3 MB here."""
    partitions, per_partition, value = 4, 3, b"x" * 900_000
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("big", partitions, 1)])["big"].result(30)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0, "batch.size": 1_000_000})
    for p in range(partitions):
        for _ in range(per_partition):
            producer.produce("big", value=value, partition=p)
            producer.flush(30)
    errors: list[KafkaError] = []
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "limits",
            "fetch.max.bytes": 1_048_576,
            "max.partition.fetch.bytes": 20 * 1_048_576,
            "receive.message.max.bytes": 2 * 1_048_576,
            "error_cb": errors.append,
        }
    )
    try:
        consumer.assign([TopicPartition("big", p, 0) for p in range(partitions)])
        received = 0
        for _ in range(200):
            message = consumer.poll(0.5)
            if message is None:
                if received == partitions * per_partition:
                    break
                continue
            assert message.error() is None, message.error()
            assert len(message.value() or b"") == len(value)
            received += 1
        assert received == partitions * per_partition
        assert errors == []
    finally:
        consumer.close()
