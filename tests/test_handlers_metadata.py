"""Metadata, DescribeCluster and DescribeTopicPartitions, tabled in process: (request, version) -> the brokers, the
controller and each topic's error code and partitions, against a real broker (tests/inprocess.py, through the codec:
tests/handler_tables.py).

Rows marked `kafka_differs` state Kafka's answer where kbroker answers otherwise; their reason says both.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kbroker.app import Broker
from kbroker.common import TopicPartition
from kbroker.handlers.topic_descriptions import TopicDescriptions
from kbroker.metadata.image import BrokerRegistration, MetadataImage, PartitionState, TopicMetadata
from protocol.codec import Encoded, decode, encode
from protocol.errors import ErrorCode as E
from protocol.messages.describe_cluster_request import DescribeClusterRequest
from protocol.messages.describe_cluster_response import DescribeClusterResponse
from protocol.messages.describe_topic_partitions_request import (
    Cursor,
    DescribeTopicPartitionsRequest,
    TopicRequest,
)
from protocol.messages.describe_topic_partitions_response import DescribeTopicPartitionsResponse
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from protocol.messages.metadata_response import MetadataResponse
from protocol.primitives import ZERO_UUID
from tests.handler_tables import (
    NODE,
    OTHER,
    PORT,
    Setup,
    assert_answer,
    kafka_differs,
    started,
    topic_id_of,
    wire_call,
)
from tests.memory_metadata import MemoryMetadata

pytestmark = pytest.mark.timeout(60)

OFFSETS = "__consumer_offsets"
OFFSETS_PARTITIONS = 5  # tests/inprocess.py QUICK
T = "t"
"""Two partitions."""
OTHER_TOPIC = "other"
LEADERLESS = "leaderless"
"""TWO_BROKERS only: its one replica, on broker OTHER, leads it, and broker OTHER is not live."""

SINGLE = Setup()
TWO_BROKERS = Setup(two_brokers=True)
NO_AUTO_CREATE = Setup({"auto.create.topics.enable": "false"})


@asynccontextmanager
async def world(tmp_path: Path, setup: Setup) -> AsyncIterator[Broker]:
    """Topics T and OTHER_TOPIC; with TWO_BROKERS also LEADERLESS, whose leader, broker OTHER, is then not live."""
    async with started(tmp_path, setup, {T: (2, {}), OTHER_TOPIC: (1, {})}) as broker:
        if isinstance(broker.metadata, MemoryMetadata):
            await broker.metadata.create_topic(LEADERLESS, 1, 1, {})
            broker.metadata.set_partition(
                TopicPartition(LEADERLESS, 0), leader=OTHER, isr=(OTHER,), replicas=(OTHER,)
            )
            broker.metadata.set_brokers([NODE])
        yield broker


# ---- Metadata (v0-12) -------------------------------------------------------------------------------------------


def metadata(
    *names: str | None, allow_auto_create: bool = True, by_id: Sequence[Any] = ()
) -> MetadataRequest:
    """Topics by name, then by id (`by_id`); `metadata(None)` asks for every topic (a null list)."""
    if names == (None,):
        return MetadataRequest(topics=None, allow_auto_topic_creation=allow_auto_create)  # type: ignore[arg-type]
    return MetadataRequest(
        topics=[MetadataRequestTopic(name=n) for n in names]
        + [MetadataRequestTopic(name=None, topic_id=i) for i in by_id],
        allow_auto_topic_creation=allow_auto_create,
    )


def topics_of(response: MetadataResponse, broker: Broker) -> list[dict[str, Any]]:
    existing = broker.metadata.image().topics
    return [
        {
            "name": t.name,
            "error": t.error_code,
            "topic_id": t.topic_id,
            "is_internal": t.is_internal,
            "partitions": [
                (p.partition_index, p.error_code, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes)
                for p in t.partitions
            ],
            "offline": [p.offline_replicas for p in t.partitions],
            "exists": t.name in existing,
        }
        for t in response.topics
    ]


def led_here(*partitions: int, epoch: int = 0) -> list[tuple[int, int, int, int, list[int], list[int]]]:
    """Partitions this node leads at `epoch`, alone in the ISR."""
    return [(p, E.NONE, NODE, epoch, [NODE], [NODE]) for p in partitions]


def absent(name: str | None, error: E) -> dict[str, Any]:
    return {"name": name, "error": error, "partitions": []}


# Each row: setup, request, version, expected topics in order (a set: the names of the topics, in any order).
METADATA_CASES = [
    pytest.param(
        SINGLE,
        metadata(T),
        12,
        [
            {
                "name": T,
                "error": E.NONE,
                "topic_id": topic_id_of(T),
                "is_internal": False,
                "partitions": led_here(0, 1),
            }
        ],
        id="a-topic",
    ),
    pytest.param(
        SINGLE,
        metadata(T),
        0,
        [{"name": T, "error": E.NONE, "topic_id": ZERO_UUID, "partitions": led_here(0, 1, epoch=-1)}],
        id="v0-no-leader-epoch-nor-id",
    ),
    pytest.param(
        SINGLE,
        metadata(T),
        9,
        [{"name": T, "topic_id": ZERO_UUID, "partitions": led_here(0, 1)}],
        id="v9-no-id",
    ),
    pytest.param(SINGLE, metadata(OFFSETS), 1, [{"name": OFFSETS, "is_internal": True}], id="internal-topic"),
    pytest.param(SINGLE, metadata(), 0, {OFFSETS, T, OTHER_TOPIC}, id="v0-empty-list-means-every-topic"),
    pytest.param(SINGLE, metadata(None), 1, {OFFSETS, T, OTHER_TOPIC}, id="null-list-means-every-topic"),
    pytest.param(SINGLE, metadata(), 1, [], id="v1-empty-list-means-none"),
    pytest.param(
        SINGLE,
        metadata("new", allow_auto_create=False),
        12,
        [{**absent("new", E.UNKNOWN_TOPIC_OR_PARTITION), "topic_id": ZERO_UUID, "exists": False}],
        id="unknown-topic-not-created",
    ),
    pytest.param(
        SINGLE,
        metadata("new", allow_auto_create=True),
        12,
        [{"name": "new", "exists": True}],
        id="unknown-topic-auto-created",
    ),
    pytest.param(
        SINGLE,
        metadata("new", allow_auto_create=True),
        12,
        [{**absent("new", E.UNKNOWN_TOPIC_OR_PARTITION), "exists": True}],
        id="auto-created-topic-is-not-ready-in-the-same-answer",
        marks=kafka_differs(
            "kbroker creates an auto-created topic before answering and describes it, Kafka (KRaft) forwards the "
            "creation to the controller and answers UNKNOWN_TOPIC_OR_PARTITION meanwhile "
            "(AutoTopicCreationManager.sendCreateTopicRequest; LEADER_NOT_AVAILABLE in ZooKeeper mode). Clients retry "
            "either way: kbroker's answer saves them a round trip"
        ),
    ),
    pytest.param(
        SINGLE,
        metadata("new"),
        3,
        [{"name": "new", "error": E.NONE, "exists": True}],
        id="before-v4-always-creates",
    ),
    pytest.param(
        NO_AUTO_CREATE,
        metadata("new", allow_auto_create=True),
        12,
        [{**absent("new", E.UNKNOWN_TOPIC_OR_PARTITION), "exists": False}],
        id="auto-create-disabled-on-the-broker",
    ),
    pytest.param(
        SINGLE,
        metadata("a b", allow_auto_create=True),
        12,
        [{**absent("a b", E.INVALID_TOPIC_EXCEPTION), "exists": False}],
        id="illegal-name-auto-created",
    ),
    pytest.param(
        SINGLE,
        metadata("a b", allow_auto_create=False),
        12,
        [absent("a b", E.INVALID_TOPIC_EXCEPTION)],
        id="illegal-name-without-auto-creation",
    ),
    pytest.param(
        SINGLE,
        metadata(by_id=[topic_id_of(T)]),
        12,
        [{"name": T, "error": E.NONE, "topic_id": topic_id_of(T), "partitions": led_here(0, 1)}],
        id="v12-by-topic-id",
    ),
    pytest.param(
        SINGLE,
        metadata(by_id=[topic_id_of("nope")]),
        12,
        [{**absent(None, E.UNKNOWN_TOPIC_ID), "topic_id": topic_id_of("nope")}],
        id="v12-unknown-topic-id",
    ),
    pytest.param(
        SINGLE,
        metadata(by_id=[topic_id_of(T)]),
        10,
        [{**absent("", E.INVALID_REQUEST), "topic_id": topic_id_of(T)}],
        id="v10-by-topic-id-is-refused",
    ),
    pytest.param(
        TWO_BROKERS,
        metadata(LEADERLESS),
        12,
        [
            {
                "name": LEADERLESS,
                "partitions": [(0, E.LEADER_NOT_AVAILABLE, -1, 1, [OTHER], [OTHER])],
                "offline": [[OTHER]],
            }
        ],
        id="leader-not-live",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("setup", "request_", "version", "expected"), METADATA_CASES)
async def test_metadata(
    tmp_path: Path, setup: Setup, request_: MetadataRequest, version: int, expected: Any
) -> None:
    async with world(tmp_path, setup) as broker:
        if isinstance(expected, set):
            rows = topics_of(await wire_call(broker, request_, version), broker)
            assert {r["name"] for r in rows} == expected
        else:
            await assert_answer(broker, request_, version, lambda r: topics_of(r, broker), expected)


@pytest.mark.trio
@pytest.mark.parametrize(
    ("setup", "version", "brokers", "cluster_id", "controller_id"),
    [
        pytest.param(SINGLE, 12, [NODE], True, NODE, id="v12"),
        pytest.param(SINGLE, 2, [NODE], True, NODE, id="v2-cluster-id"),
        pytest.param(SINGLE, 1, [NODE], False, NODE, id="v1-no-cluster-id"),
        pytest.param(SINGLE, 0, [NODE], False, -1, id="v0-no-controller"),
        pytest.param(TWO_BROKERS, 12, [NODE], True, NODE, id="only-live-brokers"),
    ],
)
async def test_metadata_brokers_and_controller(
    tmp_path: Path, setup: Setup, version: int, brokers: list[int], cluster_id: bool, controller_id: int
) -> None:
    async with world(tmp_path, setup) as broker:
        response = await wire_call(broker, metadata(T), version)
        image = broker.metadata.image()
        assert [(b.node_id, b.host, b.port) for b in response.brokers] == [
            (n, image.brokers[n].host, image.brokers[n].port) for n in brokers
        ]
        assert response.cluster_id == (image.cluster_id if cluster_id else None)
        assert response.controller_id == controller_id


# ---- Metadata answers are encoded once per topic state (kbroker/handlers/topic_descriptions.py) ----------------


def every_topic(
    response: MetadataResponse,
) -> dict[str | None, list[tuple[int, int, int, int, list[int], list[int]]]]:
    return {
        t.name: [
            (p.partition_index, p.error_code, p.leader_id, p.leader_epoch, p.isr_nodes, p.offline_replicas)
            for p in t.partitions
        ]
        for t in response.topics
        if t.name != OFFSETS
    }


@pytest.mark.trio
@pytest.mark.parametrize("version", [1, 9, 12])
async def test_metadata_answer_follows_topic_changes(tmp_path: Path, version: int) -> None:
    """The single node's metadata shares unchanged topics between images; each change still shows at once."""
    async with world(tmp_path, SINGLE) as broker:
        ask = metadata(None) if version >= 1 else metadata()
        epoch = 0 if version >= 7 else -1  # leader epochs came with v7
        before = every_topic(await wire_call(broker, ask, version))
        assert before[T] == [(0, E.NONE, NODE, epoch, [NODE], []), (1, E.NONE, NODE, epoch, [NODE], [])]
        await broker.metadata.create_topic("new", 1, 1, {})
        after_create = every_topic(await wire_call(broker, ask, version))
        assert after_create == {**before, "new": [(0, E.NONE, NODE, epoch, [NODE], [])]}
        await broker.metadata.create_partitions(T, 3, None)
        after_partitions = every_topic(await wire_call(broker, ask, version))
        assert [p[0] for p in after_partitions[T]] == [0, 1, 2]
        await broker.metadata.delete_topic("new")
        assert "new" not in every_topic(await wire_call(broker, ask, version))
        await broker.metadata.create_topic("new", 2, 1, {})
        recreated = await wire_call(broker, metadata("new"), version)
        assert [p.partition_index for p in recreated.topics[0].partitions] == [0, 1]
        if version >= 10:
            assert recreated.topics[0].topic_id == broker.metadata.image().topics["new"].topic_id


@pytest.mark.trio
async def test_metadata_answer_follows_leaders_and_live_brokers(tmp_path: Path) -> None:
    async with started(tmp_path, TWO_BROKERS, {T: (2, {})}) as broker:
        assert isinstance(broker.metadata, MemoryMetadata)
        ask = metadata(None)
        assert every_topic(await wire_call(broker, ask, 12))[T][0] == (0, E.NONE, NODE, 0, [NODE], [])
        broker.metadata.set_partition(
            TopicPartition(T, 0), leader=OTHER, isr=(OTHER,), replicas=(NODE, OTHER)
        )
        assert every_topic(await wire_call(broker, ask, 12))[T][0] == (0, E.NONE, OTHER, 1, [OTHER], [])
        # the leader's broker goes: no leader, and it is an offline replica
        broker.metadata.set_brokers([NODE])
        assert every_topic(await wire_call(broker, ask, 12))[T][0] == (
            0,
            E.LEADER_NOT_AVAILABLE,
            -1,
            1,
            [OTHER],
            [OTHER],
        )
        broker.metadata.set_partition(TopicPartition(T, 0), leader=NODE, isr=(NODE,))
        assert every_topic(await wire_call(broker, ask, 12))[T][0] == (0, E.NONE, NODE, 2, [NODE], [OTHER])
        assert every_topic(await wire_call(broker, ask, 12))[T][1] == (1, E.NONE, NODE, 0, [NODE], [])


def test_topic_descriptions_reuse_only_unchanged_topics() -> None:
    """An image that shares a topic's TopicMetadata and partition mapping, and has the same live brokers, gets the
    same encoded answer back; a change to any of them gets a new one, with the change in it."""
    one, two = (TopicMetadata(n, uuid.uuid4(), 1, 2) for n in ("one", "two"))
    led = PartitionState(NODE, 0, (NODE, OTHER), (NODE, OTHER), 0)
    image = MetadataImage(
        revision=1,
        brokers={NODE: BrokerRegistration(NODE, "h", 1), OTHER: BrokerRegistration(OTHER, "h", 2)},
        controller=None,
        topics={"one": one, "two": two},
        topic_revisions={},
        partitions={"one": {0: led}, "two": {0: led}},
        partition_revisions={},
    )
    cache = TopicDescriptions()

    def answer(
        image: MetadataImage, name: str
    ) -> tuple[Encoded, list[tuple[int, int, int, list[int], list[int]]]]:
        encoded = cache.encoded(image, image.topics[name], 12)
        decoded = decode(MetadataResponse, 12, encode(MetadataResponse(topics=[encoded]), 12))  # type: ignore[list-item]
        return encoded, [
            (p.leader_id, p.leader_epoch, p.error_code, p.isr_nodes, p.offline_replicas)
            for p in decoded.topics[0].partitions
        ]

    first, described = answer(image, "one")
    assert described == [(NODE, 0, E.NONE, [NODE, OTHER], [])]
    assert answer(replace(image, revision=2), "one")[0] is first
    moved = PartitionState(OTHER, 1, (OTHER,), (NODE, OTHER), 1)
    changed = replace(image, revision=3, partitions={**image.partitions, "two": {0: moved}})
    assert answer(changed, "one")[0] is first
    assert answer(changed, "two")[1] == [(OTHER, 1, E.NONE, [OTHER], [])]
    gone = replace(changed, revision=4, brokers={NODE: image.brokers[NODE]})
    assert answer(gone, "one")[1] == [(NODE, 0, E.NONE, [NODE, OTHER], [OTHER])]
    assert answer(gone, "two")[1] == [(-1, 1, E.LEADER_NOT_AVAILABLE, [OTHER], [OTHER])]
    grown = replace(gone, revision=5, topics={**gone.topics, "one": replace(one, num_partitions=2)})
    assert [leader for leader, *_ in answer(grown, "one")[1]] == [NODE, -1]
    # an answer encoded for one version is refused in another
    with pytest.raises(ValueError, match="another version"):
        encode(MetadataResponse(topics=[first]), 11)  # type: ignore[list-item]


# ---- DescribeCluster (v0-1) -------------------------------------------------------------------------------------

BROKERS_ENDPOINT, CONTROLLERS_ENDPOINT = 1, 2


def described_cluster(response: DescribeClusterResponse) -> dict[str, Any]:
    return {
        "error": response.error_code,
        "error_message": response.error_message,
        "endpoint_type": response.endpoint_type,
        "cluster_id": response.cluster_id,
        "controller_id": response.controller_id,
        "brokers": [(b.broker_id, b.host, b.port) for b in response.brokers],
    }


DESCRIBE_CLUSTER_CASES = [
    pytest.param(
        SINGLE,
        DescribeClusterRequest(),
        0,
        {"error": E.NONE, "controller_id": NODE, "brokers": [(NODE, "127.0.0.1", PORT)], "cluster_id": True},
        id="v0",
    ),
    pytest.param(
        SINGLE,
        DescribeClusterRequest(endpoint_type=BROKERS_ENDPOINT),
        1,
        {"error": E.NONE, "endpoint_type": BROKERS_ENDPOINT, "brokers": [(NODE, "127.0.0.1", PORT)]},
        id="v1-brokers",
    ),
    pytest.param(
        TWO_BROKERS,
        DescribeClusterRequest(),
        1,
        {"error": E.NONE, "controller_id": NODE, "brokers": [(NODE, "127.0.0.1", PORT)]},
        id="only-live-brokers",
    ),
    pytest.param(
        SINGLE,
        DescribeClusterRequest(endpoint_type=CONTROLLERS_ENDPOINT),
        1,
        {"error": E.MISMATCHED_ENDPOINT_TYPE, "brokers": [], "controller_id": -1, "cluster_id": False},
        id="v1-controllers-asked-of-a-broker",
    ),
    pytest.param(
        SINGLE,
        DescribeClusterRequest(endpoint_type=CONTROLLERS_ENDPOINT),
        1,
        {"error": E.MISMATCHED_ENDPOINT_TYPE, "endpoint_type": BROKERS_ENDPOINT},
        id="mismatched-answer-keeps-the-default-endpoint-type",
    ),
    pytest.param(
        SINGLE,
        DescribeClusterRequest(endpoint_type=3),
        1,
        {"error": E.UNSUPPORTED_ENDPOINT_TYPE, "brokers": []},
        id="v1-unknown-endpoint-type",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("setup", "request_", "version", "expected"), DESCRIBE_CLUSTER_CASES)
async def test_describe_cluster(
    tmp_path: Path, setup: Setup, request_: DescribeClusterRequest, version: int, expected: dict[str, Any]
) -> None:
    async with world(tmp_path, setup) as broker:
        cluster_id = broker.metadata.image().cluster_id

        def seen(response: DescribeClusterResponse) -> dict[str, Any]:
            return {**described_cluster(response), "cluster_id": response.cluster_id == cluster_id}

        await assert_answer(broker, request_, version, seen, expected)


# ---- DescribeTopicPartitions (v0) -------------------------------------------------------------------------------
# Topics A (3 partitions), B (2) and C (1) beside T (2), OTHER_TOPIC (1) and __consumer_offsets (5).
A, B, C = "a", "b", "c"


@asynccontextmanager
async def abc(tmp_path: Path) -> AsyncIterator[Broker]:
    async with world(tmp_path, SINGLE) as broker:
        for name, partitions in ((A, 3), (B, 2), (C, 1)):
            await broker.metadata.create_topic(name, partitions, 1, {})
        yield broker


def partitions_of(
    *topics: str, limit: int = 2000, cursor: tuple[str, int] | None = None
) -> DescribeTopicPartitionsRequest:
    return DescribeTopicPartitionsRequest(
        topics=[TopicRequest(name=t) for t in topics],
        response_partition_limit=limit,
        cursor=Cursor(topic_name=cursor[0], partition_index=cursor[1]) if cursor else None,
    )


def pages(response: DescribeTopicPartitionsResponse) -> dict[str, Any]:
    return {
        "topics": [
            (t.name, t.error_code, [p.partition_index for p in t.partitions]) for t in response.topics
        ],
        "next_cursor": (response.next_cursor.topic_name, response.next_cursor.partition_index)
        if response.next_cursor
        else None,
    }


def page(*topics: tuple[str, E, list[int]], next_cursor: tuple[str, int] | None = None) -> dict[str, Any]:
    return {"topics": list(topics), "next_cursor": next_cursor}


OK = E.NONE

DESCRIBE_TOPIC_PARTITIONS_CASES = [
    pytest.param(
        partitions_of(A, B, C), page((A, OK, [0, 1, 2]), (B, OK, [0, 1]), (C, OK, [0])), id="every-partition"
    ),
    pytest.param(
        partitions_of(C, A, B, A),
        page((A, OK, [0, 1, 2]), (B, OK, [0, 1]), (C, OK, [0])),
        id="topics-in-name-order",
    ),
    pytest.param(
        partitions_of(),
        page(
            (OFFSETS, OK, list(range(OFFSETS_PARTITIONS))),
            (A, OK, [0, 1, 2]),
            (B, OK, [0, 1]),
            (C, OK, [0]),
            (OTHER_TOPIC, OK, [0]),
            (T, OK, [0, 1]),
        ),
        id="empty-list-means-every-topic",
    ),
    pytest.param(
        partitions_of(A, B, C, limit=2), page((A, OK, [0, 1]), next_cursor=(A, 2)), id="limit-cuts-a-topic"
    ),
    pytest.param(
        partitions_of(A, B, C, limit=2, cursor=(A, 2)),
        page((A, OK, [2]), (B, OK, [0]), next_cursor=(B, 1)),
        id="cursor-resumes-and-the-limit-spans-topics",
    ),
    pytest.param(
        partitions_of(A, B, C, limit=2, cursor=(B, 1)),
        page((B, OK, [1]), (C, OK, [0])),
        id="last-page-has-no-cursor",
    ),
    pytest.param(
        partitions_of(A, B, C, limit=3),
        page((A, OK, [0, 1, 2]), next_cursor=(B, 0)),
        id="limit-reached-at-a-topic-end",
    ),
    pytest.param(partitions_of(A, limit=0), page((A, OK, [0]), next_cursor=(A, 1)), id="limit-0-counts-as-1"),
    pytest.param(
        partitions_of(A, "nope"),
        page((A, OK, [0, 1, 2]), ("nope", E.UNKNOWN_TOPIC_OR_PARTITION, [])),
        id="unknown-topic",
    ),
    pytest.param(
        partitions_of("a b"),
        page(("a b", E.INVALID_TOPIC_EXCEPTION, [])),
        id="illegal-topic-name",
    ),
    pytest.param(
        partitions_of(B, C, cursor=(A, 0)),
        page((B, E.INVALID_REQUEST, []), (C, E.INVALID_REQUEST, [])),
        id="cursor-topic-not-in-the-list",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "expected"), DESCRIBE_TOPIC_PARTITIONS_CASES)
async def test_describe_topic_partitions(
    tmp_path: Path, request_: DescribeTopicPartitionsRequest, expected: dict[str, Any]
) -> None:
    async with abc(tmp_path) as broker:
        await assert_answer(broker, request_, 0, pages, expected)


@pytest.mark.trio
async def test_describe_topic_partitions_details(tmp_path: Path) -> None:
    async with world(tmp_path, TWO_BROKERS) as broker:
        response = await wire_call(broker, partitions_of(OFFSETS, T, LEADERLESS, limit=2000), 0)
        image = broker.metadata.image()
    rows = [
        (
            t.name,
            t.topic_id == image.topics[t.name].topic_id,
            t.is_internal,
            [
                (
                    p.error_code,
                    p.leader_id,
                    p.leader_epoch,
                    p.replica_nodes,
                    p.isr_nodes,
                    p.offline_replicas,
                    p.eligible_leader_replicas,
                    p.last_known_elr,
                )
                for p in t.partitions[:1]
            ],
        )
        for t in response.topics
    ]
    assert rows == [
        (OFFSETS, True, True, [(E.NONE, NODE, 0, [NODE], [NODE], [], [], [])]),
        (LEADERLESS, True, False, [(E.LEADER_NOT_AVAILABLE, -1, 1, [OTHER], [OTHER], [OTHER], [], [])]),
        (T, True, False, [(E.NONE, NODE, 0, [NODE], [NODE], [], [], [])]),
    ]
