"""ListOffsets and OffsetForLeaderEpoch, tabled in process: (request, version) -> each partition's error code, offset,
timestamp and leader epoch, against a real broker (tests/inprocess.py, through the codec: tests/handler_tables.py).

Every row reads the same log (tests/handler_tables.py `with_history`): offsets 0-2 at leader epoch 0 with timestamps
1000, 4000, 2000, then offsets 3-4 at epoch 2 with 3000, 3500, the log start moved to 1; an empty partition led at
epoch 0; a partition this node holds no replica of. Rows marked `kafka_differs` state Kafka's answer where kbroker
answers otherwise; their reason says both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kbroker.app import Broker
from protocol.errors import ErrorCode as E
from protocol.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from protocol.messages.list_offsets_response import ListOffsetsResponse
from protocol.messages.offset_for_leader_epoch_request import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from protocol.messages.offset_for_leader_epoch_response import OffsetForLeaderEpochResponse
from tests.handler_tables import (
    CURRENT_EPOCH,
    EMPTY_TOPIC,
    EPOCH_2_START,
    HISTORY_TOPIC,
    LOG_END,
    LOG_START,
    REMOTE_TOPIC,
    assert_answer,
    with_history,
)

pytestmark = pytest.mark.timeout(60)

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5


@pytest.fixture
async def history(tmp_path: Path) -> AsyncIterator[Broker]:
    async with with_history(tmp_path) as broker:
        yield broker


# ---- ListOffsets (v1-9) -----------------------------------------------------------------------------------------


def list_offsets(
    timestamp: int,
    *,
    topic: str = HISTORY_TOPIC,
    partition: int = 0,
    current_leader_epoch: int = -1,
    isolation_level: int = 0,
) -> ListOffsetsRequest:
    return ListOffsetsRequest(
        replica_id=-1,
        isolation_level=isolation_level,
        topics=[
            ListOffsetsTopic(
                name=topic,
                partitions=[
                    ListOffsetsPartition(
                        partition_index=partition,
                        timestamp=timestamp,
                        current_leader_epoch=current_leader_epoch,
                    )
                ],
            )
        ],
    )


def listed(response: ListOffsetsResponse) -> list[dict[str, Any]]:
    return [
        {
            "topic": t.name,
            "partition": p.partition_index,
            "error": p.error_code,
            "offset": p.offset,
            "timestamp": p.timestamp,
            "leader_epoch": p.leader_epoch,
        }
        for t in response.topics
        for p in t.partitions
    ]


def at(offset: int, timestamp: int, leader_epoch: int) -> list[dict[str, Any]]:
    return [{"error": E.NONE, "offset": offset, "timestamp": timestamp, "leader_epoch": leader_epoch}]


def refused(error: E) -> list[dict[str, Any]]:
    return [{"error": error, "offset": -1, "timestamp": -1, "leader_epoch": -1}]


NOT_FOUND = [{"error": E.NONE, "offset": -1, "timestamp": -1}]

LIST_OFFSETS_CASES = [
    pytest.param(list_offsets(LATEST), 9, at(LOG_END, -1, CURRENT_EPOCH), id="latest"),
    pytest.param(
        list_offsets(LATEST, isolation_level=1), 9, at(LOG_END, -1, CURRENT_EPOCH), id="latest-committed"
    ),
    pytest.param(list_offsets(EARLIEST), 9, at(LOG_START, -1, 0), id="earliest-is-the-log-start"),
    pytest.param(list_offsets(MAX_TIMESTAMP), 7, at(1, 4000, 0), id="max-timestamp-v7"),
    pytest.param(list_offsets(EARLIEST_LOCAL), 8, at(LOG_START, -1, 0), id="earliest-local-v8"),
    pytest.param(
        list_offsets(LATEST_TIERED),
        9,
        at(-1, -1, -1),
        id="latest-tiered-without-tiered-storage",
    ),
    pytest.param(list_offsets(0), 9, at(1, 4000, 0), id="timestamp-before-every-record-from-the-log-start"),
    pytest.param(
        list_offsets(3200), 9, at(1, 4000, 0), id="timestamp-first-record-at-or-after-in-offset-order"
    ),
    pytest.param(list_offsets(3500), 9, at(1, 4000, 0), id="timestamp-equal-to-a-later-record"),
    pytest.param(list_offsets(4000), 9, at(1, 4000, 0), id="timestamp-equal-to-the-max"),
    pytest.param(list_offsets(4001), 9, NOT_FOUND, id="timestamp-after-every-record"),
    pytest.param(
        list_offsets(4001),
        9,
        [{"error": E.NONE, "offset": -1, "timestamp": -1, "leader_epoch": -1}],
        id="timestamp-after-every-record-has-no-epoch",
    ),
    pytest.param(list_offsets(LATEST), 3, at(LOG_END, -1, -1), id="v3-has-no-leader-epoch"),
    pytest.param(
        list_offsets(LATEST, current_leader_epoch=CURRENT_EPOCH),
        9,
        at(LOG_END, -1, CURRENT_EPOCH),
        id="current-epoch",
    ),
    pytest.param(
        list_offsets(LATEST, current_leader_epoch=CURRENT_EPOCH - 1),
        9,
        refused(E.FENCED_LEADER_EPOCH),
        id="older-epoch-fenced",
    ),
    pytest.param(
        list_offsets(LATEST, current_leader_epoch=CURRENT_EPOCH + 1),
        9,
        refused(E.UNKNOWN_LEADER_EPOCH),
        id="newer-epoch-unknown",
    ),
    pytest.param(
        list_offsets(LATEST, current_leader_epoch=CURRENT_EPOCH - 1),
        3,
        at(LOG_END, -1, -1),
        id="v3-has-no-current-epoch",
    ),
    pytest.param(
        list_offsets(LATEST, topic="nope"), 9, refused(E.UNKNOWN_TOPIC_OR_PARTITION), id="unknown-topic"
    ),
    pytest.param(
        list_offsets(LATEST, partition=1), 9, refused(E.UNKNOWN_TOPIC_OR_PARTITION), id="unknown-partition"
    ),
    pytest.param(
        list_offsets(LATEST, topic=REMOTE_TOPIC),
        9,
        refused(E.NOT_LEADER_OR_FOLLOWER),
        id="partition-hosted-elsewhere",
    ),
    pytest.param(
        list_offsets(LATEST, topic=EMPTY_TOPIC),
        9,
        [{"error": E.NONE, "offset": 0}],
        id="empty-partition-latest",
    ),
    pytest.param(
        list_offsets(LATEST, topic=EMPTY_TOPIC),
        9,
        at(0, -1, 0),
        id="empty-partition-latest-has-the-leader-epoch",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), LIST_OFFSETS_CASES)
async def test_list_offsets(
    history: Broker, request_: ListOffsetsRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    await assert_answer(history, request_, version, listed, expected)


# ---- OffsetForLeaderEpoch (v0-4) --------------------------------------------------------------------------------


def epoch_end(
    leader_epoch: int, *, topic: str = HISTORY_TOPIC, partition: int = 0, current_leader_epoch: int = -1
) -> OffsetForLeaderEpochRequest:
    return OffsetForLeaderEpochRequest(
        replica_id=-1,
        topics=[
            OffsetForLeaderTopic(
                topic=topic,
                partitions=[
                    OffsetForLeaderPartition(
                        partition=partition,
                        leader_epoch=leader_epoch,
                        current_leader_epoch=current_leader_epoch,
                    )
                ],
            )
        ],
    )


def epoch_ends(response: OffsetForLeaderEpochResponse) -> list[dict[str, Any]]:
    return [
        {
            "topic": t.topic,
            "partition": p.partition,
            "error": p.error_code,
            "leader_epoch": p.leader_epoch,
            "end_offset": p.end_offset,
        }
        for t in response.topics
        for p in t.partitions
    ]


def ends(leader_epoch: int, end_offset: int) -> list[dict[str, Any]]:
    return [{"error": E.NONE, "leader_epoch": leader_epoch, "end_offset": end_offset}]


def epoch_refused(error: E) -> list[dict[str, Any]]:
    return [{"error": error, "leader_epoch": -1, "end_offset": -1}]


OFFSET_FOR_LEADER_EPOCH_CASES = [
    pytest.param(epoch_end(0), 4, ends(0, EPOCH_2_START), id="known-epoch-ends-where-the-next-starts"),
    pytest.param(
        epoch_end(1), 4, ends(0, EPOCH_2_START), id="epoch-between-known-ones-answers-the-one-below"
    ),
    pytest.param(
        epoch_end(CURRENT_EPOCH), 4, ends(CURRENT_EPOCH, LOG_END), id="latest-epoch-ends-at-the-log-end"
    ),
    pytest.param(epoch_end(CURRENT_EPOCH + 1), 4, ends(-1, -1), id="newer-epoch-is-undefined"),
    pytest.param(epoch_end(-1), 4, ends(-1, -1), id="undefined-epoch"),
    pytest.param(epoch_end(CURRENT_EPOCH), 0, ends(-1, LOG_END), id="v0-has-no-leader-epoch"),
    pytest.param(
        epoch_end(0, current_leader_epoch=CURRENT_EPOCH),
        4,
        ends(0, EPOCH_2_START),
        id="current-epoch-matches",
    ),
    pytest.param(
        epoch_end(0, current_leader_epoch=CURRENT_EPOCH - 1),
        4,
        epoch_refused(E.FENCED_LEADER_EPOCH),
        id="older-current-epoch-fenced",
    ),
    pytest.param(
        epoch_end(0, current_leader_epoch=CURRENT_EPOCH + 1),
        2,
        epoch_refused(E.UNKNOWN_LEADER_EPOCH),
        id="newer-current-epoch-unknown-v2",
    ),
    pytest.param(
        epoch_end(0, current_leader_epoch=CURRENT_EPOCH - 1),
        1,
        ends(0, EPOCH_2_START),
        id="v1-has-no-current-epoch",
    ),
    pytest.param(
        epoch_end(0, topic="nope"), 4, epoch_refused(E.UNKNOWN_TOPIC_OR_PARTITION), id="unknown-topic"
    ),
    pytest.param(
        epoch_end(0, partition=1), 4, epoch_refused(E.UNKNOWN_TOPIC_OR_PARTITION), id="unknown-partition"
    ),
    pytest.param(
        epoch_end(0, topic=REMOTE_TOPIC),
        4,
        epoch_refused(E.NOT_LEADER_OR_FOLLOWER),
        id="partition-hosted-elsewhere",
    ),
    pytest.param(
        epoch_end(0, topic=EMPTY_TOPIC),
        4,
        ends(0, 0),
        id="empty-partition-knows-its-epoch",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), OFFSET_FOR_LEADER_EPOCH_CASES)
async def test_offset_for_leader_epoch(
    history: Broker, request_: OffsetForLeaderEpochRequest, version: int, expected: list[dict[str, Any]]
) -> None:
    await assert_answer(history, request_, version, epoch_ends, expected)
