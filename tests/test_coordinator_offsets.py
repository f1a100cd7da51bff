"""Committed offsets through the coordinator: commit and fetch rules, expiry, OffsetDelete, DeleteGroups."""

from __future__ import annotations

import itertools
import struct
from collections.abc import Sequence

import pytest

from kbroker.common import TopicPartition
from kbroker.coordinator.coordinator import CoordinatorConfig, GroupCoordinator, Outcome
from kbroker.coordinator.group import (
    GroupConfig,
    GroupState,
    JoinRequest,
    JoinResult,
    MemberIdentity,
    Pending,
    SyncRequest,
)
from kbroker.coordinator.offsets import (
    OffsetAndMetadata,
    OffsetCommitEntry,
    PartitionResult,
    expired_offsets,
    java_string_length,
)
from kbroker.coordinator.records import (
    GroupMetadataKey,
    OffsetCommitKey,
    decode_key,
    decode_offset_commit_value,
    partition_for,
)
from protocol.errors import ErrorCode

E = ErrorCode
DAY = 24 * 3600 * 1000
RETENTION = 7 * DAY  # offsets.retention.minutes default


def subscription(*topics: str) -> bytes:
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


def coordinator(**kw: int) -> GroupCoordinator:
    counter = itertools.count(1)
    config = CoordinatorConfig(group=GroupConfig(group_initial_rebalance_delay_ms=0), **kw)
    return GroupCoordinator(config, new_member_id=lambda p: f"{p}-{next(counter)}")


def records_of(outcome: Outcome[object]) -> list[tuple[object, object]]:
    """(decoded key, offset or None) of each record, whatever the partition."""
    out: list[tuple[object, object]] = []
    for recs in outcome.records.values():
        for key, value in recs:
            k = decode_key(key)
            if value is None:
                out.append((k, None))
            elif isinstance(k, OffsetCommitKey):
                out.append((k, decode_offset_commit_value(value).offset))
            else:
                out.append((k, "group"))
    return out


def stable(
    coord: GroupCoordinator, group: str, topics: Sequence[str] = ("t",), now: int = 0
) -> tuple[str, int]:
    """A one-member consumer group subscribed to `topics`, Stable; returns (member id, generation)."""
    sub = subscription(*topics)
    req = JoinRequest("", None, "c", "/h", 10_000, 30_000, "consumer", (("range", sub),), 3)
    pending = coord.join_group(group, req, now).response
    assert isinstance(pending, Pending)
    (completion,) = coord.on_tick(now).completions
    joined = completion.result
    assert isinstance(joined, JoinResult)
    sync = SyncRequest(joined.member_id, None, joined.generation_id, None, None, ((joined.member_id, b"x"),))
    coord.sync_group(group, sync, now)
    assert coord.groups[group].state is GroupState.STABLE
    return joined.member_id, joined.generation_id


def commit(
    coord: GroupCoordinator,
    group: str,
    member: str = "",
    gen: int = -1,
    now: int = 0,
    *,
    topic: str = "t",
    partition: int = 0,
    offset: int = 42,
    epoch: int = -1,
    metadata: str | None = "",
    retention: int = -1,
) -> Outcome[tuple[PartitionResult, ...]]:
    e = OffsetCommitEntry(
        topic=topic, partition=partition, offset=offset, leader_epoch=epoch, metadata=metadata
    )
    return coord.commit_offsets(group, member, None, gen, [e], now, retention)


def fetch1(coord: GroupCoordinator, group: str, topic: str = "t", partition: int = 0) -> tuple[int, int, str]:
    (p,) = coord.fetch_offsets(group, [(topic, [partition])]).partitions
    return p.offset, p.leader_epoch, p.metadata


# ---- commit and fetch ------------------------------------------------------------------------------------------------


def test_simple_commit_creates_an_empty_group_and_fetch_returns_it() -> None:
    coord = coordinator()
    out = commit(coord, "simple", offset=10, epoch=3, metadata="hello", now=5)
    assert [r.error for r in out.response] == [E.NONE]
    assert records_of(out) == [(OffsetCommitKey("simple", "t", 0), 10)]
    assert list(out.records) == [partition_for("simple", 50)]
    assert coord.groups["simple"].state is GroupState.EMPTY
    assert coord.groups["simple"].protocol_type is None
    assert fetch1(coord, "simple") == (10, 3, "hello")
    stored = coord.offsets.get("simple", TopicPartition("t", 0))
    assert stored == OffsetAndMetadata(10, 3, "hello", commit_timestamp_ms=5)


def test_fetch_of_unknown_offsets_and_groups() -> None:
    coord = coordinator()
    assert fetch1(coord, "nobody") == (-1, -1, "")
    commit(coord, "g", partition=1)
    result = coord.fetch_offsets("g", [("t", [0, 1]), ("other", [0])])
    assert result.error is E.NONE
    assert [(p.topic, p.partition, p.offset, p.leader_epoch, p.metadata) for p in result.partitions] == [
        ("t", 0, -1, -1, ""),
        ("t", 1, 42, -1, ""),
        ("other", 0, -1, -1, ""),
    ]
    # topics=None (OffsetFetch v2+): every committed offset of the group.
    assert [(p.topic, p.partition) for p in coord.fetch_offsets("g", None).partitions] == [("t", 1)]
    assert coord.fetch_offsets("nobody", None).partitions == ()


def test_metadata_too_large_fails_only_that_partition() -> None:
    coord = coordinator(offset_metadata_max_bytes=10)
    entries = [OffsetCommitEntry("t", 0, 1, -1, "x" * 10), OffsetCommitEntry("t", 1, 1, -1, "x" * 11)]
    out = coord.commit_offsets("g", "", None, -1, entries, 0)
    assert [r.error for r in out.response] == [E.NONE, E.OFFSET_METADATA_TOO_LARGE]
    assert fetch1(coord, "g", partition=1) == (-1, -1, "")
    # Java counts UTF-16 units: an emoji is two.
    assert java_string_length("\U0001f600") == 2


def test_null_metadata_is_stored_as_empty_string() -> None:
    coord = coordinator()
    commit(coord, "g", metadata=None)
    assert fetch1(coord, "g") == (42, -1, "")


def test_commit_with_retention_time_expires_at_that_time() -> None:
    coord = coordinator()
    out = commit(coord, "g", retention=1000, now=50)
    assert coord.offsets.get("g", TopicPartition("t", 0)) == OffsetAndMetadata(
        42, -1, "", 50, expire_timestamp_ms=1050
    )
    ((_key, value),) = next(iter(out.records.values()))
    assert value is not None
    assert value[:2] == b"\x00\x01"  # stored as OffsetCommitValue v1, the version with an expire timestamp
    coord.expire_offsets(1049)
    assert fetch1(coord, "g")[0] == 42
    coord.expire_offsets(1050)
    assert fetch1(coord, "g")[0] == -1


@pytest.mark.parametrize(
    ("member", "gen", "expected"),
    [
        ("m", 1, E.NONE),
        ("m", 2, E.ILLEGAL_GENERATION),
        ("m", 0, E.ILLEGAL_GENERATION),
        ("other", 1, E.UNKNOWN_MEMBER_ID),
        ("", -1, E.UNKNOWN_MEMBER_ID),  # a "simple" commit while members manage the group
        ("m", -1, E.ILLEGAL_GENERATION),
    ],
)
def test_group_managed_commit_checks(member: str, gen: int, expected: ErrorCode) -> None:
    coord = coordinator()
    member_id, generation = stable(coord, "g")
    assert generation == 1
    who = member_id if member == "m" else member
    out = commit(coord, "g", who, gen)
    assert out.response[0].error is expected
    assert bool(out.records) == (expected is E.NONE)


def test_commit_for_unknown_group_with_a_generation_is_illegal() -> None:
    coord = coordinator()
    assert commit(coord, "ghost", "m", 3).response[0].error is E.ILLEGAL_GENERATION
    assert "ghost" not in coord.groups


def test_commit_is_refused_on_a_dead_or_unowned_group() -> None:
    coord = GroupCoordinator(owned_partitions=[])
    assert commit(coord, "g").response[0].error is E.NOT_COORDINATOR
    assert coord.fetch_offsets("g", None).error is E.NOT_COORDINATOR


def test_empty_group_id_may_store_offsets() -> None:
    coord = coordinator()
    assert commit(coord, "").response[0].error is E.NONE
    assert fetch1(coord, "")[0] == 42


# ---- expiry ----------------------------------------------------------------------------------------------------------


def test_simple_group_offsets_expire_retention_after_commit_and_group_goes() -> None:
    coord = coordinator()
    commit(coord, "s", now=0, partition=0)
    commit(coord, "s", now=DAY, partition=1)
    out = coord.expire_offsets(RETENTION - 1)
    assert out.records == {}
    out = coord.expire_offsets(RETENTION)
    assert records_of(out) == [(OffsetCommitKey("s", "t", 0), None)]
    assert "s" in coord.groups
    out = coord.expire_offsets(RETENTION + DAY)
    # The last offset went: so does the group, with a tombstone for its metadata.
    assert records_of(out) == [(OffsetCommitKey("s", "t", 1), None), (GroupMetadataKey("s"), None)]
    assert "s" not in coord.groups


def test_empty_consumer_group_offsets_expire_retention_after_it_became_empty() -> None:
    coord = coordinator()
    member, gen = stable(coord, "g", now=0)
    commit(coord, "g", member, gen, now=0)
    # Members consume "t": nothing expires, however old the commit.
    assert coord.expire_offsets(100 * DAY).records == {}
    coord.leave_group("g", [MemberIdentity(member)], 100 * DAY)
    assert coord.groups["g"].state is GroupState.EMPTY
    assert coord.expire_offsets(100 * DAY + RETENTION - 1).records == {}
    out = coord.expire_offsets(100 * DAY + RETENTION)
    assert records_of(out) == [(OffsetCommitKey("g", "t", 0), None), (GroupMetadataKey("g"), None)]
    assert "g" not in coord.groups


def test_consumer_group_offsets_of_unsubscribed_topics_expire_by_commit_time() -> None:
    coord = coordinator()
    member, gen = stable(coord, "g", topics=["t"])
    commit(coord, "g", member, gen, topic="t", now=0)
    commit(coord, "g", member, gen, topic="old", now=0)
    out = coord.expire_offsets(RETENTION)
    assert records_of(out) == [(OffsetCommitKey("g", "old", 0), None)]
    assert fetch1(coord, "g", "t")[0] == 42


@pytest.mark.parametrize(
    ("protocol_type", "is_empty", "state_ts", "subscribed", "now", "expected"),
    [
        (None, True, None, None, 999, []),
        (None, True, None, None, 1000, [("a", 0), ("b", 0)]),
        ("consumer", True, 500, None, 1499, []),
        ("consumer", True, 500, None, 1500, [("a", 0), ("b", 0)]),
        ("consumer", True, None, None, 1000, [("a", 0), ("b", 0)]),  # no state timestamp: by commit time
        ("consumer", False, 500, frozenset({"a"}), 10_000, [("b", 0)]),
        ("consumer", False, 500, None, 10_000, []),  # subscriptions unknown: keep everything
        ("connect", False, 500, None, 10_000, []),
    ],
)
def test_expired_offsets_rules(
    protocol_type: str | None,
    is_empty: bool,
    state_ts: int | None,
    subscribed: frozenset[str] | None,
    now: int,
    expected: list[tuple[str, int]],
) -> None:
    offsets = {
        TopicPartition("a", 0): OffsetAndMetadata(1, -1, "", 0),
        TopicPartition("b", 0): OffsetAndMetadata(1, -1, "", 0),
    }
    got = expired_offsets(
        offsets,
        now_ms=now,
        retention_ms=1000,
        protocol_type=protocol_type,
        is_empty=is_empty,
        state_timestamp_ms=state_ts,
        subscribed_topics=subscribed,
    )
    assert got == [TopicPartition(topic, partition) for topic, partition in expected]


def test_expiry_runs_from_the_timer() -> None:
    coord = coordinator(offsets_retention_minutes=1, offsets_retention_check_interval_ms=10_000)
    commit(coord, "s", now=0)
    assert coord.next_deadline() is None
    coord.on_tick(0)  # the first tick schedules the periodic check
    assert coord.next_deadline() == 10_000
    for t in range(10_000, 60_001, 10_000):
        out = coord.on_tick(t)
    assert records_of(out) == [(OffsetCommitKey("s", "t", 0), None), (GroupMetadataKey("s"), None)]
    assert coord.next_deadline() == 70_000


# ---- OffsetDelete, DeleteGroups, deleted topics ----------------------------------------------------------------------


def test_offset_delete() -> None:
    coord = coordinator()
    assert coord.delete_offsets("nobody", [("t", [0])], 0).response.error is E.GROUP_ID_NOT_FOUND
    member, gen = stable(coord, "g", topics=["t"])
    commit(coord, "g", member, gen, topic="t")
    commit(coord, "g", member, gen, topic="u")
    out = coord.delete_offsets("g", [("t", [0]), ("u", [0, 1])], 1)
    assert out.response.error is E.NONE
    assert [(p.topic, p.partition, p.error) for p in out.response.partitions] == [
        ("t", 0, E.GROUP_SUBSCRIBED_TO_TOPIC),
        ("u", 0, E.NONE),
        ("u", 1, E.NONE),  # nothing committed there: fine
    ]
    assert records_of(out) == [(OffsetCommitKey("g", "u", 0), None)]
    # Once empty, any offset may go; the last one takes the group with it.
    coord.leave_group("g", [MemberIdentity(member)], 2)
    out = coord.delete_offsets("g", [("t", [0])], 3)
    assert [p.error for p in out.response.partitions] == [E.NONE]
    assert records_of(out) == [(OffsetCommitKey("g", "t", 0), None), (GroupMetadataKey("g"), None)]


def test_offset_delete_of_non_consumer_group_with_members() -> None:
    coord = coordinator()
    req = JoinRequest("", None, "c", "/h", 10_000, 30_000, "connect", (("default", b""),), 3)
    coord.join_group("w", req, 0)
    coord.on_tick(0)
    assert coord.delete_offsets("w", [("t", [0])], 0).response.error is E.NON_EMPTY_GROUP


def test_delete_groups() -> None:
    coord = coordinator()
    stable(coord, "busy")
    commit(coord, "idle", partition=0)
    commit(coord, "idle", partition=1)
    out = coord.delete_groups(["busy", "idle", "nobody", "idle"], 0)
    assert out.response == (
        ("busy", E.NON_EMPTY_GROUP),
        ("idle", E.NONE),
        ("nobody", E.GROUP_ID_NOT_FOUND),
        ("idle", E.GROUP_ID_NOT_FOUND),
    )
    assert records_of(out) == [
        (OffsetCommitKey("idle", "t", 0), None),
        (OffsetCommitKey("idle", "t", 1), None),
        (GroupMetadataKey("idle"), None),
    ]
    assert "idle" not in coord.groups
    assert fetch1(coord, "idle") == (-1, -1, "")


def test_offsets_of_deleted_topics_are_removed() -> None:
    coord = coordinator()
    commit(coord, "a", topic="gone")
    commit(coord, "a", topic="kept")
    commit(coord, "b", topic="gone")
    out = coord.on_topics_deleted({"gone"}, 0)
    assert sorted(records_of(out), key=repr) == sorted(
        [
            (OffsetCommitKey("a", "gone", 0), None),
            (OffsetCommitKey("b", "gone", 0), None),
            (GroupMetadataKey("b"), None),
        ],
        key=repr,
    )
    assert fetch1(coord, "a", "kept")[0] == 42
    assert "b" not in coord.groups


# ---- describe / list -------------------------------------------------------------------------------------------------


def test_describe_and_list_groups() -> None:
    coord = coordinator()
    member, _gen = stable(coord, "g", topics=["t"])
    commit(coord, "simple")
    d = coord.describe_group("g")
    assert (d.error, d.state, d.protocol_type, d.protocol_data) == (E.NONE, "Stable", "consumer", "range")
    assert [(m.member_id, m.client_id, m.client_host, m.metadata, m.assignment) for m in d.members] == [
        (member, "c", "/h", subscription("t"), b"x")
    ]
    unknown = coord.describe_group("nobody")
    assert (unknown.error, unknown.state, unknown.members) == (E.NONE, "Dead", ())
    listed = {(g.group_id, g.protocol_type, g.state) for g in coord.list_groups()}
    assert listed == {("g", "consumer", "Stable"), ("simple", "", "Empty")}
    assert [g.group_id for g in coord.list_groups(states_filter=["stable"])] == ["g"]
    assert coord.list_groups(types_filter=["consumer"]) == []
    # While rebalancing (here: the only member rejoined, the group waits for its SyncGroup), members are listed
    # without metadata or assignment.
    coord.join_group(
        "g", JoinRequest(member, None, "c", "/h", 10_000, 30_000, "consumer", (("range", b"v2"),), 3), 1
    )
    d = coord.describe_group("g")
    assert (d.state, d.protocol_data, d.members[0].metadata, d.members[0].assignment) == (
        "CompletingRebalance",
        "",
        b"",
        b"",
    )


def test_unload_answers_parked_requests_with_not_coordinator() -> None:
    coord = coordinator()
    req = JoinRequest("", None, "c", "/h", 10_000, 30_000, "consumer", (("range", b""),), 3)
    pending = coord.join_group("g", req, 0).response
    assert isinstance(pending, Pending)
    out = coord.unload(partition_for("g", 50), 1)
    (completion,) = out.completions
    assert completion.ticket == pending.ticket
    assert isinstance(completion.result, JoinResult)
    assert completion.result.error is E.NOT_COORDINATOR
    assert "g" not in coord.groups
    assert coord.join_group("g", req, 2).response == JoinResult(E.NOT_COORDINATOR, member_id="")
