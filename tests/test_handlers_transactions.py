"""The transaction APIs, tabled in process: (request, version) -> the answer's fields, against a real broker
(tests/inprocess.py, through the codec: tests/handler_tables.py). The rows follow Kafka's answers; the same requests
go to Apache Kafka in compat/test_response_diff.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from kbroker.app import Broker
from kbroker.common import TopicPartition
from kbroker.security.session import ConnectionSession
from protocol.errors import ErrorCode as E
from protocol.messages.add_offsets_to_txn_request import AddOffsetsToTxnRequest
from protocol.messages.add_offsets_to_txn_response import AddOffsetsToTxnResponse
from protocol.messages.add_partitions_to_txn_request import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from protocol.messages.add_partitions_to_txn_response import AddPartitionsToTxnResponse
from protocol.messages.create_acls_request import CreateAclsRequest
from protocol.messages.describe_producers_request import DescribeProducersRequest, TopicRequest
from protocol.messages.describe_producers_response import DescribeProducersResponse
from protocol.messages.describe_transactions_request import DescribeTransactionsRequest
from protocol.messages.describe_transactions_response import DescribeTransactionsResponse
from protocol.messages.end_txn_request import EndTxnRequest
from protocol.messages.end_txn_response import EndTxnResponse
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.init_producer_id_request import InitProducerIdRequest
from protocol.messages.list_transactions_request import ListTransactionsRequest
from protocol.messages.list_transactions_response import ListTransactionsResponse
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.messages.txn_offset_commit_request import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from protocol.messages.txn_offset_commit_response import TxnOffsetCommitResponse
from protocol.messages.write_txn_markers_request import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
)
from protocol.messages.write_txn_markers_response import WriteTxnMarkersResponse
from protocol.records import Record, build_batch
from tests.handler_tables import Setup, assert_answer, started, substituted, wire_call
from tests.inprocess import QUICK, running_broker, wait_until
from tests.test_handlers_security import AUTHORIZED, acl, as_user

pytestmark = pytest.mark.timeout(60)

T = "t"
TXN_PARTITIONS = int(QUICK["transaction.state.log.num.partitions"])
PRODUCING = 4242
"""A producer with a transaction open on T-0 from offset 1 (offset 0 holds a plain record)."""


# The fixture's transactional ids: their producer ids are the first two the node hands out.
READY, READY_PID = "ready", 0
"""Initialized, no transaction (Empty)."""
ONGOING, ONGOING_PID = "ongoing", 1
"""A transaction with T-0 and group G's offsets partition."""
G = "g"
STALE_PID = 77
"""A producer whose marker (epoch 5, coordinator epoch 3) is on T-1."""
OFFSETS_PARTITION = "<the offsets partition of group g>"


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    async with prepared(tmp_path, Setup()) as running:
        yield running


@asynccontextmanager
async def prepared(
    tmp_path: Path, setup: Setup, session: ConnectionSession | None = None
) -> AsyncIterator[Broker]:
    """The tables' broker: T with an open transaction of PRODUCING and STALE_PID's marker, READY and ONGOING (set up
    as `session`'s principal, where ACLs are on)."""
    async with started(tmp_path, setup, {T: (3, {})}) as running:
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
        await _transactional_ids(running, session)
        results = running.replicas.append_end_txn_markers(
            [TopicPartition(T, 1)], producer_id=STALE_PID, producer_epoch=5, coordinator_epoch=3, commit=True,
            now_ms=now,
        )  # fmt: skip
        assert results[0].error is None
        yield running


async def _transactional_ids(broker: Broker, session: ConnectionSession | None) -> None:
    find = FindCoordinatorRequest(key_type=1, coordinator_keys=[READY])
    await wire_call(broker, find, 4, session)  # creates __transaction_state
    await wait_until(lambda: len(broker.transactions.coordinator.partitions) == TXN_PARTITIONS)
    for txn_id, pid in ((READY, READY_PID), (ONGOING, ONGOING_PID)):
        response = await wire_call(
            broker, InitProducerIdRequest(transactional_id=txn_id, transaction_timeout_ms=60_000), 5, session
        )
        assert (response.error_code, response.producer_id, response.producer_epoch) == (E.NONE, pid, 0)
    add = AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=ONGOING,
        v3_and_below_producer_id=ONGOING_PID,
        v3_and_below_producer_epoch=0,
        v3_and_below_topics=[AddPartitionsToTxnTopic(name=T, partitions=[0])],
    )
    assert (await wire_call(broker, add, 3, session)).results_by_topic_v3_and_below[0].results_by_partition[
        0
    ].partition_error_code == E.NONE
    offsets = AddOffsetsToTxnRequest(
        transactional_id=ONGOING, producer_id=ONGOING_PID, producer_epoch=0, group_id=G
    )
    assert (await wire_call(broker, offsets, 3, session)).error_code == E.NONE


def resolve(value: Any, broker: Broker) -> Any:
    """The stand-in for group g's `__consumer_offsets` partition replaced."""
    partition = broker.groups.coordinator.partition_for(G)
    return substituted(value, {OFFSETS_PARTITION: partition})


async def check(
    broker: Broker,
    request: Any,
    version: int,
    view: Callable[[Any], Any],
    expected: Any,
    session: ConnectionSession | None = None,
) -> None:
    await assert_answer(broker, resolve(request, broker), version, view, resolve(expected, broker), session)


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
    pytest.param(
        describe_producers((T, 1)),
        0,
        [{"error": E.NONE, "producers": [(STALE_PID, 5, -1, 3, -1)]}],
        id="a-marker-only",
    ),
    pytest.param(describe_producers((T, 2)), 0, [{"error": E.NONE, "producers": []}], id="no-producers"),
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
    await check(broker, request_, version, producers, expected)


# ---- AddPartitionsToTxn (v0-5) ----------------------------------------------------------------------------------


def add_partitions(
    txn_id: str, pid: int, epoch: int, *partitions: tuple[str, int]
) -> AddPartitionsToTxnRequest:
    return AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=txn_id,
        v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=_topics(partitions),
    )


def verify(txn_id: str, pid: int, epoch: int, *partitions: tuple[str, int]) -> AddPartitionsToTxnRequest:
    return AddPartitionsToTxnRequest(
        transactions=[
            AddPartitionsToTxnTransaction(
                transactional_id=txn_id,
                producer_id=pid,
                producer_epoch=epoch,
                verify_only=True,
                topics=_topics(partitions),
            )
        ]
    )


def _topics(partitions: tuple[tuple[str, int], ...]) -> list[AddPartitionsToTxnTopic]:
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    return [AddPartitionsToTxnTopic(name=t, partitions=p) for t, p in by_topic.items()]


def added(response: AddPartitionsToTxnResponse) -> list[dict[str, Any]]:
    topic_results = response.results_by_topic_v3_and_below or [
        t for r in response.results_by_transaction for t in r.topic_results
    ]
    return [
        {"partition": (t.name, p.partition_index), "error": p.partition_error_code}
        for t in topic_results
        for p in t.results_by_partition
    ]


ADD_PARTITIONS_TO_TXN_CASES = [
    pytest.param(
        add_partitions(READY, READY_PID, 0, (T, 1)), 3, [{"partition": (T, 1), "error": E.NONE}], id="begins"
    ),
    pytest.param(
        add_partitions(ONGOING, ONGOING_PID, 0, (T, 0)),
        3,
        [{"partition": (T, 0), "error": E.NONE}],
        id="already-in-the-transaction",
    ),
    pytest.param(
        add_partitions(READY, READY_PID, 0, (T, 1), (T, 9), ("nope", 0)),
        3,
        [
            {"partition": (T, 1), "error": E.OPERATION_NOT_ATTEMPTED},
            {"partition": (T, 9), "error": E.UNKNOWN_TOPIC_OR_PARTITION},
            {"partition": ("nope", 0), "error": E.UNKNOWN_TOPIC_OR_PARTITION},
        ],
        id="unknown-partitions-none-added",
    ),
    pytest.param(
        add_partitions(READY, READY_PID, 0, (T, 1), ("__consumer_offsets", 0)),
        3,
        [
            {"partition": (T, 1), "error": E.OPERATION_NOT_ATTEMPTED},
            {"partition": ("__consumer_offsets", 0), "error": E.TOPIC_AUTHORIZATION_FAILED},
        ],
        id="an-internal-topic-never-without-acls-too",
    ),
    pytest.param(
        add_partitions(READY, READY_PID, 1, (T, 1)),
        3,
        [{"partition": (T, 1), "error": E.PRODUCER_FENCED}],
        id="another-epoch-fenced",
    ),
    pytest.param(
        add_partitions(READY, READY_PID, 1, (T, 1)),
        1,
        [{"partition": (T, 1), "error": E.INVALID_PRODUCER_EPOCH}],
        id="v1-fenced-is-invalid-producer-epoch",
    ),
    pytest.param(
        add_partitions(READY, ONGOING_PID, 0, (T, 1)),
        3,
        [{"partition": (T, 1), "error": E.INVALID_PRODUCER_ID_MAPPING}],
        id="another-producer-id",
    ),
    pytest.param(
        add_partitions("unknown", 5, 0, (T, 1)),
        3,
        [{"partition": (T, 1), "error": E.INVALID_PRODUCER_ID_MAPPING}],
        id="unknown-transactional-id",
    ),
    pytest.param(
        verify(ONGOING, ONGOING_PID, 0, (T, 0), (T, 1)),
        5,
        [{"partition": (T, 0), "error": E.NONE}, {"partition": (T, 1), "error": E.TRANSACTION_ABORTABLE}],
        id="v5-verify-only",
    ),
    pytest.param(
        verify(ONGOING, ONGOING_PID, 1, (T, 0)),
        4,
        [{"partition": (T, 0), "error": E.PRODUCER_FENCED}],
        id="v4-verify-another-epoch",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), ADD_PARTITIONS_TO_TXN_CASES)
async def test_add_partitions_to_txn(broker: Broker, request_: Any, version: int, expected: Any) -> None:
    await check(broker, request_, version, added, expected)


# ---- AddOffsetsToTxn (v0-4) -------------------------------------------------------------------------------------


def error_code(response: AddOffsetsToTxnResponse | EndTxnResponse) -> dict[str, Any]:
    return {"error": response.error_code}


ADD_OFFSETS_TO_TXN_CASES = [
    pytest.param(
        AddOffsetsToTxnRequest(transactional_id=READY, producer_id=READY_PID, producer_epoch=0, group_id=G),
        3,
        {"error": E.NONE},
        id="the-groups-partition-joins",
    ),
    pytest.param(
        AddOffsetsToTxnRequest(transactional_id=READY, producer_id=READY_PID, producer_epoch=2, group_id=G),
        1,
        {"error": E.INVALID_PRODUCER_EPOCH},
        id="v1-fenced",
    ),
    pytest.param(
        AddOffsetsToTxnRequest(transactional_id=READY, producer_id=READY_PID, producer_epoch=2, group_id=G),
        4,
        {"error": E.PRODUCER_FENCED},
        id="v4-fenced",
    ),
    pytest.param(
        AddOffsetsToTxnRequest(transactional_id="unknown", producer_id=3, producer_epoch=0, group_id=G),
        3,
        {"error": E.INVALID_PRODUCER_ID_MAPPING},
        id="unknown-transactional-id",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), ADD_OFFSETS_TO_TXN_CASES)
async def test_add_offsets_to_txn(broker: Broker, request_: Any, version: int, expected: Any) -> None:
    await check(broker, request_, version, error_code, expected)


# ---- EndTxn (v0-4) ----------------------------------------------------------------------------------------------


def end(txn_id: str, pid: int, epoch: int, commit: bool) -> EndTxnRequest:
    return EndTxnRequest(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, committed=commit)


END_TXN_CASES = [
    pytest.param(end(ONGOING, ONGOING_PID, 0, True), 3, {"error": E.NONE}, id="commit"),
    pytest.param(end(ONGOING, ONGOING_PID, 0, False), 3, {"error": E.NONE}, id="abort"),
    pytest.param(end(READY, READY_PID, 0, True), 3, {"error": E.INVALID_TXN_STATE}, id="no-transaction"),
    pytest.param(end(ONGOING, ONGOING_PID, 1, True), 3, {"error": E.PRODUCER_FENCED}, id="another-epoch"),
    pytest.param(end(ONGOING, ONGOING_PID, 1, True), 1, {"error": E.INVALID_PRODUCER_EPOCH}, id="v1-fenced"),
    pytest.param(
        end(ONGOING, READY_PID, 0, True), 3, {"error": E.INVALID_PRODUCER_ID_MAPPING}, id="another-id"
    ),
    pytest.param(end("", 0, 0, True), 3, {"error": E.INVALID_REQUEST}, id="empty-transactional-id"),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), END_TXN_CASES)
async def test_end_txn(broker: Broker, request_: Any, version: int, expected: Any) -> None:
    await check(broker, request_, version, error_code, expected)


@pytest.mark.trio
async def test_end_txn_retried_and_the_next_transaction(broker: Broker) -> None:
    """A retried commit is answered NONE; the id's next requests wait (CONCURRENT_TRANSACTIONS) only until the
    markers are written."""
    assert (await wire_call(broker, end(ONGOING, ONGOING_PID, 0, True), 3)).error_code == E.NONE
    await wait_until(lambda: broker.transactions.describe(ONGOING).state == "CompleteCommit")
    assert (await wire_call(broker, end(ONGOING, ONGOING_PID, 0, True), 3)).error_code == E.NONE
    assert (await wire_call(broker, end(ONGOING, ONGOING_PID, 0, False), 3)).error_code == E.INVALID_TXN_STATE
    again = await wire_call(broker, add_partitions(ONGOING, ONGOING_PID, 0, (T, 1)), 3)
    assert added(again) == [{"partition": (T, 1), "error": E.NONE}]


# ---- TxnOffsetCommit (v0-4) -------------------------------------------------------------------------------------


def txn_commit(
    group: str,
    epoch: int = 0,
    member: str = "",
    generation: int = -1,
    offset: int = 5,
    partitions: tuple[tuple[str, int], ...] = ((T, 0),),
    txn_id: str = ONGOING,
) -> TxnOffsetCommitRequest:
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    return TxnOffsetCommitRequest(
        transactional_id=txn_id,
        group_id=group,
        producer_id=ONGOING_PID,
        producer_epoch=epoch,
        member_id=member,
        generation_id=generation,
        topics=[
            TxnOffsetCommitRequestTopic(
                name=topic,
                partitions=[
                    TxnOffsetCommitRequestPartition(partition_index=i, committed_offset=offset)
                    for i in indexes
                ],
            )
            for topic, indexes in by_topic.items()
        ],
    )


def committed(response: TxnOffsetCommitResponse) -> list[dict[str, Any]]:
    return [
        {"partition": (t.name, p.partition_index), "error": p.error_code}
        for t in response.topics
        for p in t.partitions
    ]


TXN_OFFSET_COMMIT_CASES = [
    pytest.param(txn_commit(G), 3, [{"partition": (T, 0), "error": E.NONE}], id="in-the-transaction"),
    pytest.param(
        txn_commit(G, member="m", generation=1),
        3,
        [{"error": E.UNKNOWN_MEMBER_ID}],
        id="v3-a-member-the-group-does-not-have",
    ),
    pytest.param(
        txn_commit("other"), 4, [{"error": E.TRANSACTION_ABORTABLE}], id="v4-group-not-in-the-transaction"
    ),
    pytest.param(
        txn_commit("other"), 2, [{"error": E.INVALID_TXN_STATE}], id="v2-group-not-in-the-transaction"
    ),
    pytest.param(txn_commit(G, epoch=1), 3, [{"error": E.INVALID_PRODUCER_EPOCH}], id="another-epoch"),
    pytest.param(
        txn_commit(G, partitions=((T, 0), (T, 9), ("nope", 0))),
        3,
        [
            {"partition": (T, 9), "error": E.UNKNOWN_TOPIC_OR_PARTITION},
            {"partition": (T, 0), "error": E.NONE},
            {"partition": ("nope", 0), "error": E.UNKNOWN_TOPIC_OR_PARTITION},
        ],
        id="unknown-partitions-refused-the-others-committed",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), TXN_OFFSET_COMMIT_CASES)
async def test_txn_offset_commit(broker: Broker, request_: Any, version: int, expected: Any) -> None:
    await check(broker, request_, version, committed, expected)


# ---- WriteTxnMarkers (v1) ---------------------------------------------------------------------------------------


def marker(
    pid: int, epoch: int, coordinator_epoch: int, *partitions: tuple[str, int]
) -> WriteTxnMarkersRequest:
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    return WriteTxnMarkersRequest(
        markers=[
            WritableTxnMarker(
                producer_id=pid,
                producer_epoch=epoch,
                transaction_result=True,
                coordinator_epoch=coordinator_epoch,
                topics=[WritableTxnMarkerTopic(name=t, partition_indexes=p) for t, p in by_topic.items()],
            )
        ]
    )


def written(response: WriteTxnMarkersResponse) -> list[dict[str, Any]]:
    return [
        {"producer": m.producer_id, "partition": (t.name, p.partition_index), "error": p.error_code}
        for m in response.markers
        for t in m.topics
        for p in t.partitions
    ]


WRITE_TXN_MARKERS_CASES = [
    pytest.param(
        marker(PRODUCING, 3, 0, (T, 0)),
        1,
        [{"producer": PRODUCING, "error": E.NONE}],
        id="ends-a-transaction",
    ),
    pytest.param(
        marker(PRODUCING, 3, 0, (T, 7), ("nope", 0)),
        1,
        [{"error": E.UNKNOWN_TOPIC_OR_PARTITION}, {"error": E.UNKNOWN_TOPIC_OR_PARTITION}],
        id="unknown-partitions",
    ),
    pytest.param(marker(STALE_PID, 4, 3, (T, 1)), 1, [{"error": E.INVALID_PRODUCER_EPOCH}], id="older-epoch"),
    pytest.param(
        marker(STALE_PID, 5, 2, (T, 1)),
        1,
        [{"error": E.TRANSACTION_COORDINATOR_FENCED}],
        id="older-coordinator",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), WRITE_TXN_MARKERS_CASES)
async def test_write_txn_markers(broker: Broker, request_: Any, version: int, expected: Any) -> None:
    await check(broker, request_, version, written, expected)


# ---- DescribeTransactions (v0) ----------------------------------------------------------------------------------


def described(response: DescribeTransactionsResponse) -> list[dict[str, Any]]:
    return [
        {
            "id": s.transactional_id,
            "error": s.error_code,
            "state": s.transaction_state,
            "producer": (s.producer_id, s.producer_epoch),
            "timeout": s.transaction_timeout_ms,
            "started": s.transaction_start_time_ms >= 0,
            "partitions": sorted((t.topic, p) for t in s.topics for p in t.partitions),
        }
        for s in response.transaction_states
    ]


DESCRIBE_TRANSACTIONS_CASES = [
    pytest.param(
        DescribeTransactionsRequest(transactional_ids=[ONGOING, READY]),
        0,
        [
            {
                "id": ONGOING,
                "error": E.NONE,
                "state": "Ongoing",
                "producer": (ONGOING_PID, 0),
                "timeout": 60_000,
                "started": True,
                "partitions": sorted([(T, 0), ("__consumer_offsets", OFFSETS_PARTITION)]),
            },
            {"id": READY, "error": E.NONE, "state": "Empty", "producer": (READY_PID, 0), "started": False},
        ],
        id="ongoing-and-empty",
    ),
    pytest.param(
        DescribeTransactionsRequest(transactional_ids=["unknown"]),
        0,
        [{"error": E.TRANSACTIONAL_ID_NOT_FOUND}],
        id="unknown",
    ),
    pytest.param(
        DescribeTransactionsRequest(transactional_ids=[""]), 0, [{"error": E.INVALID_REQUEST}], id="empty"
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), DESCRIBE_TRANSACTIONS_CASES)
async def test_describe_transactions(broker: Broker, request_: Any, version: int, expected: Any) -> None:
    await check(broker, request_, version, described, expected)


# ---- ListTransactions (v0-1) ------------------------------------------------------------------------------------


def listed(response: ListTransactionsResponse) -> dict[str, Any]:
    return {
        "error": response.error_code,
        "unknown": response.unknown_state_filters,
        "transactions": sorted(
            (t.transactional_id, t.producer_id, t.transaction_state) for t in response.transaction_states
        ),
    }


LIST_TRANSACTIONS_CASES = [
    pytest.param(
        ListTransactionsRequest(),
        0,
        {"error": E.NONE, "transactions": [(ONGOING, ONGOING_PID, "Ongoing"), (READY, READY_PID, "Empty")]},
        id="all",
    ),
    pytest.param(
        ListTransactionsRequest(state_filters=["Ongoing", "Nope"]),
        0,
        {"error": E.NONE, "unknown": ["Nope"], "transactions": [(ONGOING, ONGOING_PID, "Ongoing")]},
        id="by-state",
    ),
    pytest.param(
        ListTransactionsRequest(producer_id_filters=[READY_PID]),
        0,
        {"transactions": [(READY, READY_PID, "Empty")]},
        id="by-producer-id",
    ),
    pytest.param(
        ListTransactionsRequest(state_filters=["Ongoing"], duration_filter=3_600_000),
        1,
        {"transactions": []},
        id="v1-running-for-an-hour",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), LIST_TRANSACTIONS_CASES)
async def test_list_transactions(broker: Broker, request_: Any, version: int, expected: Any) -> None:
    await check(broker, request_, version, listed, expected)


@pytest.mark.trio
@pytest.mark.parametrize("version", [1, 3, 4, 6])
async def test_find_coordinator_creates_the_transaction_state_topic(tmp_path: Path, version: int) -> None:
    """The first FindCoordinator for a transactional id creates __transaction_state (COORDINATOR_NOT_AVAILABLE
    meanwhile, as Kafka); then the leader of the id's partition is the coordinator."""

    def request() -> FindCoordinatorRequest:
        if version >= 4:
            return FindCoordinatorRequest(key_type=1, coordinator_keys=["tx"])
        return FindCoordinatorRequest(key="tx", key_type=1)

    def answer(response: Any) -> tuple[int, int]:
        if version >= 4:
            return response.coordinators[0].error_code, response.coordinators[0].node_id
        return response.error_code, response.node_id

    async with started(tmp_path, Setup(), {}) as broker:
        assert answer(await wire_call(broker, request(), version)) == (E.COORDINATOR_NOT_AVAILABLE, -1)
        await wait_until(lambda: len(broker.transactions.coordinator.partitions) == TXN_PARTITIONS)
        assert answer(await wire_call(broker, request(), version)) == (E.NONE, broker.config.node_id)
        topic = broker.metadata.image().topics["__transaction_state"]
        assert (topic.num_partitions, topic.configs["cleanup.policy"], topic.is_internal) == (
            TXN_PARTITIONS,
            "compact",
            True,
        )


@pytest.mark.trio
async def test_a_transactional_id_needs_write_on_it_with_an_authorizer(tmp_path: Path) -> None:
    """With ACLs on, InitProducerId and Produce need WRITE on the transactional id (Kafka's
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED otherwise), FindCoordinator DESCRIBE on it; the other transaction APIs'
    rows are in the table below."""
    write_on_tx_a = acl("tx-a", op=4, rtype=5)  # WRITE, TRANSACTIONAL_ID
    async with running_broker(tmp_path / "data", AUTHORIZED) as broker:
        created = await wire_call(broker, CreateAclsRequest(creations=[write_on_tx_a]), 3, as_user("admin"))
        assert [r.error_code for r in created.results] == [E.NONE]

        async def as_alice(request: Any, version: int) -> int:
            # (The first FindCoordinator creates __transaction_state: retriable errors until it is loaded.)
            retriable = (E.COORDINATOR_NOT_AVAILABLE, E.COORDINATOR_LOAD_IN_PROGRESS, E.NOT_COORDINATOR)
            for _ in range(200):
                code = (await wire_call(broker, request, version, as_user("alice"))).error_code
                if code not in retriable:
                    return int(code)
                await trio.sleep(0.05)
            raise AssertionError(f"{request} still answers {code}")

        assert await as_alice(FindCoordinatorRequest(key="tx-a", key_type=1), 3) == E.NONE
        assert await as_alice(FindCoordinatorRequest(key="tx-b", key_type=1), 3) == (
            E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        )
        init = InitProducerIdRequest(transactional_id="tx-a", transaction_timeout_ms=60_000)
        assert await as_alice(init, 4) == E.NONE
        init.transactional_id = "tx-b"
        assert await as_alice(init, 4) == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        batch = build_batch(
            [Record(0, 0, None, b"v")], producer_id=1, producer_epoch=0, is_transactional=True
        )
        produce = ProduceRequest(
            transactional_id="tx-b",
            acks=-1,
            timeout_ms=1000,
            topic_data=[
                TopicProduceData(name=T, partition_data=[PartitionProduceData(index=0, records=bytes(batch))])
            ],
        )
        response = await wire_call(broker, produce, 9, as_user("alice"))
        errors = [p.error_code for t in response.responses for p in t.partition_responses]
        assert errors == [E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]


# ---- With ACLs on (authorizer.class.name): what each transaction API checks, in Kafka's order --------------------
# alice may write ONGOING (and so describe it), only describe READY, write and read T, read group G; bob may only
# describe READY; "ops" has ALTER on the cluster (an administrator: kafka-transactions.sh abort), "broker"
# CLUSTER_ACTION (another broker). The fixture's transactions are set up by the super user admin.
# compat/test_security_acls.py compares the same kind of requests with Apache Kafka's answers.

TXN, GROUP, CLUSTER = 5, 3, 4
WRITE, READ, ALL, ALTER, DESCRIBE, CLUSTER_ACTION = 4, 3, 2, 7, 8, 9
TXN_ACLS = [
    acl(ONGOING, rtype=TXN, op=WRITE),
    acl(READY, rtype=TXN, op=DESCRIBE),
    acl(READY, rtype=TXN, op=DESCRIBE, principal="User:bob"),
    acl(T, op=ALL),
    acl(G, rtype=GROUP, op=READ),
    acl("kafka-cluster", rtype=CLUSTER, op=ALTER, principal="User:ops"),
    acl("kafka-cluster", rtype=CLUSTER, op=CLUSTER_ACTION, principal="User:broker"),
]
SECRET = "secret"
"""A topic no ACL names: no one but the super user may touch it."""


@pytest.fixture
async def secured(tmp_path: Path) -> AsyncIterator[Broker]:
    admin = as_user("admin")
    async with prepared(tmp_path, Setup(settings=AUTHORIZED), admin) as running:
        await running.metadata.create_topic(SECRET, 1, 1, {})
        created = await wire_call(running, CreateAclsRequest(creations=TXN_ACLS), 3, admin)
        assert [r.error_code for r in created.results] == [E.NONE] * len(TXN_ACLS)
        yield running


def add_partitions_v4(response: AddPartitionsToTxnResponse) -> dict[str, Any]:
    return {"error": response.error_code, "partitions": added(response)}


ACL_CASES = [
    # AddPartitionsToTxn: the transactional id, then per topic WRITE (an internal topic never), then existence
    pytest.param(
        "alice", add_partitions(READY, READY_PID, 0, (T, 1), (T, 2)), 3, added,
        [{"partition": (T, 1), "error": E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED},
         {"partition": (T, 2), "error": E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}],
        id="add-partitions-describe-is-not-write",
    ),
    pytest.param(
        "alice",
        add_partitions(ONGOING, ONGOING_PID, 0, (T, 1), (T, 9), (SECRET, 0), ("nope", 0), ("__consumer_offsets", 0)),
        3, added,
        [{"partition": (T, 1), "error": E.OPERATION_NOT_ATTEMPTED},
         {"partition": (T, 9), "error": E.UNKNOWN_TOPIC_OR_PARTITION},
         {"partition": (SECRET, 0), "error": E.TOPIC_AUTHORIZATION_FAILED},
         {"partition": ("nope", 0), "error": E.TOPIC_AUTHORIZATION_FAILED},
         {"partition": ("__consumer_offsets", 0), "error": E.TOPIC_AUTHORIZATION_FAILED}],
        id="add-partitions-topics-refused-before-unknown-none-added",
    ),
    pytest.param(
        "alice", add_partitions(ONGOING, ONGOING_PID, 0, (T, 1)), 3, added,
        [{"partition": (T, 1), "error": E.NONE}], id="add-partitions-allowed",
    ),
    pytest.param(
        "alice", verify(ONGOING, ONGOING_PID, 0, (T, 0)), 4, add_partitions_v4,
        {"error": E.CLUSTER_AUTHORIZATION_FAILED, "partitions": []}, id="add-partitions-v4-is-for-brokers",
    ),
    pytest.param(
        "broker", verify(ONGOING, ONGOING_PID, 0, (T, 0), (SECRET, 0)), 5, add_partitions_v4,
        {"error": E.NONE, "partitions": [{"partition": (T, 0), "error": E.NONE},
                                         {"partition": (SECRET, 0), "error": E.TRANSACTION_ABORTABLE}]},
        id="add-partitions-v5-verify-as-a-broker-no-topic-acls",
    ),
    # AddOffsetsToTxn: the transactional id, then READ on the group
    pytest.param(
        "alice", AddOffsetsToTxnRequest(transactional_id=READY, producer_id=READY_PID, producer_epoch=0, group_id=G),
        3, error_code, {"error": E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}, id="add-offsets-transactional-id",
    ),
    pytest.param(
        "alice",
        AddOffsetsToTxnRequest(transactional_id=ONGOING, producer_id=ONGOING_PID, producer_epoch=0, group_id="other"),
        3, error_code, {"error": E.GROUP_AUTHORIZATION_FAILED}, id="add-offsets-group",
    ),
    pytest.param(
        "bob",
        AddOffsetsToTxnRequest(transactional_id=ONGOING, producer_id=ONGOING_PID, producer_epoch=0, group_id="other"),
        3, error_code, {"error": E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED},
        id="add-offsets-transactional-id-before-group",
    ),
    pytest.param(
        "alice",
        AddOffsetsToTxnRequest(transactional_id=ONGOING, producer_id=ONGOING_PID, producer_epoch=0, group_id=G),
        3, error_code, {"error": E.NONE}, id="add-offsets-allowed",
    ),
    # EndTxn: WRITE on the transactional id
    pytest.param("alice", end(READY, READY_PID, 0, True), 3, error_code,
                 {"error": E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}, id="end-txn-transactional-id"),
    pytest.param("alice", end(ONGOING, ONGOING_PID, 0, True), 3, error_code, {"error": E.NONE}, id="end-txn-allowed"),
    # TxnOffsetCommit: the transactional id, the group (each on every partition), then per topic READ and existence
    pytest.param(
        "alice", txn_commit(G, txn_id=READY, partitions=((T, 0), (SECRET, 0))), 3, committed,
        [{"partition": (T, 0), "error": E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED},
         {"partition": (SECRET, 0), "error": E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}],
        id="txn-offset-commit-transactional-id",
    ),
    pytest.param(
        "alice", txn_commit("other", partitions=((T, 0), (SECRET, 0))), 3, committed,
        [{"partition": (T, 0), "error": E.GROUP_AUTHORIZATION_FAILED},
         {"partition": (SECRET, 0), "error": E.GROUP_AUTHORIZATION_FAILED}],
        id="txn-offset-commit-group",
    ),
    pytest.param(
        "alice", txn_commit(G, partitions=((T, 0), (T, 9), (SECRET, 0), ("nope", 0))), 3, committed,
        [{"partition": (T, 9), "error": E.UNKNOWN_TOPIC_OR_PARTITION},
         {"partition": (T, 0), "error": E.NONE},
         {"partition": (SECRET, 0), "error": E.TOPIC_AUTHORIZATION_FAILED},
         {"partition": ("nope", 0), "error": E.TOPIC_AUTHORIZATION_FAILED}],
        id="txn-offset-commit-topics",
    ),
    # WriteTxnMarkers: ALTER (KIP-1037) or CLUSTER_ACTION on the cluster
    pytest.param("alice", marker(PRODUCING, 3, 0, (T, 0), (T, 7)), 1, written,
                 [{"partition": (T, 0), "error": E.CLUSTER_AUTHORIZATION_FAILED},
                  {"partition": (T, 7), "error": E.CLUSTER_AUTHORIZATION_FAILED}], id="write-txn-markers-refused"),
    pytest.param("ops", marker(PRODUCING, 3, 0, (T, 0)), 1, written, [{"error": E.NONE}],
                 id="write-txn-markers-alter-cluster"),
    pytest.param("broker", marker(PRODUCING, 3, 0, (T, 0)), 1, written, [{"error": E.NONE}],
                 id="write-txn-markers-cluster-action"),
    # DescribeTransactions: DESCRIBE on each id; only the topics one may describe
    pytest.param(
        "alice", DescribeTransactionsRequest(transactional_ids=[ONGOING, READY, "hidden"]), 0, described,
        [{"id": ONGOING, "error": E.NONE, "state": "Ongoing", "partitions": [(T, 0)]},
         {"id": READY, "error": E.NONE, "state": "Empty"},
         {"id": "hidden", "error": E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "state": "", "producer": (0, 0),
          "timeout": 0, "partitions": []}],
        id="describe-transactions",
    ),
    pytest.param(
        "admin", DescribeTransactionsRequest(transactional_ids=[ONGOING]), 0, described,
        [{"id": ONGOING, "error": E.NONE, "partitions": sorted([(T, 0), ("__consumer_offsets", OFFSETS_PARTITION)])}],
        id="describe-transactions-super-user",
    ),
    # ListTransactions: only the ids one may describe
    pytest.param("alice", ListTransactionsRequest(), 0, listed,
                 {"error": E.NONE, "transactions": [(ONGOING, ONGOING_PID, "Ongoing"), (READY, READY_PID, "Empty")]},
                 id="list-transactions-alice"),
    pytest.param("bob", ListTransactionsRequest(), 0, listed,
                 {"error": E.NONE, "transactions": [(READY, READY_PID, "Empty")]}, id="list-transactions-bob"),
    pytest.param("ops", ListTransactionsRequest(), 0, listed, {"error": E.NONE, "transactions": []},
                 id="list-transactions-none"),
]  # fmt: skip


@pytest.mark.trio
@pytest.mark.parametrize(("user", "request_", "version", "view", "expected"), ACL_CASES)
async def test_transaction_apis_with_acls(
    secured: Broker, user: str, request_: Any, version: int, view: Callable[[Any], Any], expected: Any
) -> None:
    await check(secured, request_, version, view, expected, as_user(user))
