"""The consumer group APIs, tabled in process: (request, version) -> the error codes and fields each version carries,
against a real broker (tests/inprocess.py, through the codec: tests/handler_tables.py).

Every row starts from the same groups: STABLE (one member of generation 1, protocol "consumer"/"range", subscribed to
T, its assignment synced), CONNECT (the same with protocol type "connect") and OFFSETS_ONLY (offsets committed from
outside the group, no member). The member's id is random: rows name it MEMBER. A last table moves the
`__consumer_offsets` partition of group MOVED to another broker and checks where each API and version puts
NOT_COORDINATOR. Rows marked `kafka_differs` state Kafka's answer where kbroker answers otherwise; their reason says
both.
"""

from __future__ import annotations

import struct
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kbroker.app import Broker
from kbroker.common import TopicPartition
from kbroker.coordinator.records import partition_for
from kbroker.metadata.image import OFFSETS_TOPIC
from protocol.errors import ErrorCode as E
from protocol.messages.delete_groups_request import DeleteGroupsRequest
from protocol.messages.delete_groups_response import DeleteGroupsResponse
from protocol.messages.describe_groups_request import DescribeGroupsRequest
from protocol.messages.describe_groups_response import DescribeGroupsResponse
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.find_coordinator_response import FindCoordinatorResponse
from protocol.messages.heartbeat_request import HeartbeatRequest
from protocol.messages.heartbeat_response import HeartbeatResponse
from protocol.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.join_group_response import JoinGroupResponse
from protocol.messages.leave_group_request import LeaveGroupRequest, MemberIdentity
from protocol.messages.leave_group_response import LeaveGroupResponse
from protocol.messages.list_groups_request import ListGroupsRequest
from protocol.messages.list_groups_response import ListGroupsResponse
from protocol.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.messages.offset_commit_response import OffsetCommitResponse
from protocol.messages.offset_delete_request import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
)
from protocol.messages.offset_delete_response import OffsetDeleteResponse
from protocol.messages.offset_fetch_request import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from protocol.messages.offset_fetch_response import OffsetFetchResponse
from protocol.messages.sync_group_request import SyncGroupRequest, SyncGroupRequestAssignment
from protocol.messages.sync_group_response import SyncGroupResponse
from tests.handler_tables import OTHER, Setup, assert_answer, kafka_differs, started, substituted, wire_call
from tests.inprocess import wait_until
from tests.memory_metadata import MemoryMetadata

pytestmark = pytest.mark.timeout(60)

T = "t"
"""Two partitions; STABLE's member subscribes to it."""
U = "u"
"""One partition; nobody subscribes to it."""
STABLE = "stable"
CONNECT = "connect"
OFFSETS_ONLY = "offsets-only"
NEW = "new"
"""A group that does not exist yet."""
MEMBER = "<member of STABLE>"
"""Stands for the id of STABLE's member in a row."""
CONNECT_MEMBER = "<member of CONNECT>"
SESSION_MS = 10_000
REBALANCE_MS = 60_000
ASSIGNMENT = b"partitions of t"
CLIENT_ID = "in-process-test"  # tests/inprocess.py
CLIENT_HOST = "/127.0.0.1"
OFFSETS_PARTITIONS = 5  # tests/inprocess.py QUICK
COMMITTED = (42, 3, "m")
"""OFFSETS_ONLY's committed offset of T-0: offset, leader epoch, metadata. T-1 has none."""


def subscription(*topics: str) -> bytes:
    """A ConsumerProtocol subscription (v0): the topics and null user data."""
    out = struct.pack(">hi", 0, len(topics))
    for topic in topics:
        out += struct.pack(">h", len(topic)) + topic.encode()
    return out + struct.pack(">i", -1)


SUBSCRIPTION = subscription(T)


def join(
    group: str,
    member_id: str = "",
    *,
    protocol_type: str = "consumer",
    protocols: tuple[str, ...] = ("range",),
    session_timeout_ms: int = SESSION_MS,
    group_instance_id: str | None = None,
) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group,
        session_timeout_ms=session_timeout_ms,
        rebalance_timeout_ms=REBALANCE_MS,
        member_id=member_id,
        group_instance_id=group_instance_id,
        protocol_type=protocol_type,
        protocols=[JoinGroupRequestProtocol(name=p, metadata=SUBSCRIPTION) for p in protocols],
    )


def sync(
    group: str,
    member_id: str,
    generation: int = 1,
    *,
    protocol_type: str | None = "consumer",
    protocol_name: str | None = "range",
    assignment: bytes | None = None,
) -> SyncGroupRequest:
    return SyncGroupRequest(
        group_id=group,
        generation_id=generation,
        member_id=member_id,
        protocol_type=protocol_type,
        protocol_name=protocol_name,
        assignments=[]
        if assignment is None
        else [SyncGroupRequestAssignment(member_id=member_id, assignment=assignment)],
    )


def commit(
    group: str,
    *partitions: tuple[str, int],
    generation: int = -1,
    member_id: str = "",
    offset: int = 10,
    leader_epoch: int = -1,
    metadata: str | None = "",
) -> OffsetCommitRequest:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=generation,
        member_id=member_id,
        topics=[
            OffsetCommitRequestTopic(
                name=topic,
                partitions=[
                    OffsetCommitRequestPartition(
                        partition_index=p,
                        committed_offset=offset,
                        committed_leader_epoch=leader_epoch,
                        committed_metadata=metadata,
                    )
                    for p in ps
                ],
            )
            for topic, ps in by_topic.items()
        ],
    )


def fetch_offsets(group: str, *partitions: tuple[str, int], all_topics: bool = False) -> OffsetFetchRequest:
    """v1-7 form (and the same group as v8+'s only group)."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return OffsetFetchRequest(
        group_id=group,
        topics=None
        if all_topics
        else [OffsetFetchRequestTopic(name=t, partition_indexes=ps) for t, ps in by_topic.items()],  # type: ignore[arg-type]
        groups=[
            OffsetFetchRequestGroup(
                group_id=group,
                topics=None  # type: ignore[arg-type]
                if all_topics
                else [OffsetFetchRequestTopics(name=t, partition_indexes=ps) for t, ps in by_topic.items()],
            )
        ],
    )


def delete_offsets(group: str, *partitions: tuple[str, int]) -> OffsetDeleteRequest:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return OffsetDeleteRequest(
        group_id=group,
        topics=[
            OffsetDeleteRequestTopic(
                name=t, partitions=[OffsetDeleteRequestPartition(partition_index=p) for p in ps]
            )
            for t, ps in by_topic.items()
        ],
    )


def leave(group: str, *members: str, instance_ids: tuple[str | None, ...] = ()) -> LeaveGroupRequest:
    """v0-2 send the first member in `member_id`, v3+ every member in `members`."""
    return LeaveGroupRequest(
        group_id=group,
        member_id=members[0] if members else "",
        members=[
            MemberIdentity(member_id=m, group_instance_id=instance_ids[i] if i < len(instance_ids) else None)
            for i, m in enumerate(members)
        ],
    )


# ---- the groups every row starts from ---------------------------------------------------------------------------


@dataclass
class Groups:
    broker: Broker
    member_id: str
    connect_member_id: str

    def resolve(self, value: Any) -> Any:
        return substituted(value, {MEMBER: self.member_id, CONNECT_MEMBER: self.connect_member_id})


async def stable_member(broker: Broker, group: str, protocol_type: str) -> str:
    """A member alone in `group`, joined (v5: MEMBER_ID_REQUIRED first) and synced: the group is Stable."""
    required = await wire_call(broker, join(group, protocol_type=protocol_type), 5)
    assert required.error_code == E.MEMBER_ID_REQUIRED
    joined = await wire_call(broker, join(group, required.member_id, protocol_type=protocol_type), 5)
    assert (joined.error_code, joined.generation_id, joined.leader) == (E.NONE, 1, required.member_id)
    synced = await wire_call(
        broker, sync(group, joined.member_id, protocol_type=protocol_type, assignment=ASSIGNMENT), 5
    )
    assert (synced.error_code, synced.assignment) == (E.NONE, ASSIGNMENT)
    member_id: str = joined.member_id
    return member_id


@pytest.fixture
async def groups(tmp_path: Path) -> AsyncIterator[Groups]:
    async with started(tmp_path, Setup(), {T: (2, {}), U: (1, {})}) as broker:
        member_id = await stable_member(broker, STABLE, "consumer")
        connect_member_id = await stable_member(broker, CONNECT, "connect")
        offset, epoch, metadata = COMMITTED
        committed = await wire_call(
            broker, commit(OFFSETS_ONLY, (T, 0), offset=offset, leader_epoch=epoch, metadata=metadata), 8
        )
        assert committed.topics[0].partitions[0].error_code == E.NONE
        yield Groups(broker, member_id, connect_member_id)


# ---- each response as a row -------------------------------------------------------------------------------------


def joined(r: JoinGroupResponse) -> dict[str, Any]:
    return {
        "error": r.error_code,
        "generation": r.generation_id,
        "protocol_type": r.protocol_type,
        "protocol_name": r.protocol_name,
        "member_id": r.member_id,
        "member_id_given": r.member_id != "",
        "leads": r.member_id != "" and r.leader == r.member_id,
        "members": len(r.members),
        "skip_assignment": r.skip_assignment,
    }


def synced(r: SyncGroupResponse) -> dict[str, Any]:
    return {
        "error": r.error_code,
        "assignment": r.assignment,
        "protocol_type": r.protocol_type,
        "protocol_name": r.protocol_name,
    }


def heartbeat_view(r: HeartbeatResponse) -> dict[str, Any]:
    return {"error": r.error_code}


def left(r: LeaveGroupResponse) -> dict[str, Any]:
    return {
        "error": r.error_code,
        "members": [(m.member_id, m.group_instance_id, m.error_code) for m in r.members],
    }


def committed_view(r: OffsetCommitResponse) -> dict[str, Any]:
    return {
        "topics": [t.name for t in r.topics],
        "partitions": [(t.name, p.partition_index, p.error_code) for t in r.topics for p in t.partitions],
    }


def offset_rows(topics: Sequence[Any]) -> list[tuple[str, int, int, int, str | None, int]]:
    """(topic, partition, offset, leader epoch, metadata, error) of each partition of an OffsetFetch answer."""
    return [
        (t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch, p.metadata, p.error_code)
        for t in topics
        for p in t.partitions
    ]


def fetched_offsets(r: OffsetFetchResponse) -> dict[str, Any]:
    return {
        "error": r.error_code,
        "partitions": offset_rows(r.topics),
        "groups": [(g.group_id, g.error_code, offset_rows(g.topics)) for g in r.groups],
    }


def offsets_deleted(r: OffsetDeleteResponse) -> dict[str, Any]:
    return {
        "error": r.error_code,
        "partitions": [(t.name, p.partition_index, p.error_code) for t in r.topics for p in t.partitions],
    }


def groups_deleted(r: DeleteGroupsResponse) -> dict[str, Any]:
    return {"results": [(g.group_id, g.error_code) for g in r.results]}


def groups_described(r: DescribeGroupsResponse) -> dict[str, Any]:
    return {
        "groups": [
            (g.group_id, g.error_code, g.group_state, g.protocol_type, g.protocol_data) for g in r.groups
        ],
        "members": [
            [
                (
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    bytes(m.member_metadata),
                    bytes(m.member_assignment),
                )
                for m in g.members
            ]
            for g in r.groups
        ],
    }


def groups_listed(r: ListGroupsResponse) -> dict[str, Any]:
    return {
        "error": r.error_code,
        "groups": sorted((g.group_id, g.protocol_type, g.group_state, g.group_type) for g in r.groups),
    }


def coordinator_found(r: FindCoordinatorResponse) -> dict[str, Any]:
    return {
        "error": r.error_code,
        "node": (r.node_id, r.port),
        "coordinators": [(c.key, c.error_code, c.node_id, c.port) for c in r.coordinators],
    }


VIEWS: dict[type, Callable[[Any], dict[str, Any]]] = {
    JoinGroupResponse: joined,
    SyncGroupResponse: synced,
    HeartbeatResponse: heartbeat_view,
    LeaveGroupResponse: left,
    OffsetCommitResponse: committed_view,
    OffsetFetchResponse: fetched_offsets,
    OffsetDeleteResponse: offsets_deleted,
    DeleteGroupsResponse: groups_deleted,
    DescribeGroupsResponse: groups_described,
    ListGroupsResponse: groups_listed,
    FindCoordinatorResponse: coordinator_found,
}


def after(broker: Broker) -> dict[str, Any]:
    """What a call left behind: the state of each group, and OFFSETS_ONLY's committed offset of T-0."""
    runtime = broker.services.groups
    state = {g: runtime.describe_group(g).state for g in (STABLE, CONNECT, OFFSETS_ONLY, NEW)}
    fetched = runtime.fetch_offsets(OFFSETS_ONLY, [(T, [0])])
    return {
        **{f"state_after:{g}": s for g, s in state.items()},
        "t0_after": fetched.partitions[0].offset if fetched.partitions else None,
    }


def view(response: Any) -> dict[str, Any]:
    return VIEWS[type(response)](response)


async def answer(broker: Broker, request: Any, version: int) -> dict[str, Any]:
    """The answer as a row, with what the call left behind (`after`)."""
    return {**view(await wire_call(broker, request, version)), **after(broker)}


async def check(groups: Groups, request: Any, version: int, expected: dict[str, Any]) -> None:
    broker = groups.broker

    def seen(response: Any) -> dict[str, Any]:
        return {**view(response), **after(broker)}

    await assert_answer(broker, groups.resolve(request), version, seen, groups.resolve(expected))


# ---- JoinGroup (v0-9) -------------------------------------------------------------------------------------------

JOINED_NEW = {"error": E.NONE, "generation": 1, "protocol_name": "range", "leads": True, "members": 1}

JOIN_GROUP_CASES = [
    pytest.param(
        join(NEW),
        4,
        {
            "error": E.MEMBER_ID_REQUIRED,
            "member_id_given": True,
            "generation": -1,
            "state_after:new": "Empty",
        },
        id="v4-new-member-gets-an-id-to-rejoin-with",
    ),
    pytest.param(
        join(NEW),
        5,
        {"error": E.MEMBER_ID_REQUIRED, "protocol_name": ""},
        id="v5-error-has-an-empty-protocol-name",
    ),
    pytest.param(
        join(NEW), 7, {"error": E.MEMBER_ID_REQUIRED, "protocol_name": None}, id="v7-error-has-a-null-one"
    ),
    pytest.param(
        join(NEW), 3, {**JOINED_NEW, "state_after:new": "CompletingRebalance"}, id="v3-joins-at-once"
    ),
    pytest.param(join(NEW), 0, JOINED_NEW, id="v0-joins-at-once"),
    pytest.param(
        join(NEW, group_instance_id="instance-1"),
        5,
        {**JOINED_NEW, "member_id_given": True},
        id="v5-static-member-joins-at-once",
    ),
    pytest.param(
        join(NEW, group_instance_id="instance-1"),
        4,
        {"error": E.MEMBER_ID_REQUIRED},
        id="v4-has-no-group-instance-id",
    ),
    pytest.param(
        join(NEW, group_instance_id="instance-1"),
        7,
        {**JOINED_NEW, "protocol_type": "consumer"},
        id="v7-answers-the-protocol-type",
    ),
    pytest.param(
        join(NEW, group_instance_id="instance-1"), 6, {**JOINED_NEW, "protocol_type": None}, id="v6-does-not"
    ),
    pytest.param(
        join(STABLE, MEMBER),
        5,
        {
            "error": E.NONE,
            "generation": 2,
            "leads": True,
            "members": 1,
            "state_after:stable": "CompletingRebalance",
        },
        id="the-leader-rejoining-starts-a-generation",
    ),
    pytest.param(
        join(STABLE, "not-a-member"),
        5,
        {"error": E.UNKNOWN_MEMBER_ID, "member_id": "not-a-member", "state_after:stable": "Stable"},
        id="unknown-member-id",
    ),
    pytest.param(
        join(STABLE, protocol_type="connect"),
        5,
        {"error": E.INCONSISTENT_GROUP_PROTOCOL, "state_after:stable": "Stable"},
        id="another-protocol-type",
    ),
    pytest.param(
        join(STABLE, protocols=("roundrobin",)),
        3,
        {"error": E.INCONSISTENT_GROUP_PROTOCOL},
        id="no-protocol-in-common",
    ),
    pytest.param(
        join(NEW, protocols=()), 5, {"error": E.INCONSISTENT_GROUP_PROTOCOL}, id="no-protocol-at-all"
    ),
    pytest.param(join(""), 5, {"error": E.INVALID_GROUP_ID, "generation": -1}, id="empty-group-id"),
    pytest.param(
        join(NEW, session_timeout_ms=5999),
        5,
        {"error": E.INVALID_SESSION_TIMEOUT},
        id="session-below-the-minimum",
    ),
    pytest.param(
        join(NEW, session_timeout_ms=1_800_001),
        5,
        {"error": E.INVALID_SESSION_TIMEOUT},
        id="session-above-maximum",
    ),
]


# ---- SyncGroup (v0-5) -------------------------------------------------------------------------------------------

SYNC_GROUP_CASES = [
    pytest.param(
        sync(STABLE, MEMBER),
        5,
        {"error": E.NONE, "assignment": ASSIGNMENT, "protocol_type": "consumer", "protocol_name": "range"},
        id="v5-answers-the-protocol",
    ),
    pytest.param(
        sync(STABLE, MEMBER),
        4,
        {"error": E.NONE, "assignment": ASSIGNMENT, "protocol_type": None, "protocol_name": None},
        id="v4-only-the-assignment",
    ),
    pytest.param(sync(STABLE, MEMBER), 0, {"error": E.NONE, "assignment": ASSIGNMENT}, id="v0"),
    pytest.param(
        sync(STABLE, MEMBER, protocol_type=None),
        5,
        {"error": E.INCONSISTENT_GROUP_PROTOCOL, "assignment": b""},
        id="v5-without-protocol-type",
    ),
    pytest.param(
        sync(STABLE, MEMBER, protocol_name=None),
        5,
        {"error": E.INCONSISTENT_GROUP_PROTOCOL},
        id="v5-without-protocol-name",
    ),
    pytest.param(
        sync(STABLE, MEMBER, protocol_name="roundrobin"),
        5,
        {"error": E.INCONSISTENT_GROUP_PROTOCOL},
        id="v5-another-protocol-name",
    ),
    pytest.param(
        sync(STABLE, MEMBER, protocol_type=None, protocol_name=None),
        4,
        {"error": E.NONE, "assignment": ASSIGNMENT},
        id="v4-has-no-protocol-fields",
    ),
    pytest.param(sync(STABLE, MEMBER, 2), 5, {"error": E.ILLEGAL_GENERATION}, id="another-generation"),
    pytest.param(sync(STABLE, "not-a-member"), 5, {"error": E.UNKNOWN_MEMBER_ID}, id="unknown-member"),
    pytest.param(sync(NEW, "not-a-member"), 5, {"error": E.UNKNOWN_MEMBER_ID}, id="unknown-group"),
    pytest.param(sync("", MEMBER), 5, {"error": E.INVALID_GROUP_ID}, id="empty-group-id"),
]


# ---- Heartbeat (v0-4) -------------------------------------------------------------------------------------------


def heartbeat(
    group: str, member_id: str, generation: int = 1, instance: str | None = None
) -> HeartbeatRequest:
    return HeartbeatRequest(
        group_id=group, generation_id=generation, member_id=member_id, group_instance_id=instance
    )


HEARTBEAT_CASES = [
    pytest.param(heartbeat(STABLE, MEMBER), 4, {"error": E.NONE}, id="member-of-the-generation"),
    pytest.param(heartbeat(STABLE, MEMBER), 0, {"error": E.NONE}, id="v0"),
    pytest.param(heartbeat(STABLE, MEMBER, 2), 4, {"error": E.ILLEGAL_GENERATION}, id="another-generation"),
    pytest.param(heartbeat(STABLE, "not-a-member"), 4, {"error": E.UNKNOWN_MEMBER_ID}, id="unknown-member"),
    pytest.param(heartbeat(NEW, "not-a-member"), 4, {"error": E.UNKNOWN_MEMBER_ID}, id="unknown-group"),
    pytest.param(
        heartbeat(OFFSETS_ONLY, "", -1), 4, {"error": E.UNKNOWN_MEMBER_ID}, id="group-without-members"
    ),
    pytest.param(heartbeat("", MEMBER), 4, {"error": E.INVALID_GROUP_ID}, id="empty-group-id"),
]


# ---- LeaveGroup (v0-5) ------------------------------------------------------------------------------------------

LEAVE_GROUP_CASES = [
    pytest.param(
        leave(STABLE, MEMBER),
        0,
        {"error": E.NONE, "members": [], "state_after:stable": "Empty"},
        id="v0-the-member-leaves",
    ),
    pytest.param(
        leave(STABLE, "not-a-member"),
        2,
        {"error": E.UNKNOWN_MEMBER_ID, "members": [], "state_after:stable": "Stable"},
        id="v2-member-error-at-the-top",
    ),
    pytest.param(leave(NEW, "not-a-member"), 1, {"error": E.UNKNOWN_MEMBER_ID}, id="v1-unknown-group"),
    pytest.param(
        leave(STABLE, MEMBER, "not-a-member"),
        3,
        {
            "error": E.NONE,
            "members": [(MEMBER, None, E.NONE), ("not-a-member", None, E.UNKNOWN_MEMBER_ID)],
            "state_after:stable": "Empty",
        },
        id="v3-an-error-per-member",
    ),
    pytest.param(
        leave(NEW, "not-a-member"),
        3,
        {"error": E.NONE, "members": [("not-a-member", None, E.UNKNOWN_MEMBER_ID)]},
        id="v3-unknown-group",
    ),
    pytest.param(
        leave(STABLE, "", instance_ids=("no-such-instance",)),
        4,
        {"error": E.NONE, "members": [("", "no-such-instance", E.UNKNOWN_MEMBER_ID)]},
        id="v4-unknown-static-member",
    ),
    pytest.param(leave("", MEMBER), 0, {"error": E.INVALID_GROUP_ID}, id="v0-empty-group-id"),
    pytest.param(leave("", MEMBER), 5, {"error": E.INVALID_GROUP_ID, "members": []}, id="v5-empty-group-id"),
]


# ---- OffsetCommit (v2-9) ----------------------------------------------------------------------------------------

OFFSET_COMMIT_CASES = [
    pytest.param(
        commit(NEW, (T, 0), (T, 1)),
        8,
        {"partitions": [(T, 0, E.NONE), (T, 1, E.NONE)], "state_after:new": "Empty"},
        id="from-outside-a-new-group",
    ),
    pytest.param(
        commit(OFFSETS_ONLY, (T, 0), offset=50), 2, {"partitions": [(T, 0, E.NONE)], "t0_after": 50}, id="v2"
    ),
    pytest.param(
        commit(STABLE, (T, 0), generation=1, member_id=MEMBER),
        9,
        {"partitions": [(T, 0, E.NONE)]},
        id="v9-member",
    ),
    pytest.param(
        commit(STABLE, (T, 0), generation=2, member_id=MEMBER),
        8,
        {"partitions": [(T, 0, E.ILLEGAL_GENERATION)]},
        id="another-generation",
    ),
    pytest.param(
        commit(STABLE, (T, 0), generation=1, member_id="not-a-member"),
        8,
        {"partitions": [(T, 0, E.UNKNOWN_MEMBER_ID)]},
        id="unknown-member",
    ),
    pytest.param(
        commit(STABLE, (T, 0)),
        8,
        {"partitions": [(T, 0, E.UNKNOWN_MEMBER_ID)]},
        id="from-outside-a-group-with-members",
    ),
    pytest.param(
        commit(NEW, (T, 0), generation=1, member_id="gone"),
        8,
        {"partitions": [(T, 0, E.ILLEGAL_GENERATION)], "state_after:new": "Dead"},
        id="v8-member-of-a-group-that-is-gone",
    ),
    pytest.param(
        commit(NEW, (T, 0), generation=1, member_id="gone"),
        9,
        {"partitions": [(T, 0, E.GROUP_ID_NOT_FOUND)]},
        id="v9-member-of-a-group-that-is-gone",
        marks=kafka_differs(
            "kbroker answers ILLEGAL_GENERATION at v9 too, Kafka GROUP_ID_NOT_FOUND from v9 (KIP-848 group "
            "coordinator, OffsetMetadataManager.validateOffsetCommit: ILLEGAL_GENERATION only below v9)"
        ),
    ),
    pytest.param(
        commit(OFFSETS_ONLY, ("nope", 0), (T, 5), (T, 1)),
        8,
        {
            # As Kafka orders them: the partitions refused as unknown first, then the coordinator's answers.
            "partitions": [
                ("nope", 0, E.UNKNOWN_TOPIC_OR_PARTITION),
                (T, 5, E.UNKNOWN_TOPIC_OR_PARTITION),
                (T, 1, E.NONE),
            ],
            "topics": ["nope", T],
        },
        id="unknown-topic-and-partition",
    ),
    pytest.param(
        commit(OFFSETS_ONLY, (T, 0), metadata="m" * 4097),
        8,
        {"partitions": [(T, 0, E.OFFSET_METADATA_TOO_LARGE)], "t0_after": COMMITTED[0]},
        id="metadata-too-large",
    ),
    pytest.param(commit("", (T, 0)), 8, {"partitions": [(T, 0, E.NONE)]}, id="empty-group-id-stores-offsets"),
]


@pytest.mark.trio
async def test_offset_commit_answers_a_topic_named_twice_once(groups: Groups) -> None:
    request = commit(OFFSETS_ONLY, (T, 0))
    request.topics.append(
        OffsetCommitRequestTopic(name=T, partitions=[OffsetCommitRequestPartition(partition_index=1)])
    )
    row = await answer(groups.broker, request, 8)
    assert (row["topics"], row["partitions"]) == ([T], [(T, 0, E.NONE), (T, 1, E.NONE)])


# What a commit at one version stores, read back at another: (offset, leader epoch, metadata).
COMMIT_THEN_FETCH_CASES = [
    pytest.param(8, 8, "meta", (10, 7, "meta"), id="v8-stores-the-leader-epoch"),
    pytest.param(6, 5, "meta", (10, 7, "meta"), id="v6-stores-it-v5-reads-it"),
    pytest.param(5, 8, "meta", (10, -1, "meta"), id="v5-has-no-leader-epoch"),
    pytest.param(8, 4, "meta", (10, -1, "meta"), id="v4-reads-no-leader-epoch"),
    pytest.param(8, 8, None, (10, 7, ""), id="null-metadata-reads-empty"),
]


@pytest.mark.trio
@pytest.mark.parametrize(("commit_version", "fetch_version", "metadata", "expected"), COMMIT_THEN_FETCH_CASES)
async def test_offset_commit_then_fetch(
    groups: Groups,
    commit_version: int,
    fetch_version: int,
    metadata: str | None,
    expected: tuple[int, int, str],
) -> None:
    committed = await answer(
        groups.broker, commit(NEW, (T, 1), leader_epoch=7, metadata=metadata), commit_version
    )
    assert committed["partitions"] == [(T, 1, E.NONE)]
    row = await answer(groups.broker, fetch_offsets(NEW, (T, 1)), fetch_version)
    found = row["groups"][0][2] if fetch_version >= 8 else row["partitions"]
    assert found == [(T, 1, *expected, E.NONE)]


# ---- OffsetFetch (v1-9) -----------------------------------------------------------------------------------------
OFFSET, EPOCH, METADATA = COMMITTED
T0 = (T, 0, OFFSET, EPOCH, METADATA, E.NONE)
T0_NO_EPOCH = (T, 0, OFFSET, -1, METADATA, E.NONE)
T1_NONE = (T, 1, -1, -1, "", E.NONE)

OFFSET_FETCH_CASES = [
    pytest.param(
        fetch_offsets(OFFSETS_ONLY, (T, 0), (T, 1)),
        1,
        {"partitions": [T0_NO_EPOCH, T1_NONE]},
        id="v1-no-leader-epoch",
    ),
    pytest.param(
        fetch_offsets(OFFSETS_ONLY, (T, 0), (T, 1)),
        5,
        {"error": E.NONE, "partitions": [T0, T1_NONE], "groups": []},
        id="v5-leader-epoch",
    ),
    pytest.param(
        fetch_offsets(OFFSETS_ONLY, all_topics=True), 2, {"partitions": [T0_NO_EPOCH]}, id="v2-null-means-all"
    ),
    pytest.param(
        fetch_offsets(NEW, (T, 0)),
        7,
        {"error": E.NONE, "partitions": [(T, 0, -1, -1, "", E.NONE)]},
        id="unknown-group",
    ),
    pytest.param(
        fetch_offsets(OFFSETS_ONLY, ("nope", 0)),
        7,
        {"partitions": [("nope", 0, -1, -1, "", E.NONE)]},
        id="unknown-topic",
    ),
    pytest.param(
        fetch_offsets(STABLE, (T, 0)),
        7,
        {"error": E.NONE, "partitions": [(T, 0, -1, -1, "", E.NONE)]},
        id="stable-group-without-offsets",
    ),
    pytest.param(
        fetch_offsets(OFFSETS_ONLY, (T, 0)),
        8,
        {"error": E.NONE, "partitions": [], "groups": [(OFFSETS_ONLY, E.NONE, [T0])]},
        id="v8-groups",
    ),
    pytest.param(
        fetch_offsets(OFFSETS_ONLY, all_topics=True),
        9,
        {"groups": [(OFFSETS_ONLY, E.NONE, [T0])]},
        id="v9-null-means-all",
    ),
    pytest.param(
        fetch_offsets("", (T, 0)), 1, {"partitions": [(T, 0, -1, -1, "", E.NONE)]}, id="empty-group-id"
    ),
]


@pytest.mark.trio
async def test_offset_fetch_v8_answers_each_group(groups: Groups) -> None:
    request = OffsetFetchRequest(
        groups=[
            OffsetFetchRequestGroup(
                group_id=NEW, topics=[OffsetFetchRequestTopics(name=T, partition_indexes=[0])]
            ),
            OffsetFetchRequestGroup(group_id=OFFSETS_ONLY, topics=None),  # type: ignore[arg-type]
        ]
    )
    row = await answer(groups.broker, request, 8)
    assert row["groups"] == [(NEW, E.NONE, [(T, 0, -1, -1, "", E.NONE)]), (OFFSETS_ONLY, E.NONE, [T0])]


# ---- OffsetDelete (v0) ------------------------------------------------------------------------------------------

OFFSET_DELETE_CASES = [
    pytest.param(
        delete_offsets(OFFSETS_ONLY, (T, 0)),
        0,
        {"error": E.NONE, "partitions": [(T, 0, E.NONE)], "t0_after": -1},
        id="group-without-members",
    ),
    pytest.param(
        delete_offsets(STABLE, (T, 0), (U, 0)),
        0,
        {"error": E.NONE, "partitions": [(T, 0, E.GROUP_SUBSCRIBED_TO_TOPIC), (U, 0, E.NONE)]},
        id="consumer-group-keeps-what-it-consumes",
    ),
    pytest.param(
        delete_offsets(CONNECT, (U, 0)),
        0,
        {"error": E.NON_EMPTY_GROUP, "partitions": []},
        id="members-of-an-unknown-protocol",
    ),
    pytest.param(
        delete_offsets(OFFSETS_ONLY, ("nope", 0), (T, 5)),
        0,
        {
            "error": E.NONE,
            "partitions": [("nope", 0, E.UNKNOWN_TOPIC_OR_PARTITION), (T, 5, E.UNKNOWN_TOPIC_OR_PARTITION)],
        },
        id="unknown-topic-and-partition",
    ),
    pytest.param(
        delete_offsets(NEW, (T, 0)), 0, {"error": E.GROUP_ID_NOT_FOUND, "partitions": []}, id="unknown-group"
    ),
    pytest.param(
        delete_offsets("", (T, 0)),
        0,
        {"error": E.INVALID_GROUP_ID, "partitions": []},
        id="empty-group-id",
    ),
]


# ---- DeleteGroups (v0-2) ----------------------------------------------------------------------------------------

DELETE_GROUPS_CASES = [
    pytest.param(
        DeleteGroupsRequest(groups_names=[OFFSETS_ONLY]),
        2,
        {"results": [(OFFSETS_ONLY, E.NONE)], "state_after:offsets-only": "Dead", "t0_after": -1},
        id="group-without-members-and-its-offsets",
    ),
    pytest.param(
        DeleteGroupsRequest(groups_names=[STABLE, NEW, OFFSETS_ONLY]),
        0,
        {
            "results": [(STABLE, E.NON_EMPTY_GROUP), (NEW, E.GROUP_ID_NOT_FOUND), (OFFSETS_ONLY, E.NONE)],
            "state_after:stable": "Stable",
        },
        id="v0-an-error-per-group",
    ),
    pytest.param(
        DeleteGroupsRequest(groups_names=[OFFSETS_ONLY, OFFSETS_ONLY]),
        2,
        {"results": [(OFFSETS_ONLY, E.NONE)]},
        id="a-group-named-twice-is-answered-once",
    ),
    pytest.param(
        DeleteGroupsRequest(groups_names=[""]), 2, {"results": [("", E.GROUP_ID_NOT_FOUND)]}, id="empty-id"
    ),
]


# ---- DescribeGroups (v0-5) --------------------------------------------------------------------------------------

STABLE_MEMBER = (MEMBER, None, CLIENT_ID, CLIENT_HOST, SUBSCRIPTION, ASSIGNMENT)

DESCRIBE_GROUPS_CASES = [
    pytest.param(
        DescribeGroupsRequest(groups=[STABLE]),
        5,
        {"groups": [(STABLE, E.NONE, "Stable", "consumer", "range")], "members": [[STABLE_MEMBER]]},
        id="stable-group-and-its-member",
    ),
    pytest.param(
        DescribeGroupsRequest(groups=[OFFSETS_ONLY, NEW, ""]),
        0,
        {
            "groups": [
                (OFFSETS_ONLY, E.NONE, "Empty", "", ""),
                (NEW, E.NONE, "Dead", "", ""),
                ("", E.NONE, "Dead", "", ""),
            ],
            "members": [[], [], []],
        },
        id="v0-empty-unknown-and-empty-id",
    ),
    pytest.param(
        DescribeGroupsRequest(groups=[CONNECT, STABLE]),
        3,
        {
            "groups": [
                (CONNECT, E.NONE, "Stable", "connect", "range"),
                (STABLE, E.NONE, "Stable", "consumer", "range"),
            ],
            "members": [
                [(CONNECT_MEMBER, None, CLIENT_ID, CLIENT_HOST, SUBSCRIPTION, ASSIGNMENT)],
                [STABLE_MEMBER],
            ],
        },
        id="v3-each-group-in-request-order",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("version", "instance_id"), [(3, None), (4, "instance-1"), (5, "instance-1")])
async def test_describe_groups_names_a_static_member_from_v4(
    groups: Groups, version: int, instance_id: str | None
) -> None:
    joined_static = await wire_call(groups.broker, join(NEW, group_instance_id="instance-1"), 5)
    assert joined_static.error_code == E.NONE
    row = await answer(groups.broker, DescribeGroupsRequest(groups=[NEW]), version)
    ((member,),) = row["members"]
    assert member[:2] == (joined_static.member_id, instance_id)


# ---- ListGroups (v0-5) ------------------------------------------------------------------------------------------
EVERY_GROUP_V0 = [(CONNECT, "connect", "", ""), (OFFSETS_ONLY, "", "", ""), (STABLE, "consumer", "", "")]
STABLE_V5 = (STABLE, "consumer", "Stable", "classic")
CONNECT_V5 = (CONNECT, "connect", "Stable", "classic")
OFFSETS_ONLY_V5 = (OFFSETS_ONLY, "", "Empty", "classic")

LIST_GROUPS_CASES = [
    pytest.param(ListGroupsRequest(), 0, {"error": E.NONE, "groups": EVERY_GROUP_V0}, id="v0-every-group"),
    pytest.param(
        ListGroupsRequest(states_filter=["Stable"]),
        4,
        {"groups": [(CONNECT, "connect", "Stable", ""), (STABLE, "consumer", "Stable", "")]},
        id="v4-states",
    ),
    pytest.param(
        ListGroupsRequest(states_filter=["empty"]), 5, {"groups": [OFFSETS_ONLY_V5]}, id="states-ignore-case"
    ),
    pytest.param(
        ListGroupsRequest(states_filter=["Stable"]), 3, {"groups": EVERY_GROUP_V0}, id="v3-has-no-filter"
    ),
    pytest.param(
        ListGroupsRequest(types_filter=["classic"]),
        5,
        {"groups": [CONNECT_V5, OFFSETS_ONLY_V5, STABLE_V5]},
        id="v5-types",
    ),
    pytest.param(ListGroupsRequest(types_filter=["consumer"]), 5, {"groups": []}, id="v5-no-kip-848-groups"),
    pytest.param(
        ListGroupsRequest(states_filter=["Stable"], types_filter=["Classic"]),
        5,
        {"groups": [CONNECT_V5, STABLE_V5]},
        id="both-filters",
    ),
]


def named(api: str, cases: Sequence[Any]) -> list[Any]:
    """The rows of one API's table, their ids prefixed with the API's name."""
    return [pytest.param(*case.values, marks=case.marks, id=f"{api}-{case.id}") for case in cases]


GROUP_API_CASES = [
    *named("join", JOIN_GROUP_CASES),
    *named("sync", SYNC_GROUP_CASES),
    *named("heartbeat", HEARTBEAT_CASES),
    *named("leave", LEAVE_GROUP_CASES),
    *named("commit", OFFSET_COMMIT_CASES),
    *named("fetch", OFFSET_FETCH_CASES),
    *named("delete-offsets", OFFSET_DELETE_CASES),
    *named("delete", DELETE_GROUPS_CASES),
    *named("describe", DESCRIBE_GROUPS_CASES),
    *named("list", LIST_GROUPS_CASES),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), GROUP_API_CASES)
async def test_group_api(groups: Groups, request_: Any, version: int, expected: dict[str, Any]) -> None:
    await check(groups, request_, version, expected)


# ---- where each API and version puts NOT_COORDINATOR -----------------------------------------------------------
MOVED_PARTITION = 2


def moved_group() -> str:
    """A group id whose `__consumer_offsets` partition is MOVED_PARTITION."""
    return next(
        g
        for g in (f"moved-{i}" for i in range(10_000))
        if partition_for(g, OFFSETS_PARTITIONS) == MOVED_PARTITION
    )


MOVED = moved_group()


@pytest.fixture
async def moved(tmp_path: Path) -> AsyncIterator[Groups]:
    """MOVED's coordinator is broker OTHER: the partition's only replica is there, so this node holds none."""
    async with started(tmp_path, Setup(two_brokers=True), {T: (2, {})}) as broker:
        metadata = broker.metadata
        assert isinstance(metadata, MemoryMetadata)
        metadata.set_partition(
            TopicPartition(OFFSETS_TOPIC, MOVED_PARTITION), leader=OTHER, isr=(OTHER,), replicas=(OTHER,)
        )
        await wait_until(lambda: not broker.groups.owns(MOVED_PARTITION))
        yield Groups(broker, "a-member", "")


NOT_COORDINATOR_CASES = [
    pytest.param(
        FindCoordinatorRequest(key=MOVED),
        3,
        {"error": E.NONE, "node": (OTHER, 9)},
        id="find-coordinator-names-it",
    ),
    pytest.param(
        join(MOVED, "a-member"),
        5,
        {"error": E.NOT_COORDINATOR, "member_id": "a-member", "generation": -1, "protocol_name": ""},
        id="join-v5",
    ),
    pytest.param(join(MOVED), 7, {"error": E.NOT_COORDINATOR, "protocol_name": None}, id="join-v7"),
    pytest.param(sync(MOVED, "a-member"), 5, {"error": E.NOT_COORDINATOR}, id="sync"),
    pytest.param(heartbeat(MOVED, "a-member"), 4, {"error": E.NOT_COORDINATOR}, id="heartbeat"),
    pytest.param(leave(MOVED, "a-member"), 2, {"error": E.NOT_COORDINATOR}, id="leave-v2"),
    pytest.param(
        leave(MOVED, "a-member"), 3, {"error": E.NOT_COORDINATOR, "members": []}, id="leave-v3-at-the-top"
    ),
    pytest.param(
        commit(MOVED, (T, 0), (T, 1)),
        8,
        {"partitions": [(T, 0, E.NOT_COORDINATOR), (T, 1, E.NOT_COORDINATOR)]},
        id="commit-in-every-partition",
    ),
    pytest.param(
        fetch_offsets(MOVED, (T, 0), (T, 1)),
        1,
        {"partitions": [(T, 0, -1, -1, "", E.NOT_COORDINATOR), (T, 1, -1, -1, "", E.NOT_COORDINATOR)]},
        id="fetch-offsets-v1-in-every-partition",
    ),
    pytest.param(
        fetch_offsets(MOVED, (T, 0)),
        2,
        {"error": E.NOT_COORDINATOR, "partitions": []},
        id="fetch-offsets-v2-at-the-top",
    ),
    pytest.param(
        fetch_offsets(MOVED, (T, 0)),
        8,
        {"error": E.NONE, "groups": [(MOVED, E.NOT_COORDINATOR, [])]},
        id="fetch-offsets-v8-in-the-group",
    ),
    pytest.param(
        delete_offsets(MOVED, (T, 0)), 0, {"error": E.NOT_COORDINATOR, "partitions": []}, id="delete-offsets"
    ),
    pytest.param(
        DeleteGroupsRequest(groups_names=[MOVED]), 2, {"results": [(MOVED, E.NOT_COORDINATOR)]}, id="delete"
    ),
    pytest.param(
        DescribeGroupsRequest(groups=[MOVED]),
        5,
        {"groups": [(MOVED, E.NOT_COORDINATOR, "", "", "")]},
        id="describe",
    ),
]


@pytest.mark.trio
@pytest.mark.parametrize(("request_", "version", "expected"), NOT_COORDINATOR_CASES)
async def test_not_coordinator(moved: Groups, request_: Any, version: int, expected: dict[str, Any]) -> None:
    await assert_answer(moved.broker, request_, version, view, expected)


@pytest.mark.trio
async def test_list_groups_leaves_out_groups_coordinated_elsewhere(moved: Groups) -> None:
    here = next(
        g
        for g in (f"here-{i}" for i in range(1000))
        if partition_for(g, OFFSETS_PARTITIONS) != MOVED_PARTITION
    )
    for group in (here, MOVED):
        await wire_call(moved.broker, commit(group, (T, 0)), 8)
    row = groups_listed(await wire_call(moved.broker, ListGroupsRequest(), 5))
    assert row["groups"] == [(here, "", "Empty", "classic")]
