"""Produce and Fetch, tabled in process: (request, version) -> each partition's error code and the fields that go
with it, against a real broker (tests/inprocess.py, through the codec: tests/handler_tables.py).

Rows marked `kafka_differs` state Kafka's answer where kbroker answers otherwise; their reason says both.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kbroker.app import Broker
from kbroker.common import TopicPartition
from kbroker.handlers.registry import CloseConnection
from protocol import compression
from protocol.errors import ErrorCode as E
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.fetch_response import FetchResponse
from protocol.messages.produce_request import PartitionProduceData
from protocol.messages.produce_response import ProduceResponse
from protocol.primitives import ZERO_UUID
from protocol.records import MAGIC_OFFSET, RECORD_COUNT_OFFSET, RecordBatch, decode_records, iter_batches
from tests.handler_tables import (
    CURRENT_EPOCH,
    HISTORY_TOPIC,
    LOG_END,
    LOG_START,
    NODE,
    NOW_MS,
    OTHER,
    REMOTE_TOPIC,
    FixedClock,
    Setup,
    assert_answer,
    kafka_differs,
    produce,
    records,
    started,
    topic_id_of,
    wire_call,
    with_history,
)

pytestmark = pytest.mark.timeout(60)

OTHER_AT = ("127.0.0.1", 9)
"""Broker OTHER's endpoint (tests/handler_tables.py two_brokers)."""

# ---- Produce (v3-11) --------------------------------------------------------------------------------------------

T = "t"
"""Holds PREFILLED records, so the next append starts at offset PREFILLED; its log start is T_LOG_START."""
PREFILLED = 3
T_LOG_START = 1
SMALL = "small"
"""max.message.bytes=100"""
MIN_ISR_2 = "min-isr-2"
"""min.insync.replicas=2 on a single node"""
APPEND_TIME = "append-time"
"""message.timestamp.type=LogAppendTime"""
COMPACTED = "compacted"
"""cleanup.policy=compact"""


@pytest.fixture
async def producing(tmp_path: Path) -> AsyncIterator[Broker]:
    topics = {
        T: (2, {}),
        SMALL: (1, {"max.message.bytes": "100"}),
        MIN_ISR_2: (1, {"min.insync.replicas": "2"}),
        APPEND_TIME: (1, {"message.timestamp.type": "LogAppendTime"}),
        COMPACTED: (1, {"cleanup.policy": "compact"}),
    }
    async with started(tmp_path, Setup(clock=FixedClock()), topics) as broker:
        response = await wire_call(broker, produce(T, bytes(records(1, 2, 3))), 9)
        assert response.responses[0].partition_responses[0].base_offset == 0
        log = broker.replicas.leader_log(TopicPartition(T, 0))
        assert log is not None
        log.delete_records_before(T_LOG_START)
        yield broker


def produced(response: ProduceResponse) -> list[dict[str, Any]]:
    return [
        {
            "topic": t.name,
            "partition": p.index,
            "error": p.error_code,
            "base_offset": p.base_offset,
            "log_start_offset": p.log_start_offset,
            "log_append_time": p.log_append_time_ms,
            "message": p.error_message,
        }
        for t in response.responses
        for p in t.partition_responses
    ]


def failed(error: E) -> dict[str, Any]:
    """A refused partition: no offsets."""
    return {"error": error, "base_offset": -1, "log_start_offset": -1}


TWO = bytes(records(1000, 1001))
ZSTD = bytes(records(1000, compression=compression.ZSTD))


def corrupt(batch: bytes) -> bytes:
    """The last byte of the records flipped: the CRC no longer matches."""
    out = bytearray(batch)
    out[-1] ^= 0xFF
    return bytes(out)


def with_magic(batch: bytes, magic: int) -> bytes:
    out = bytearray(batch)
    out[MAGIC_OFFSET] = magic
    return bytes(out)


def with_record_count(batch: bytes, count: int) -> bytes:
    """A record count that disagrees with the batch's last offset delta (the CRC rewritten to match)."""
    out = bytearray(batch)
    out[RECORD_COUNT_OFFSET : RECORD_COUNT_OFFSET + 4] = count.to_bytes(4, "big")
    RecordBatch(out).write_crc()
    return bytes(out)


TRANSACTIONAL_BATCH = bytes(
    records(1000, producer_id=1, producer_epoch=0, base_sequence=0, is_transactional=True)
)
CONTROL_BATCH = bytes(
    records(1000, producer_id=1, producer_epoch=0, base_sequence=0, is_transactional=True, is_control=True)
)

PRODUCE_CASES = [
    pytest.param(
        produce(T, TWO, acks=1),
        9,
        [{"error": E.NONE, "base_offset": PREFILLED, "log_start_offset": T_LOG_START, "log_append_time": -1}],
        id="acks-1-appends-after-the-log-end",
    ),
    pytest.param(
        produce(T, TWO, acks=-1),
        11,
        [{"error": E.NONE, "base_offset": PREFILLED, "log_start_offset": T_LOG_START}],
        id="acks-all-appends-once-durable",
    ),
    pytest.param(
        produce(T, TWO, acks=1),
        3,
        [{"error": E.NONE, "base_offset": PREFILLED, "log_start_offset": -1}],
        id="v3-has-no-log-start-offset",
    ),
    pytest.param(
        produce(APPEND_TIME, TWO),
        9,
        [{"error": E.NONE, "base_offset": 0, "log_append_time": NOW_MS}],
        id="log-append-time-topic-answers-the-broker-time",
    ),
    pytest.param(produce(T, TWO, acks=0), 9, None, id="acks-0-gets-no-response"),
    pytest.param(produce("nope", TWO, acks=0), 9, CloseConnection, id="acks-0-failure-closes-the-connection"),
    pytest.param(produce(T, TWO, acks=2), 9, [failed(E.INVALID_REQUIRED_ACKS)], id="acks-2-invalid"),
    pytest.param(
        produce("nope", TWO, acks=2),
        9,
        [failed(E.UNKNOWN_TOPIC_OR_PARTITION)],
        id="acks-2-on-unknown-topic",
    ),
    pytest.param(produce(T, ZSTD), 6, [failed(E.UNSUPPORTED_COMPRESSION_TYPE)], id="zstd-needs-v7"),
    pytest.param(produce(T, ZSTD), 7, [{"error": E.NONE, "base_offset": PREFILLED}], id="zstd-at-v7"),
    pytest.param(produce(T, corrupt(TWO)), 9, [failed(E.CORRUPT_MESSAGE)], id="bad-crc"),
    pytest.param(produce(T, with_magic(TWO, 1)), 9, [failed(E.INVALID_RECORD)], id="magic-1-batch"),
    pytest.param(
        produce(T, with_record_count(TWO, 3)), 9, [failed(E.INVALID_RECORD)], id="record-count-mismatch"
    ),
    pytest.param(produce(T, TWO + TWO), 9, [failed(E.INVALID_RECORD)], id="two-batches"),
    pytest.param(produce(T, None), 9, [failed(E.INVALID_RECORD)], id="null-records"),
    pytest.param(
        produce(SMALL, bytes(records(1000, value=b"v" * 200))),
        9,
        [failed(E.MESSAGE_TOO_LARGE)],
        id="batch-over-max-message-bytes",
    ),
    # As Kafka (compat/test_response_diff.py): a batch too large or corrupt is refused without a message, records
    # that fail validation with the reason and the log start offset (KIP-467).
    pytest.param(
        produce(SMALL, bytes(records(1000, value=b"v" * 200))),
        9,
        [{"error": E.MESSAGE_TOO_LARGE, "message": None}],
        id="too-large-has-no-message",
    ),
    pytest.param(
        produce(T, corrupt(TWO)), 9, [{"error": E.CORRUPT_MESSAGE, "message": None}], id="bad-crc-no-message"
    ),
    pytest.param(
        produce(COMPACTED, bytes(records(1000))),  # records() have no key
        9,
        [
            {
                "error": E.INVALID_RECORD,
                "base_offset": -1,
                "log_start_offset": 0,
                "message": "compacted topic cannot accept a record without a key",
            }
        ],
        id="record-without-key-on-a-compacted-topic",
    ),
    pytest.param(produce("nope", TWO), 9, [failed(E.UNKNOWN_TOPIC_OR_PARTITION)], id="unknown-topic"),
    pytest.param(
        produce(T, TWO, partition=2), 9, [failed(E.UNKNOWN_TOPIC_OR_PARTITION)], id="unknown-partition"
    ),
    pytest.param(
        produce("__consumer_offsets", TWO), 9, [failed(E.INVALID_TOPIC_EXCEPTION)], id="internal-topic"
    ),
    pytest.param(
        produce(MIN_ISR_2, TWO, acks=-1), 9, [failed(E.NOT_ENOUGH_REPLICAS)], id="acks-all-below-min-isr"
    ),
    pytest.param(
        produce(MIN_ISR_2, TWO, acks=1),
        9,
        [{"error": E.NONE, "base_offset": 0}],
        id="acks-1-ignores-min-isr",
    ),
    pytest.param(
        produce(T, TWO, transactional_id="tx"),
        9,
        [{"error": E.NONE, "base_offset": PREFILLED}],
        id="transactional-id-with-plain-records",
    ),
    pytest.param(
        produce(T, TRANSACTIONAL_BATCH),
        9,
        [failed(E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)],
        id="transactional-batch-without-transactional-id",
    ),
    # KIP-890: the leader cannot ask a coordinator (there is no __transaction_state yet): NOT_ENOUGH_REPLICAS, which
    # producers retry (the coordinator's answers: tests/test_handlers_transactions.py).
    pytest.param(
        produce(T, TRANSACTIONAL_BATCH, transactional_id="tx"),
        9,
        [failed(E.NOT_ENOUGH_REPLICAS)],
        id="transactional-batch-not-verified",
    ),
    # A control batch is verified too (Kafka's order; the log would refuse it with INVALID_RECORD).
    pytest.param(
        produce(T, CONTROL_BATCH, transactional_id="tx"),
        9,
        [failed(E.NOT_ENOUGH_REPLICAS)],
        id="control-batch-from-a-client",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), PRODUCE_CASES)
async def test_produce(producing: Broker, request_: Any, version: int, expected: Any) -> None:
    if expected is CloseConnection:
        with pytest.raises(CloseConnection):
            await wire_call(producing, request_, version)
        return
    if expected is None:
        assert await wire_call(producing, request_, version) is None
        return
    await assert_answer(producing, request_, version, produced, expected)


@pytest.mark.trio
async def test_produce_answers_each_partition_in_request_order(producing: Broker) -> None:
    request = produce(T, TWO)
    request.topic_data[0].partition_data += [
        PartitionProduceData(index=7, records=TWO),
        PartitionProduceData(index=1, records=TWO),
    ]
    response = await wire_call(producing, request, 9)
    assert [(r["partition"], r["error"], r["base_offset"]) for r in produced(response)] == [
        (0, E.NONE, PREFILLED),
        (7, E.UNKNOWN_TOPIC_OR_PARTITION, -1),
        (1, E.NONE, 0),
    ]


def leader_hints(response: ProduceResponse) -> list[dict[str, Any]]:
    return [
        {
            "error": p.error_code,
            "current_leader": (p.current_leader.leader_id, p.current_leader.leader_epoch),
            "node_endpoints": [(e.node_id, e.host, e.port) for e in response.node_endpoints],
        }
        for t in response.responses
        for p in t.partition_responses
    ]


# KIP-951 from v10: a partition this node does not lead names its leader (broker OTHER, which took it over at leader
# epoch 1) and lists that leader's endpoint; acks=-1 answers the same once the batches it did append are durable.
PRODUCE_LEADER_HINT_CASES = [
    pytest.param(
        produce(REMOTE_TOPIC, TWO),
        10,
        [
            {
                "error": E.NOT_LEADER_OR_FOLLOWER,
                "current_leader": (OTHER, 1),
                "node_endpoints": [(OTHER, *OTHER_AT)],
            }
        ],
        id="v10-not-leader-names-the-leader",
    ),
    pytest.param(
        produce(REMOTE_TOPIC, TWO, acks=-1),
        11,
        [
            {
                "error": E.NOT_LEADER_OR_FOLLOWER,
                "current_leader": (OTHER, 1),
                "node_endpoints": [(OTHER, *OTHER_AT)],
            }
        ],
        id="v11-acks-all",
    ),
    pytest.param(
        produce(REMOTE_TOPIC, TWO),
        9,
        [{"error": E.NOT_LEADER_OR_FOLLOWER, "current_leader": (-1, -1), "node_endpoints": []}],
        id="v9-has-no-leader-hints",
    ),
    pytest.param(
        produce("nope", TWO),
        10,
        [{"error": E.UNKNOWN_TOPIC_OR_PARTITION, "current_leader": (-1, -1), "node_endpoints": []}],
        id="v10-hints-only-for-not-leader",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), PRODUCE_LEADER_HINT_CASES)
async def test_produce_leader_hints(
    history: Broker, request_: Any, version: int, expected: list[dict[str, Any]]
) -> None:
    await assert_answer(history, request_, version, leader_hints, expected)


# ---- Fetch (v4-17) ----------------------------------------------------------------------------------------------
# The log of HISTORY_TOPIC (tests/handler_tables.py): offsets LOG_START..LOG_END-1 readable, leader epoch 2.


@pytest.fixture
async def history(tmp_path: Path) -> AsyncIterator[Broker]:
    async with with_history(tmp_path) as broker:
        yield broker


BY_ID = topic_id_of(HISTORY_TOPIC)


def fetch(
    offset: int,
    *,
    topic: str = HISTORY_TOPIC,
    topic_id: uuid.UUID = ZERO_UUID,
    partition: int = 0,
    current_leader_epoch: int = -1,
    isolation_level: int = 0,
) -> FetchRequest:
    return FetchRequest(
        replica_id=-1,
        isolation_level=isolation_level,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        topics=[
            FetchTopic(
                topic=topic,
                topic_id=topic_id,
                partitions=[
                    FetchPartition(
                        partition=partition,
                        fetch_offset=offset,
                        partition_max_bytes=1 << 20,
                        current_leader_epoch=current_leader_epoch,
                    )
                ],
            )
        ],
    )


def fetched(response: FetchResponse) -> list[dict[str, Any]]:
    return [
        {
            "topic": t.topic,
            "topic_id": t.topic_id,
            "partition": p.partition_index,
            "error": p.error_code,
            "high_watermark": p.high_watermark,
            "last_stable_offset": p.last_stable_offset,
            "log_start_offset": p.log_start_offset,
            "offsets": [
                r.offset for b in iter_batches(bytearray(p.records or b"")) for r in decode_records(b)
            ],
            "aborted_transactions": p.aborted_transactions,
            "current_leader": (p.current_leader.leader_id, p.current_leader.leader_epoch),
            "node_endpoints": [e.node_id for e in response.node_endpoints],
            # No fetch sessions: always session 0, which makes clients send full fetches.
            "response": (response.error_code, response.session_id),
        }
        for t in response.responses
        for p in t.partitions
    ]


READ = {
    "error": E.NONE,
    "high_watermark": LOG_END,
    "last_stable_offset": LOG_END,
    "log_start_offset": LOG_START,
}
NO_OFFSETS = {"high_watermark": -1, "last_stable_offset": -1, "log_start_offset": -1, "offsets": []}

# Whole batches come back: the first batch holds offsets 0-2 though the log starts at 1 (consumers skip what they did
# not ask for).
ALL = [0, 1, 2, 3, 4]

FETCH_CASES = [
    pytest.param(fetch(LOG_START), 12, [{**READ, "offsets": ALL}], id="records-from-the-log-start"),
    # Aborted transactions as Kafka answers them (compat/test_response_diff.py): null for a read_uncommitted read and
    # for an error of the read, empty for a read_committed read and for a partition refused before reading.
    pytest.param(
        fetch(LOG_START), 12, [{**READ, "aborted_transactions": None}], id="read-uncommitted-null-aborted"
    ),
    pytest.param(
        fetch(LOG_START, isolation_level=1),
        12,
        [{**READ, "aborted_transactions": []}],
        id="read-committed-no-aborted",
    ),
    pytest.param(
        fetch(LOG_END + 1, isolation_level=1),
        12,
        [{"error": E.OFFSET_OUT_OF_RANGE, "aborted_transactions": None}],
        id="read-error-null-aborted",
    ),
    pytest.param(
        fetch(0, partition=1),
        12,
        [{"error": E.UNKNOWN_TOPIC_OR_PARTITION, "aborted_transactions": []}],
        id="unknown-partition-empty-aborted",
    ),
    pytest.param(fetch(2), 12, [{**READ, "offsets": ALL}], id="the-whole-batch-holding-the-offset"),
    pytest.param(fetch(3), 12, [{**READ, "offsets": [3, 4]}], id="records-of-the-second-epoch"),
    pytest.param(fetch(LOG_END), 12, [{**READ, "offsets": []}], id="empty-at-the-log-end"),
    pytest.param(
        fetch(LOG_START), 4, [{**READ, "log_start_offset": -1, "offsets": ALL}], id="v4-no-log-start"
    ),
    pytest.param(
        fetch(LOG_START - 1), 12, [{"error": E.OFFSET_OUT_OF_RANGE, "offsets": []}], id="below-the-log-start"
    ),
    pytest.param(
        fetch(LOG_END + 1), 12, [{"error": E.OFFSET_OUT_OF_RANGE, "offsets": []}], id="above-the-log-end"
    ),
    pytest.param(
        fetch(LOG_END + 1),
        12,
        [{"error": E.OFFSET_OUT_OF_RANGE, **NO_OFFSETS}],
        id="out-of-range-carries-no-offsets",
        marks=kafka_differs(
            "kbroker answers OFFSET_OUT_OF_RANGE with the high watermark, last stable offset and log start, Kafka "
            "with -1 for each (ReplicaManager.readFromLog builds the error result with UnifiedLog.UnknownOffset)"
        ),
    ),
    pytest.param(
        fetch(LOG_START, current_leader_epoch=CURRENT_EPOCH),
        12,
        [{**READ, "offsets": ALL}],
        id="current-leader-epoch",
    ),
    pytest.param(
        fetch(LOG_START, current_leader_epoch=CURRENT_EPOCH - 1),
        12,
        [{"error": E.FENCED_LEADER_EPOCH, **NO_OFFSETS}],
        id="older-leader-epoch-fenced",
    ),
    pytest.param(
        fetch(LOG_START, current_leader_epoch=CURRENT_EPOCH + 1),
        12,
        [{"error": E.UNKNOWN_LEADER_EPOCH, **NO_OFFSETS}],
        id="newer-leader-epoch-unknown",
    ),
    pytest.param(
        fetch(LOG_START, current_leader_epoch=CURRENT_EPOCH - 1),
        8,
        [{**READ, "offsets": ALL}],
        id="v8-has-no-current-leader-epoch",
    ),
    pytest.param(
        fetch(0, topic="nope"),
        12,
        [{"error": E.UNKNOWN_TOPIC_OR_PARTITION, **NO_OFFSETS}],
        id="unknown-topic",
    ),
    pytest.param(
        fetch(0, partition=1),
        12,
        [{"error": E.UNKNOWN_TOPIC_OR_PARTITION, **NO_OFFSETS}],
        id="unknown-partition",
    ),
    pytest.param(
        fetch(0, topic=REMOTE_TOPIC),
        12,
        [{"error": E.NOT_LEADER_OR_FOLLOWER, **NO_OFFSETS}],
        id="partition-hosted-elsewhere",
    ),
    pytest.param(
        fetch(LOG_START, topic="", topic_id=BY_ID),
        13,
        [{**READ, "topic": "", "topic_id": BY_ID, "offsets": ALL}],
        id="v13-by-topic-id",
    ),
    pytest.param(
        fetch(0, topic="", topic_id=uuid.UUID(int=99)),
        13,
        [{"error": E.UNKNOWN_TOPIC_ID, "topic_id": uuid.UUID(int=99), **NO_OFFSETS}],
        id="v13-unknown-topic-id",
    ),
    pytest.param(
        fetch(0),
        13,
        [{"error": E.UNKNOWN_TOPIC_ID, "topic_id": ZERO_UUID}],
        id="v13-name-without-id",
    ),
    pytest.param(
        fetch(LOG_START, topic="", topic_id=BY_ID, current_leader_epoch=CURRENT_EPOCH - 1),
        16,
        # KIP-951: the partition's leader and epoch, and that leader's endpoint.
        [{"error": E.FENCED_LEADER_EPOCH, "current_leader": (NODE, CURRENT_EPOCH), "node_endpoints": [NODE]}],
        id="v16-fenced-names-the-current-leader",
    ),
    pytest.param(
        fetch(0, topic="", topic_id=topic_id_of(REMOTE_TOPIC)),
        16,
        # Broker OTHER took the partition over: leader epoch 1.
        [{"error": E.NOT_LEADER_OR_FOLLOWER, "current_leader": (OTHER, 1), "node_endpoints": [OTHER]}],
        id="v16-not-leader-names-the-current-leader",
    ),
    pytest.param(
        fetch(LOG_START, topic="", topic_id=BY_ID, current_leader_epoch=CURRENT_EPOCH - 1),
        15,
        [{"error": E.FENCED_LEADER_EPOCH, "current_leader": (-1, -1), "node_endpoints": []}],
        id="v15-has-no-leader-hints",
    ),
    pytest.param(
        fetch(0, topic="", topic_id=BY_ID, partition=1),
        16,
        [{"error": E.UNKNOWN_TOPIC_OR_PARTITION, "current_leader": (-1, -1), "node_endpoints": []}],
        id="v16-hints-only-for-leadership-errors",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), FETCH_CASES)
async def test_fetch(
    history: Broker, request_: FetchRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    await assert_answer(history, request_, version, fetched, expected)
