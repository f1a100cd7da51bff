"""The transaction APIs, tabled in process: (request, version) -> the answer's fields, against a real broker
(tests/inprocess.py, through the codec: tests/handler_tables.py). The rows follow Kafka's answers; the same requests
go to Apache Kafka in compat/test_response_diff.py.
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
from protocol.records import Record, build_batch
from tests.handler_tables import Setup, assert_answer, started

pytestmark = pytest.mark.timeout(60)

T = "t"
PRODUCING = 4242
"""A producer with a transaction open on T-0 from offset 1 (offset 0 holds a plain record)."""


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with started(tmp_path, Setup(), {T: (2, {})}) as running:
        tp = TopicPartition(T, 0)
        now = running.clock.now_ms()
        plain = build_batch([Record(0, now, None, b"plain")])
        txn = build_batch(
            [Record(0, now, None, b"a"), Record(1, now, None, b"b")],
            producer_id=PRODUCING,
            producer_epoch=3,
            base_sequence=0,
            is_transactional=True,
        )
        guards = running.replicas.begin_transaction_verification(PRODUCING, [tp], now)
        for batch in (plain, txn):
            [result] = running.replicas.append_records(
                [(tp, batch)], required_acks=1, now_ms=now, verification_guards=guards
            )
            assert result.error is None
        yield running


# ---- DescribeProducers (v0) -------------------------------------------------------------------------------------


def describe_producers(*partitions: tuple[str, int]) -> DescribeProducersRequest:
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    return DescribeProducersRequest(
        topics=[TopicRequest(name=topic, partition_indexes=indexes) for topic, indexes in by_topic.items()]
    )


def producers(response: DescribeProducersResponse) -> list[dict[str, Any]]:
    return [
        {
            "topic": t.name,
            "partition": p.partition_index,
            "error": p.error_code,
            "producers": [
                (
                    s.producer_id,
                    s.producer_epoch,
                    s.last_sequence,
                    s.coordinator_epoch,
                    s.current_txn_start_offset,
                )
                for s in p.active_producers
            ],
        }
        for t in response.topics
        for p in t.partitions
    ]


TRANSACTIONAL_DESCRIBE_PRODUCERS_CASES = [
    pytest.param(
        describe_producers((T, 0)),
        0,
        [{"error": E.NONE, "producers": [(PRODUCING, 3, 1, -1, 1)]}],
        id="an-open-transaction",
    ),
    pytest.param(describe_producers((T, 1)), 0, [{"error": E.NONE, "producers": []}], id="no-producers"),
    pytest.param(
        describe_producers((T, 7), ("nope", 0)),
        0,
        [{"error": E.UNKNOWN_TOPIC_OR_PARTITION}, {"error": E.UNKNOWN_TOPIC_OR_PARTITION}],
        id="unknown-partitions",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), TRANSACTIONAL_DESCRIBE_PRODUCERS_CASES)
async def test_describe_producers(broker: Broker, request_: Any, version: int, expected: Any) -> None:
    await assert_answer(broker, request_, version, producers, expected)
