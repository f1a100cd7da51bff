"""Every group API at every advertised version, on the wire, against a real broker process.

A raw client (tests/test_groups_support.py `Wire`) sends exactly the fields each version has, so these tests pin the
version mapping of the handlers: which fields are read at which version, where errors go, what the old versions get
instead of the new fields. Real clients are in the other test_groups_*.py files.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol.errors import ErrorCode as E
from protocol.messages.api_versions_request import ApiVersionsRequest
from protocol.messages.delete_groups_request import DeleteGroupsRequest
from protocol.messages.describe_groups_request import DescribeGroupsRequest
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.heartbeat_request import HeartbeatRequest
from protocol.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.join_group_response import JoinGroupResponse
from protocol.messages.leave_group_request import LeaveGroupRequest, MemberIdentity
from protocol.messages.list_groups_request import ListGroupsRequest
from protocol.messages.offset_commit_request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.messages.offset_delete_request import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
)
from protocol.messages.offset_fetch_request import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from protocol.messages.sync_group_request import SyncGroupRequest, SyncGroupRequestAssignment
from tests.broker_process import BrokerProcess
from tests.conftest import register_broker
from tests.test_groups_support import (
    GROUP_OVERRIDES,
    Wire,
    assignment,
    create_topic,
    subscription,
    unique,
)

pytestmark = pytest.mark.timeout(60)

SESSION_MS = 6000


@pytest.fixture(scope="module")
def module_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    base: Path = tmp_path_factory.mktemp("groups-protocol")
    broker = BrokerProcess(base / "data", overrides=GROUP_OVERRIDES, log_path=base / "broker.log")
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def broker(request: pytest.FixtureRequest, module_broker: BrokerProcess) -> BrokerProcess:
    register_broker(request, module_broker)
    return module_broker


@pytest.fixture(scope="module")
def topic(module_broker: BrokerProcess) -> str:
    """Two partitions, so that commits can name an existing and a missing partition."""
    return create_topic(module_broker.bootstrap, 2)


@pytest.fixture
def wire(broker: BrokerProcess) -> Iterator[Wire]:
    with Wire(broker.bootstrap) as w:
        yield w


# ---- ApiVersions ---------------------------------------------------------------------------------------------------

GROUP_API_RANGES = {
    8: (2, 9),  # OffsetCommit (KIP-896 minimum)
    9: (1, 9),  # OffsetFetch (KIP-896 minimum)
    10: (0, 6),  # FindCoordinator
    11: (0, 9),  # JoinGroup
    12: (0, 4),  # Heartbeat
    13: (0, 5),  # LeaveGroup
    14: (0, 5),  # SyncGroup
    15: (0, 5),  # DescribeGroups
    16: (0, 5),  # ListGroups
    42: (0, 2),  # DeleteGroups
    47: (0, 0),  # OffsetDelete
}


def test_api_versions_advertises_the_group_apis(wire: Wire) -> None:
    response = wire.call(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
    advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    for key, versions in GROUP_API_RANGES.items():
        assert advertised.get(key) == versions, key
    # KIP-848 stays off: every client defaults to the classic protocol (PROTOCOL.md 2d).
    assert 68 not in advertised
    assert 69 not in advertised


# ---- FindCoordinator ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(7))
def test_find_coordinator_names_this_broker(broker: BrokerProcess, wire: Wire, version: int) -> None:
    if version >= 4:
        response = wire.call(FindCoordinatorRequest(key_type=0, coordinator_keys=["a", "b", ""]), version)
        assert [c.key for c in response.coordinators] == ["a", "b", ""]
        for c in response.coordinators:
            assert (c.error_code, c.node_id, c.host, c.port) == (E.NONE, 0, broker.host, broker.port)
        return
    response = wire.call(FindCoordinatorRequest(key="some-group"), version)
    assert (response.error_code, response.node_id, response.host, response.port) == (
        E.NONE,
        0,
        broker.host,
        broker.port,
    )


@pytest.mark.parametrize("version", [1, 3, 4, 6])
def test_find_coordinator_of_other_key_types(wire: Wire, version: int) -> None:
    # No share groups (2, as Kafka 3.9 answers them with share groups disabled: a malformed request before v6):
    # retriable COORDINATOR_NOT_AVAILABLE; anything else but transactions (tests/test_handlers_transactions.py):
    # INVALID_REQUEST.
    for key_type, error in [
        (2, E.COORDINATOR_NOT_AVAILABLE if version >= 6 else E.INVALID_REQUEST),
        (9, E.INVALID_REQUEST),
    ]:
        if version >= 4:
            response = wire.call(FindCoordinatorRequest(key_type=key_type, coordinator_keys=["x"]), version)
            (answer,) = response.coordinators
            assert (answer.error_code, answer.node_id, answer.port) == (error, -1, -1)
        else:
            response = wire.call(FindCoordinatorRequest(key="x", key_type=key_type), version)
            assert (response.error_code, response.node_id, response.port) == (error, -1, -1)


# ---- a whole group life cycle at each version ----------------------------------------------------------------------


def versions_for(join: int) -> dict[str, int]:
    """The versions one client generation uses together (a client at JoinGroup vN uses the matching others)."""
    return {
        "join": join,
        "sync": min(join, 5),
        "heartbeat": min(join, 4),
        "leave": min(join, 5),
        "commit": min(max(join, 2), 9),
        "fetch": min(max(join, 1), 9),
        "describe": min(join, 5),
        "list": min(join, 5),
        "delete": min(join, 2),
    }


def join(
    wire: Wire, version: int, group: str, topic: str, member_id: str = "", instance: str | None = None
) -> JoinGroupResponse:
    joined = wire.call(
        JoinGroupRequest(
            group_id=group,
            session_timeout_ms=SESSION_MS,
            rebalance_timeout_ms=10_000,
            member_id=member_id,
            group_instance_id=instance,
            protocol_type="consumer",
            protocols=[
                JoinGroupRequestProtocol(name="range", metadata=subscription(topic)),
                JoinGroupRequestProtocol(name="roundrobin", metadata=subscription(topic)),
            ],
            reason="test" if version >= 8 else None,
        ),
        version,
    )
    assert isinstance(joined, JoinGroupResponse)
    return joined


@pytest.mark.parametrize("join_version", range(10))
def test_group_life_cycle(wire: Wire, topic: str, join_version: int) -> None:
    v = versions_for(join_version)
    group = unique(f"lifecycle-v{join_version}")
    # Static membership where the versions have it (JoinGroup v5+, and then every other API carries the instance id).
    instance = f"instance-{join_version}" if join_version >= 5 else None

    joined = join(wire, v["join"], group, topic, instance=instance)
    if join_version >= 4 and instance is None:
        assert joined.error_code == E.MEMBER_ID_REQUIRED
        assert joined.member_id.startswith("groups-wire-")
        joined = join(wire, v["join"], group, topic, member_id=joined.member_id)
    assert joined.error_code == E.NONE
    member_id = joined.member_id
    if instance is not None:
        assert member_id.startswith(instance + "-")
    assert joined.generation_id == 1
    assert joined.protocol_name == "range"
    assert joined.protocol_type == ("consumer" if join_version >= 7 else None)
    assert joined.leader == member_id
    assert [(m.member_id, bytes(m.metadata)) for m in joined.members] == [(member_id, subscription(topic))]
    if join_version >= 5:
        assert joined.members[0].group_instance_id == instance

    mine = assignment(topic, [0, 1])
    synced = wire.call(
        SyncGroupRequest(
            group_id=group,
            generation_id=1,
            member_id=member_id,
            group_instance_id=instance,
            protocol_type="consumer",
            protocol_name="range",
            assignments=[SyncGroupRequestAssignment(member_id=member_id, assignment=mine)],
        ),
        v["sync"],
    )
    assert (synced.error_code, bytes(synced.assignment)) == (E.NONE, mine)
    if v["sync"] >= 5:
        assert (synced.protocol_type, synced.protocol_name) == ("consumer", "range")

    beat = wire.call(
        HeartbeatRequest(group_id=group, generation_id=1, member_id=member_id, group_instance_id=instance),
        v["heartbeat"],
    )
    assert beat.error_code == E.NONE

    committed = wire.call(
        OffsetCommitRequest(
            group_id=group,
            generation_id_or_member_epoch=1,
            member_id=member_id,
            group_instance_id=instance,
            retention_time_ms=-1,
            topics=[
                OffsetCommitRequestTopic(
                    name=topic,
                    partitions=[
                        OffsetCommitRequestPartition(
                            partition_index=0,
                            committed_offset=5,
                            committed_leader_epoch=3,
                            committed_metadata="m",
                        ),
                        OffsetCommitRequestPartition(
                            partition_index=1, committed_offset=7, committed_metadata=None
                        ),
                    ],
                )
            ],
        ),
        v["commit"],
    )
    assert [
        (t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in committed.topics
    ] == [(topic, [(0, E.NONE), (1, E.NONE)])]

    expected_epoch = 3 if v["commit"] >= 6 else -1
    assert fetch_offsets(wire, v["fetch"], group, topic, [0, 1]) == [
        (0, 5, expected_epoch if v["fetch"] >= 5 else -1, "m"),
        (1, 7, -1, ""),
    ]

    (described,) = wire.call(DescribeGroupsRequest(groups=[group]), v["describe"]).groups
    assert (
        described.error_code,
        described.group_state,
        described.protocol_type,
        described.protocol_data,
    ) == (
        E.NONE,
        "Stable",
        "consumer",
        "range",
    )
    (member,) = described.members
    assert (member.member_id, member.client_id, member.client_host) == (
        member_id,
        "groups-wire",
        wire.peer_host,
    )
    assert bytes(member.member_metadata) == subscription(topic)
    assert bytes(member.member_assignment) == mine
    if v["describe"] >= 4:
        assert member.group_instance_id == instance

    listed = wire.call(ListGroupsRequest(), v["list"])
    assert listed.error_code == E.NONE
    (entry,) = [g for g in listed.groups if g.group_id == group]
    assert entry.protocol_type == "consumer"
    if v["list"] >= 4:
        assert entry.group_state == "Stable"
    if v["list"] >= 5:
        assert entry.group_type == "classic"

    if v["leave"] >= 3:
        left = wire.call(
            LeaveGroupRequest(
                group_id=group, members=[MemberIdentity(member_id=member_id, group_instance_id=instance)]
            ),
            v["leave"],
        )
        assert left.error_code == E.NONE
        assert [(m.member_id, m.group_instance_id, m.error_code) for m in left.members] == [
            (member_id, instance, E.NONE)
        ]
    else:
        left = wire.call(LeaveGroupRequest(group_id=group, member_id=member_id), v["leave"])
        assert left.error_code == E.NONE

    (described,) = wire.call(DescribeGroupsRequest(groups=[group]), v["describe"]).groups
    assert (described.group_state, described.members) == ("Empty", [])
    # Still there: it has offsets. Deleting takes them too.
    deleted = wire.call(DeleteGroupsRequest(groups_names=[group]), v["delete"])
    assert [(r.group_id, r.error_code) for r in deleted.results] == [(group, E.NONE)]
    assert fetch_offsets(wire, v["fetch"], group, topic, [0, 1]) == [(0, -1, -1, ""), (1, -1, -1, "")]


def fetch_offsets(
    wire: Wire, version: int, group: str, topic: str | None, partitions: list[int]
) -> list[tuple[int, int, int, str | None]]:
    """(partition, offset, leader epoch, metadata) of one topic; topic None asks for all (v2+)."""
    if version >= 8:
        topics = (
            None if topic is None else [OffsetFetchRequestTopics(name=topic, partition_indexes=partitions)]
        )
        # topics None means all topics: a nullable array, which the generated types miss (here and below)
        requested = OffsetFetchRequestGroup(group_id=group, topics=topics)  # type: ignore[arg-type]
        response = wire.call(OffsetFetchRequest(groups=[requested]), version)
        (g,) = response.groups
        assert (g.group_id, g.error_code) == (group, E.NONE)
        return [
            (p.partition_index, p.committed_offset, p.committed_leader_epoch, p.metadata)
            for t in g.topics
            for p in t.partitions
        ]
    topics_v0 = None if topic is None else [OffsetFetchRequestTopic(name=topic, partition_indexes=partitions)]
    response = wire.call(OffsetFetchRequest(group_id=group, topics=topics_v0), version)  # type: ignore[arg-type]
    if version >= 2:
        assert response.error_code == E.NONE
    out = []
    for t in response.topics:
        for p in t.partitions:
            assert p.error_code == E.NONE
            out.append((p.partition_index, p.committed_offset, p.committed_leader_epoch, p.metadata))
    return out


# ---- errors ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 4, 9])
def test_empty_group_id_is_invalid_for_membership(wire: Wire, topic: str, version: int) -> None:
    assert join(wire, version, "", topic).error_code == E.INVALID_GROUP_ID
    sync = wire.call(SyncGroupRequest(group_id="", generation_id=1, member_id="m"), min(version, 4))
    assert sync.error_code == E.INVALID_GROUP_ID
    beat = wire.call(HeartbeatRequest(group_id="", generation_id=1, member_id="m"), min(version, 4))
    assert beat.error_code == E.INVALID_GROUP_ID
    leave = wire.call(LeaveGroupRequest(group_id="", member_id="m"), min(version, 2))
    assert leave.error_code == E.INVALID_GROUP_ID


@pytest.mark.parametrize("session_ms", [500, 2_000_000])
def test_session_timeout_out_of_bounds(wire: Wire, topic: str, session_ms: int) -> None:
    response = wire.call(
        JoinGroupRequest(
            group_id=unique("session"),
            session_timeout_ms=session_ms,
            protocol_type="consumer",
            protocols=[JoinGroupRequestProtocol(name="range", metadata=subscription(topic))],
        ),
        5,
    )
    assert response.error_code == E.INVALID_SESSION_TIMEOUT


def test_sync_group_v5_needs_protocol_type_and_name(wire: Wire, topic: str) -> None:
    group = unique("sync-v5")
    first = join(wire, 9, group, topic)
    joined = join(wire, 9, group, topic, member_id=first.member_id)
    missing = wire.call(
        SyncGroupRequest(
            group_id=group, generation_id=1, member_id=joined.member_id, protocol_type="consumer"
        ),
        5,
    )
    assert missing.error_code == E.INCONSISTENT_GROUP_PROTOCOL
    wrong = wire.call(
        SyncGroupRequest(
            group_id=group,
            generation_id=1,
            member_id=joined.member_id,
            protocol_type="consumer",
            protocol_name="roundrobin",
        ),
        5,
    )
    assert wrong.error_code == E.INCONSISTENT_GROUP_PROTOCOL


def test_unknown_members_and_generations(wire: Wire, topic: str) -> None:
    group = unique("unknown")
    beat = wire.call(HeartbeatRequest(group_id=group, generation_id=1, member_id="nobody"), 4)
    assert beat.error_code == E.UNKNOWN_MEMBER_ID
    joined = join(wire, 3, group, topic)
    assert joined.error_code == E.NONE
    stale = wire.call(HeartbeatRequest(group_id=group, generation_id=7, member_id=joined.member_id), 3)
    assert stale.error_code == E.ILLEGAL_GENERATION
    # A commit for a generation of a group we never saw, and one from outside a group that has members.
    never = commit(wire, 8, unique("never"), topic, [0], generation=3, member_id="ghost")
    assert never == [(topic, [(0, E.ILLEGAL_GENERATION)])]
    outsider = commit(wire, 8, group, topic, [0])
    assert outsider == [(topic, [(0, E.UNKNOWN_MEMBER_ID)])]


def commit(
    wire: Wire,
    version: int,
    group: str,
    topic: str,
    partitions: list[int],
    *,
    generation: int = -1,
    member_id: str = "",
    metadata: str = "",
    retention_ms: int = -1,
    extra_topics: tuple[str, ...] = (),
) -> list[tuple[str, list[tuple[int, int]]]]:
    response = wire.call(
        OffsetCommitRequest(
            group_id=group,
            generation_id_or_member_epoch=generation,
            member_id=member_id,
            retention_time_ms=retention_ms,
            topics=[
                OffsetCommitRequestTopic(
                    name=name,
                    partitions=[
                        OffsetCommitRequestPartition(
                            partition_index=p, committed_offset=10 + p, committed_metadata=metadata
                        )
                        for p in partitions
                    ],
                )
                for name in (topic, *extra_topics)
            ],
        ),
        version,
    )
    return [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in response.topics]


@pytest.mark.parametrize("version", [2, 5, 8, 9])
def test_offset_commit_unknown_topics_and_partitions(wire: Wire, topic: str, version: int) -> None:
    group = unique("unknown-topic")
    missing = unique("missing")
    result = commit(wire, version, group, topic, [0, 1, 2], extra_topics=(missing,))
    # Kafka's order: the partitions refused as unknown first, then the coordinator's answers.
    assert result == [
        (topic, [(2, E.UNKNOWN_TOPIC_OR_PARTITION), (0, E.NONE), (1, E.NONE)]),
        (
            missing,
            [
                (0, E.UNKNOWN_TOPIC_OR_PARTITION),
                (1, E.UNKNOWN_TOPIC_OR_PARTITION),
                (2, E.UNKNOWN_TOPIC_OR_PARTITION),
            ],
        ),
    ]
    assert fetch_offsets(wire, 5, group, topic, [0, 1]) == [(0, 10, -1, ""), (1, 11, -1, "")]


def test_offset_commit_metadata_too_large_fails_only_that_partition(wire: Wire, topic: str) -> None:
    group = unique("metadata")
    big = commit(wire, 7, group, topic, [0], metadata="x" * 4097)
    assert big == [(topic, [(0, E.OFFSET_METADATA_TOO_LARGE)])]
    ok = commit(wire, 7, group, topic, [1], metadata="x" * 4096)
    assert ok == [(topic, [(1, E.NONE)])]


@pytest.mark.parametrize("version", [2, 4])
def test_offset_commit_with_retention_time(wire: Wire, topic: str, version: int) -> None:
    group = unique("retention")
    assert commit(wire, version, group, topic, [0], retention_ms=3_600_000) == [(topic, [(0, E.NONE)])]
    assert fetch_offsets(wire, 1, group, topic, [0]) == [(0, 10, -1, "")]


@pytest.mark.parametrize("version", [2, 7, 8, 9])
def test_offset_fetch_null_topics_means_all(wire: Wire, topic: str, version: int) -> None:
    group = unique("fetch-all")
    commit(wire, 9, group, topic, [0, 1])
    assert fetch_offsets(wire, version, group, None, []) == [(0, 10, -1, ""), (1, 11, -1, "")]


def test_offset_fetch_v8_batches_groups(wire: Wire, topic: str) -> None:
    first, second, empty = unique("batch-a"), unique("batch-b"), unique("batch-none")
    commit(wire, 9, first, topic, [0])
    commit(wire, 9, second, topic, [1])
    response = wire.call(
        OffsetFetchRequest(
            groups=[
                OffsetFetchRequestGroup(
                    group_id=first, topics=[OffsetFetchRequestTopics(name=topic, partition_indexes=[0, 1])]
                ),
                # null topics (the generated types miss nullable arrays)
                OffsetFetchRequestGroup(group_id=second, topics=None),  # type: ignore[arg-type]
                OffsetFetchRequestGroup(group_id=empty, topics=None),  # type: ignore[arg-type]
            ],
            require_stable=True,
        ),
        8,
    )
    answers = {
        g.group_id: (
            g.error_code,
            [(t.name, [(p.partition_index, p.committed_offset) for p in t.partitions]) for t in g.topics],
        )
        for g in response.groups
    }
    assert answers == {
        first: (E.NONE, [(topic, [(0, 10), (1, -1)])]),
        second: (E.NONE, [(topic, [(1, 11)])]),
        empty: (E.NONE, []),
    }


def test_offset_delete(wire: Wire, topic: str) -> None:
    group = unique("offset-delete")
    request = OffsetDeleteRequest(
        group_id=group,
        topics=[
            OffsetDeleteRequestTopic(
                name=topic, partitions=[OffsetDeleteRequestPartition(partition_index=0)]
            ),
        ],
    )
    assert wire.call(request, 0).error_code == E.GROUP_ID_NOT_FOUND
    commit(wire, 9, group, topic, [0, 1])
    missing = unique("missing")
    request.topics.append(
        OffsetDeleteRequestTopic(name=missing, partitions=[OffsetDeleteRequestPartition(partition_index=0)])
    )
    request.topics[0].partitions.append(OffsetDeleteRequestPartition(partition_index=5))
    response = wire.call(request, 0)
    assert response.error_code == E.NONE
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in response.topics] == [
        (topic, [(0, E.NONE), (5, E.UNKNOWN_TOPIC_OR_PARTITION)]),
        (missing, [(0, E.UNKNOWN_TOPIC_OR_PARTITION)]),
    ]
    assert fetch_offsets(wire, 8, group, None, []) == [(1, 11, -1, "")]


def test_offset_delete_of_a_subscribed_topic(wire: Wire, topic: str) -> None:
    group = unique("subscribed")
    joined = join(wire, 3, group, topic)
    request = OffsetDeleteRequest(
        group_id=group,
        topics=[
            OffsetDeleteRequestTopic(name=topic, partitions=[OffsetDeleteRequestPartition(partition_index=0)])
        ],
    )
    response = wire.call(request, 0)
    assert response.error_code == E.NONE
    assert response.topics[0].partitions[0].error_code == E.GROUP_SUBSCRIBED_TO_TOPIC
    deleted = wire.call(DeleteGroupsRequest(groups_names=[group, group, unique("nope")]), 2)
    assert [r.error_code for r in deleted.results] == [E.NON_EMPTY_GROUP, E.GROUP_ID_NOT_FOUND]
    wire.call(LeaveGroupRequest(group_id=group, member_id=joined.member_id), 1)


def test_list_groups_filters(wire: Wire, topic: str) -> None:
    # Joined without SyncGroup: the group waits for its leader's assignment.
    completing, empty = unique("filter-completing"), unique("filter-empty")
    assert join(wire, 3, completing, topic).error_code == E.NONE
    commit(wire, 9, empty, topic, [0])

    def listed(version: int, states: list[str], types: list[str]) -> set[str]:
        response = wire.call(ListGroupsRequest(states_filter=states, types_filter=types), version)
        return {g.group_id for g in response.groups} & {completing, empty}

    assert listed(0, [], []) == {completing, empty}
    assert listed(4, ["completingrebalance"], []) == {completing}
    assert listed(4, ["Empty", "Dead"], []) == {empty}
    assert listed(4, ["Stable"], []) == set()
    assert listed(5, [], ["Classic"]) == {completing, empty}
    assert listed(5, [], ["consumer"]) == set()


def test_leave_group_batch_with_unknown_members(wire: Wire, topic: str) -> None:
    group = unique("leave-batch")
    joined = join(wire, 5, group, topic, instance="static-1")
    response = wire.call(
        LeaveGroupRequest(
            group_id=group,
            members=[
                MemberIdentity(member_id="nobody"),
                # An admin removing a static member by its instance id alone (KIP-345).
                MemberIdentity(member_id="", group_instance_id="static-1"),
            ],
        ),
        5,
    )
    assert response.error_code == E.NONE
    assert [(m.member_id, m.group_instance_id, m.error_code) for m in response.members] == [
        ("nobody", None, E.UNKNOWN_MEMBER_ID),
        ("", "static-1", E.NONE),
    ]
    old = wire.call(LeaveGroupRequest(group_id=group, member_id=joined.member_id), 2)
    assert old.error_code == E.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize("version", [5, 8, 9])
def test_static_member_rejoins_without_rebalance(wire: Wire, topic: str, version: int) -> None:
    group = unique("static")
    first = join(wire, version, group, topic, instance="inst")
    mine = assignment(topic, [0, 1])
    synced = wire.call(
        SyncGroupRequest(
            group_id=group,
            generation_id=1,
            member_id=first.member_id,
            group_instance_id="inst",
            protocol_type="consumer",
            protocol_name="range",
            assignments=[SyncGroupRequestAssignment(member_id=first.member_id, assignment=mine)],
        ),
        min(version, 5),
    )
    assert synced.error_code == E.NONE
    # The same instance restarts: new member id, same generation, no rebalance.
    again = join(wire, version, group, topic, instance="inst")
    assert again.error_code == E.NONE
    assert again.member_id != first.member_id
    assert again.generation_id == 1
    if version >= 9:
        # It leads: told not to compute an assignment nobody would distribute.
        assert (again.leader, again.skip_assignment) == (again.member_id, True)
    else:
        # Older clients see the old leader id, so they do not act as leader.
        assert again.leader == first.member_id
    zombie = wire.call(
        HeartbeatRequest(
            group_id=group, generation_id=1, member_id=first.member_id, group_instance_id="inst"
        ),
        4,
    )
    assert zombie.error_code == E.FENCED_INSTANCE_ID
    fresh = wire.call(
        SyncGroupRequest(
            group_id=group,
            generation_id=1,
            member_id=again.member_id,
            group_instance_id="inst",
            protocol_type="consumer",
            protocol_name="range",
        ),
        min(version, 5),
    )
    assert (fresh.error_code, bytes(fresh.assignment)) == (E.NONE, mine)
