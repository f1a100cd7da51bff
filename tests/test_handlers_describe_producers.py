"""DescribeProducers, tabled in process: (request, version) -> each partition's error code and active producers,
against a real broker (tests/inprocess.py, through the codec: tests/handler_tables.py).

Topic IDEMPOTENT-0 holds two batches of producer 5 (epoch 0, sequences 0-2 and 3-4), a batch of producer 9 (epoch 1,
sequence 0) and a batch written without a producer id; partition 1 holds nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kbroker.app import Broker
from kbroker.common import TopicPartition
from protocol.errors import ErrorCode as E
from protocol.messages.describe_producers_request import DescribeProducersRequest, TopicRequest
from protocol.messages.describe_producers_response import DescribeProducersResponse
from tests.handler_tables import (
    OTHER,
    REMOTE_TOPIC,
    Setup,
    assert_answer,
    produce,
    records,
    started,
    wire_call,
)
from tests.memory_metadata import MemoryMetadata

pytestmark = pytest.mark.timeout(60)

IDEMPOTENT = "idempotent"


@pytest.fixture
async def producers(tmp_path: Path) -> AsyncIterator[Broker]:
    async with started(
        tmp_path, Setup(two_brokers=True), {IDEMPOTENT: (2, {}), REMOTE_TOPIC: (1, {})}
    ) as broker:
        metadata = broker.metadata
        assert isinstance(metadata, MemoryMetadata)
        metadata.set_partition(TopicPartition(REMOTE_TOPIC, 0), leader=OTHER, isr=(OTHER,), replicas=(OTHER,))
        for batch in (
            records(1000, 1001, 1002, producer_id=5, producer_epoch=0, base_sequence=0),
            records(2000, 2500, producer_id=5, producer_epoch=0, base_sequence=3),
            records(3000, producer_id=9, producer_epoch=1, base_sequence=0),
            records(4000),
        ):
            response = await wire_call(broker, produce(IDEMPOTENT, bytes(batch), acks=1), 9)
            assert response.responses[0].partition_responses[0].error_code == E.NONE
        yield broker


def describe(topic: str, *partitions: int) -> DescribeProducersRequest:
    return DescribeProducersRequest(topics=[TopicRequest(name=topic, partition_indexes=list(partitions))])


def described(response: DescribeProducersResponse) -> list[dict[str, Any]]:
    return [
        {
            "topic": t.name,
            "partition": p.partition_index,
            "error": p.error_code,
            "message": p.error_message,
            "producers": [
                (
                    s.producer_id,
                    s.producer_epoch,
                    s.last_sequence,
                    s.last_timestamp,
                    s.coordinator_epoch,
                    s.current_txn_start_offset,
                )
                for s in p.active_producers
            ],
        }
        for t in response.topics
        for p in t.partitions
    ]


DESCRIBE_PRODUCERS_CASES = [
    pytest.param(
        describe(IDEMPOTENT, 0),
        0,
        [
            {
                "partition": 0,
                "error": E.NONE,
                # producer id, epoch, last sequence, its batch's max timestamp, no coordinator, no transaction
                "producers": [(5, 0, 4, 2500, -1, -1), (9, 1, 0, 3000, -1, -1)],
            }
        ],
        id="every-idempotent-producer-of-the-partition",
    ),
    pytest.param(
        describe(IDEMPOTENT, 1, 0),
        0,
        [{"partition": 1, "error": E.NONE, "producers": []}, {"partition": 0, "error": E.NONE}],
        id="a-partition-without-producers-and-the-order-asked",
    ),
    pytest.param(
        describe("nope", 0),
        0,
        # Kafka explains a missing topic in its error's standard words, a missing partition not at all.
        [
            {
                "topic": "nope",
                "partition": 0,
                "error": E.UNKNOWN_TOPIC_OR_PARTITION,
                "message": "This server does not host this topic-partition.",
                "producers": [],
            }
        ],
        id="unknown-topic",
    ),
    pytest.param(
        describe(IDEMPOTENT, 2),
        0,
        [{"partition": 2, "error": E.UNKNOWN_TOPIC_OR_PARTITION, "message": None, "producers": []}],
        id="unknown-partition",
    ),
    pytest.param(
        describe(REMOTE_TOPIC, 0),
        0,
        [{"partition": 0, "error": E.NOT_LEADER_OR_FOLLOWER, "producers": []}],
        id="partition-hosted-elsewhere",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), DESCRIBE_PRODUCERS_CASES)
async def test_describe_producers(
    producers: Broker, request_: DescribeProducersRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    await assert_answer(producers, request_, version, described, expected)
