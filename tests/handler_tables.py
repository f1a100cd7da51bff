"""What the handler tables (tests/test_handlers_*.py) share: a handler called as the wire would call it, responses
read as rows, and the cluster states the tables start from.

`wire_call` encodes the request at the row's version and decodes it again, so the handler sees exactly the fields
that version carries (a field the version lacks arrives as its default, as from a real client); the response goes
through the codec at the same version, so a row checks what a client would read and a response the codec cannot
write at that version fails the row.

A row that states Kafka's answer where kbroker answers otherwise is marked `kafka_differs(reason)`: a strict xfail,
so the table passes while the difference stands and fails the day kbroker answers as Kafka does (then drop the mark).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from kbroker.app import Broker
from kbroker.common import TopicPartition
from kbroker.config import BrokerConfig
from protocol.codec import decode, encode
from protocol.messages import RESPONSES, SCHEMAS
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, build_batch
from tests.inprocess import call
from tests.memory_metadata import MemoryMetadata

NODE = 0
"""The node id of every in-process broker (node.id's default)."""
OTHER = 7
"""A second broker of the in-memory cluster (`two_brokers`); nothing listens at its address."""
NOW_MS = 1_700_000_000_000


class FixedClock:
    """A broker clock that never moves, so that LogAppendTime and commit timestamps are known to the table."""

    def now_ms(self) -> int:
        return NOW_MS


def kafka_differs(reason: str) -> pytest.MarkDecorator:
    """The mark of a row that states Kafka's answer where kbroker answers otherwise ("kbroker answers X, Kafka Y")."""
    return pytest.mark.xfail(strict=True, reason=reason)


async def wire_call(broker: Broker, request: Any, version: int) -> Any:
    """The handler's answer to `request` at `version`, both through the codec at that version; None when the handler
    sends no response (acks=0)."""
    schema = SCHEMAS[type(request)]
    response = await call(broker, decode(type(request), version, encode(request, version)), version)
    if response is None:
        return None
    return decode(RESPONSES[schema.api_key], version, encode(response, version))


def cut(actual: Sequence[Mapping[str, Any]], expected: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each actual row cut down to the keys its expected row names (a row past the expected ones keeps all its keys),
    so `assert cut(actual, expected) == expected` compares only what a table names and still shows a missing or an
    extra row."""
    return [{k: row[k] for k in expected[i]} if i < len(expected) else dict(row) for i, row in enumerate(actual)]


def two_brokers(config: BrokerConfig) -> MemoryMetadata:
    """In-memory metadata of this node and broker OTHER, for partitions led elsewhere, not hosted, or leaderless."""
    return MemoryMetadata(config, {NODE: ("127.0.0.1", 9092), OTHER: ("127.0.0.1", 9)})


def records(*timestamps: int, value: bytes = b"v", **options: Any) -> bytearray:
    """One batch of one record per timestamp (offsets from 0; the log assigns the real ones)."""
    return build_batch([Record(i, ts, None, value) for i, ts in enumerate(timestamps)], **options)


def produce(
    topic: str,
    batch: bytes | None,
    *,
    acks: int = 1,
    partition: int = 0,
    transactional_id: str | None = None,
) -> ProduceRequest:
    return ProduceRequest(
        transactional_id=transactional_id,
        acks=acks,
        timeout_ms=5000,
        topic_data=[TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=partition, records=batch)])],
    )


# The log of HISTORY_TOPIC-0 that `write_history` leaves, for the tables of Fetch, ListOffsets and
# OffsetForLeaderEpoch: offsets 0-2 written at leader epoch 0 with timestamps 1000, 4000, 2000; the leadership then
# moves away and back (epoch 2) and offsets 3-4 are written with 3000, 3500; the log start is then moved to 1.
HISTORY_TOPIC = "h"
EMPTY_TOPIC = "empty"
"""A partition this node leads at epoch 0 that holds no record."""
REMOTE_TOPIC = "remote"
"""A partition that exists but of which this node holds no replica (broker OTHER leads it)."""
LOG_START = 1
LOG_END = 5
CURRENT_EPOCH = 2
EPOCH_2_START = 3


async def write_history(broker: Broker) -> None:
    """Build HISTORY_TOPIC, EMPTY_TOPIC and REMOTE_TOPIC on a broker running on `two_brokers` metadata."""
    metadata = broker.metadata
    assert isinstance(metadata, MemoryMetadata)
    for name in (HISTORY_TOPIC, EMPTY_TOPIC, REMOTE_TOPIC):
        await metadata.create_topic(name, 1, 1, {})
    tp = TopicPartition(HISTORY_TOPIC, 0)
    await _append(broker, tp, records(1000, 4000, 2000))
    # No leader, then this node again: the controller bumps the epoch at each change.
    metadata.set_partition(tp, leader=-1, isr=(NODE,))
    metadata.set_partition(tp, leader=NODE, isr=(NODE,))
    assert metadata.state(tp).leader_epoch == CURRENT_EPOCH
    await _append(broker, tp, records(3000, 3500))
    log = broker.replicas.leader_log(tp)
    assert log is not None
    log.delete_records_before(LOG_START)
    metadata.set_partition(TopicPartition(REMOTE_TOPIC, 0), leader=OTHER, isr=(OTHER,), replicas=(OTHER,))


async def _append(broker: Broker, tp: TopicPartition, batch: bytearray) -> None:
    response = await wire_call(broker, produce(tp.topic, bytes(batch), partition=tp.partition), 9)
    assert response.responses[0].partition_responses[0].error_code == 0
