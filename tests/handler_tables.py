"""What the handler tables (tests/test_handlers_*.py) share: a handler called as the wire would call it, responses
read as rows, and the cluster states the tables start from.

`wire_call` encodes the request at the row's version and decodes it again, so the handler sees exactly the fields
that version carries (a field the version lacks arrives as its default, as from a real client); the response goes
through the codec at the same version, so a row checks what a client would read and a response the codec cannot
write at that version fails the row. `assert_answer` is a row's check: the answer, seen as rows of named fields
(each table's view of its response), holds the fields the row names; what only the running broker knows (topic ids,
its port) a row names by stand-ins (`topic_id_of`, PORT).

A row that states Kafka's answer where kbroker answers otherwise is marked `kafka_differs(reason)`: a strict xfail,
so the table passes while the difference stands and fails the day kbroker answers as Kafka does (then drop the mark).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kbroker.app import Broker
from kbroker.clock import Clock
from kbroker.common import TopicPartition
from kbroker.config import BrokerConfig
from kbroker.security.session import ConnectionSession
from protocol.codec import decode, encode
from protocol.messages import RESPONSES, SCHEMAS
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.records import Record, build_batch
from tests.inprocess import call, running_broker
from tests.memory_metadata import MemoryMetadata

T = TypeVar("T")

NODE = 0
"""The node id of every in-process broker (node.id's default)."""
OTHER = 7
"""A second broker of the in-memory cluster (`two_brokers`); nothing listens at its address."""
NOW_MS = 1_700_000_000_000


@dataclass(frozen=True)
class Setup:
    """The broker a table row runs on: settings over tests/inprocess.py's, on metadata of its own (a single node's
    files) or on `two_brokers`, with its own clock or the system's."""

    settings: Mapping[str, str] = field(default_factory=dict)
    two_brokers: bool = False
    clock: Clock | None = None


@asynccontextmanager
async def started(
    tmp_path: Path, setup: Setup, topics: Mapping[str, tuple[int, Mapping[str, str]]]
) -> AsyncIterator[Broker]:
    """A running broker of `setup` with `topics` (name: partitions, configs) created."""
    metadata = two_brokers if setup.two_brokers else None
    async with running_broker(
        tmp_path / "data", setup.settings, metadata=metadata, clock=setup.clock
    ) as broker:
        for name, (partitions, configs) in topics.items():
            await broker.metadata.create_topic(name, partitions, 1, configs)
        yield broker


class FixedClock:
    """A broker clock that never moves, so that LogAppendTime and commit timestamps are known to the table."""

    def now_ms(self) -> int:
        return NOW_MS

    def monotonic_ms(self) -> int:
        return 0


def kafka_differs(reason: str) -> pytest.MarkDecorator:
    """The mark of a row that states Kafka's answer where kbroker answers otherwise ("kbroker answers X, Kafka Y")."""
    return pytest.mark.xfail(strict=True, reason=reason)


async def wire_call(
    broker: Broker, request: Any, version: int, session: ConnectionSession | None = None
) -> Any:
    """The handler's answer to `request` at `version`, both through the codec at that version; None when the handler
    sends no response (acks=0). `session`: as asked on that connection (its listener and principal)."""
    schema = SCHEMAS[type(request)]
    response = await call(broker, decode(type(request), version, encode(request, version)), version, session)
    if response is None:
        return None
    return decode(RESPONSES[schema.api_key], version, encode(response, version))


async def assert_answer(
    broker: Broker,
    request: Any,
    version: int,
    view: Callable[[Any], Any],
    expected: Any,
    session: ConnectionSession | None = None,
) -> None:
    """A table row's check: `view` of the answer to `request` at `version` holds what `expected` names, as rows (a list
    of dicts) or one row (a dict). Stand-ins (`resolved`) in the request and the expectation are replaced first."""
    request, expected = resolved((request, expected), broker)
    seen = view(await wire_call(broker, request, version, session))
    if isinstance(expected, Mapping):
        seen, expected = [seen], [expected]
    assert cut(seen, expected) == expected


def cut(actual: Sequence[Mapping[str, Any]], expected: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each actual row cut down to the keys its expected row names (a row past the expected ones keeps all its keys),
    so `assert cut(actual, expected) == expected` compares only what a table names and still shows a missing or an
    extra row."""
    return [
        {k: row[k] for k in expected[i]} if i < len(expected) else dict(row) for i, row in enumerate(actual)
    ]


_STAND_INS = uuid.UUID("5eed0000-0000-4000-8000-000000000000")
PORT = "<the port of this node>"
"""Stands for this node's listener port in a table row; `resolved` swaps it for the real one."""


def topic_id_of(topic: str) -> uuid.UUID:
    """Stands for `topic`'s id in a table row (ids are random); `resolved` swaps it for the real one."""
    return uuid.uuid5(_STAND_INS, topic)


def resolved(value: T, broker: Broker) -> T:
    """A copy of `value` (a message, or rows of dicts, lists and tuples) with the stand-ins a table row uses for what
    only the running broker knows (`topic_id_of(name)` of its topics, PORT) replaced by the real values."""
    image = broker.metadata.image()
    real: dict[str | uuid.UUID, object] = {topic_id_of(name): t.topic_id for name, t in image.topics.items()}
    real[PORT] = image.brokers[NODE].port
    return substituted(value, real)


def substituted(value: T, replacements: Mapping[str | uuid.UUID, object]) -> T:
    """A copy of `value` (a message, or rows of dicts, lists and tuples) with every string or uuid that is a key of
    `replacements` replaced by its value."""

    def swap(v: Any) -> Any:
        if isinstance(v, str | uuid.UUID):
            return replacements.get(v, v)
        if isinstance(v, dict):
            return {k: swap(x) for k, x in v.items()}
        if isinstance(v, list):
            return [swap(x) for x in v]
        if isinstance(v, tuple):
            return tuple(swap(x) for x in v)
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return dataclasses.replace(v, **{f.name: swap(getattr(v, f.name)) for f in dataclasses.fields(v)})
        return v

    swapped: T = swap(value)
    return swapped


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
        topic_data=[
            TopicProduceData(
                name=topic, partition_data=[PartitionProduceData(index=partition, records=batch)]
            )
        ],
    )


# The log of HISTORY_TOPIC-0 that `with_history` writes, for the tables of Fetch, ListOffsets and
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


@asynccontextmanager
async def with_history(tmp_path: Path) -> AsyncIterator[Broker]:
    """A broker on `two_brokers` metadata with HISTORY_TOPIC, EMPTY_TOPIC and REMOTE_TOPIC."""
    async with started(
        tmp_path, Setup(two_brokers=True), {EMPTY_TOPIC: (1, {}), REMOTE_TOPIC: (1, {})}
    ) as broker:
        metadata = broker.metadata
        assert isinstance(metadata, MemoryMetadata)
        await metadata.create_topic(HISTORY_TOPIC, 1, 1, {})
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
        yield broker


async def _append(broker: Broker, tp: TopicPartition, batch: bytearray) -> None:
    response = await wire_call(broker, produce(tp.topic, bytes(batch), partition=tp.partition), 9)
    assert response.responses[0].partition_responses[0].error_code == 0
