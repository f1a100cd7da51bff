"""`__consumer_offsets` records: Kafka's byte layout, replay, partitioning of groups, rebuilding a coordinator."""

from __future__ import annotations

import itertools
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
from kbroker.coordinator.offsets import OffsetCommitEntry
from kbroker.coordinator.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    RecordFormatError,
    UnknownKey,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
    encode_group_metadata_key,
    encode_group_metadata_value,
    encode_offset_commit_key,
    encode_offset_commit_value,
    java_string_hashcode,
    kafka_abs,
    load,
    partition_for,
)
from protocol.errors import ErrorCode

# ---- partitioning ----------------------------------------------------------------------------------------------------


def java_hash_by_hand(text: str) -> int:
    """The definition in the String.hashCode javadoc, s[0]*31^(n-1) + ... + s[n-1], reduced to a signed int32."""
    n = len(text)
    total: int = sum(ord(c) * pow(31, n - 1 - i) for i, c in enumerate(text))  # exact, no overflow
    total %= 2**32
    return total - 2**32 if total >= 2**31 else total


def test_test_group_hash_worked_out_by_hand() -> None:
    # "test-group" is all ASCII, so UTF-16 code units are the character codes:
    # t=116 e=101 s=115 t=116 -=45 g=103 r=114 o=111 u=117 p=112
    codes = [116, 101, 115, 116, 45, 103, 114, 111, 117, 112]
    h = 0
    for c in codes:
        h = (h * 31 + c) % 2**32
    assert h == 627841412  # < 2**31, so the int32 is positive
    assert java_hash_by_hand("test-group") == 627841412
    assert java_string_hashcode("test-group") == 627841412
    assert partition_for("test-group", 50) == 627841412 % 50 == 12


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 97),
        ("abc", 96354),
        ("hello", 99162322),  # a value every Java programmer can check with jshell
        ("polygenelubricants", -(2**31)),  # the famous string whose hashCode is Integer.MIN_VALUE
    ],
)
def test_java_string_hashcode_known_values(text: str, expected: int) -> None:
    assert java_string_hashcode(text) == expected


def test_utils_abs_of_min_value_is_zero() -> None:
    assert kafka_abs(-(2**31)) == 0
    assert kafka_abs(-5) == 5
    assert partition_for("polygenelubricants", 50) == 0


def test_negative_hash_partition() -> None:
    # "my-group" hashes negative: Kafka takes Utils.abs before the modulo.
    assert java_string_hashcode("my-group") == -1906497762
    assert partition_for("my-group", 50) == 1906497762 % 50


def test_non_bmp_characters_count_as_two_utf16_units() -> None:
    # U+1F600 is the surrogate pair D83D DE00 in Java's String.
    assert java_string_hashcode("\U0001f600") == (0xD83D * 31 + 0xDE00)


@given(st.text(max_size=40))
def test_hashcode_matches_the_javadoc_formula_for_bmp_text(text: str) -> None:
    text = "".join(c for c in text if ord(c) < 0x10000)
    assert java_string_hashcode(text) == java_hash_by_hand(text)
    assert 0 <= partition_for(text, 50) < 50


# ---- byte layout -----------------------------------------------------------------------------------------------------


def s16(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def test_offset_commit_key_bytes() -> None:
    data = encode_offset_commit_key("g", "t", 3)
    assert data == b"\x00\x01" + b"\x00\x01g" + b"\x00\x01t" + b"\x00\x00\x00\x03"
    assert decode_key(data) == OffsetCommitKey("g", "t", 3)
    # Version 0 keys (written by very old brokers) have the same fields.
    assert decode_key(b"\x00\x00" + data[2:]) == OffsetCommitKey("g", "t", 3)


def test_group_metadata_key_bytes() -> None:
    data = encode_group_metadata_key("group-1")
    assert data == b"\x00\x02" + s16("group-1")
    assert decode_key(data) == GroupMetadataKey("group-1")


def test_offset_commit_value_v3_bytes() -> None:
    value = OffsetCommitValue(offset=42, leader_epoch=5, metadata="m", commit_timestamp=1000)
    data = encode_offset_commit_value(value)
    assert data == (
        b"\x00\x03" + struct.pack(">q", 42) + struct.pack(">i", 5) + s16("m") + struct.pack(">q", 1000)
    )
    assert decode_offset_commit_value(data) == value


def test_offset_commit_value_with_expire_timestamp_is_version_1() -> None:
    value = OffsetCommitValue(offset=42, metadata="", commit_timestamp=1000, expire_timestamp=2000)
    data = encode_offset_commit_value(value)
    assert data == b"\x00\x01" + struct.pack(">q", 42) + s16("") + struct.pack(">qq", 1000, 2000)
    assert decode_offset_commit_value(data) == value  # v1 has no leader epoch: -1


def test_group_metadata_value_v3_bytes() -> None:
    member = MemberMetadataValue("m1", None, "c", "/h", 30000, 10000, b"S", b"A")
    value = GroupMetadataValue("consumer", 1, "range", "m1", 7, (member,))
    data = encode_group_metadata_value(value)
    assert data == (
        b"\x00\x03"
        + s16("consumer")
        + struct.pack(">i", 1)
        + s16("range")
        + s16("m1")
        + struct.pack(">q", 7)
        + struct.pack(">i", 1)
        + s16("m1")
        + b"\xff\xff"  # null group instance id
        + s16("c")
        + s16("/h")
        + struct.pack(">ii", 30000, 10000)
        + b"\x00\x00\x00\x01S"
        + b"\x00\x00\x00\x01A"
    )
    assert decode_group_metadata_value(data) == value


def test_group_metadata_value_v4_flexible_bytes_with_unknown_tag() -> None:
    # What a Kafka that writes the flexible version would store, plus a tagged field we do not know.
    data = (
        b"\x00\x04"
        + b"\x09consumer"
        + struct.pack(">i", 1)
        + b"\x06range"
        + b"\x03m1"
        + struct.pack(">q", 7)
        + b"\x02"  # one member
        + b"\x03m1"
        + b"\x00"  # null group instance id
        + b"\x02c"
        + b"\x03/h"
        + struct.pack(">ii", 30000, 10000)
        + b"\x02S"
        + b"\x02A"
        + b"\x00"  # member's tagged fields
        + b"\x01\x05\x02xy"  # one tagged field: tag 5, two bytes
    )
    member = MemberMetadataValue("m1", None, "c", "/h", 30000, 10000, b"S", b"A")
    assert decode_group_metadata_value(data) == GroupMetadataValue("consumer", 1, "range", "m1", 7, (member,))


def test_empty_group_value_has_null_protocol_and_leader() -> None:
    value = GroupMetadataValue("consumer", 4, None, None, 99, ())
    data = encode_group_metadata_value(value)
    assert data == b"\x00\x03" + s16("consumer") + struct.pack(">i", 4) + b"\xff\xff\xff\xff" + struct.pack(
        ">qi", 99, 0
    )
    assert decode_group_metadata_value(data) == value


members_st = st.builds(
    MemberMetadataValue,
    st.text(max_size=8),
    st.none() | st.text(max_size=8),
    st.text(max_size=8),
    st.text(max_size=8),
    st.integers(-(2**31), 2**31 - 1),
    st.integers(-(2**31), 2**31 - 1),
    st.binary(max_size=16),
    st.binary(max_size=16),
)
group_values_st = st.builds(
    GroupMetadataValue,
    st.text(max_size=8),
    st.integers(-(2**31), 2**31 - 1),
    st.none() | st.text(max_size=8),
    st.none() | st.text(max_size=8),
    st.integers(-(2**63), 2**63 - 1),
    st.lists(members_st, max_size=3).map(tuple),
)


@given(group_values_st, st.integers(0, 4))
def test_group_metadata_value_round_trip_every_version(value: GroupMetadataValue, version: int) -> None:
    decoded = decode_group_metadata_value(encode_group_metadata_value(value, version))
    # Fields a version does not have come back as their defaults.
    expected = GroupMetadataValue(
        value.protocol_type,
        value.generation,
        value.protocol,
        value.leader,
        value.current_state_timestamp if version >= 2 else -1,
        tuple(
            MemberMetadataValue(
                m.member_id,
                m.group_instance_id if version >= 3 else None,
                m.client_id,
                m.client_host,
                m.rebalance_timeout if version >= 1 else -1,
                m.session_timeout,
                m.subscription,
                m.assignment,
            )
            for m in value.members
        ),
    )
    assert decoded == expected


@given(
    st.builds(
        OffsetCommitValue,
        st.integers(-(2**63), 2**63 - 1),
        st.integers(-(2**31), 2**31 - 1),
        st.text(max_size=20),
        st.integers(-(2**63), 2**63 - 1),
        st.integers(-(2**63), 2**63 - 1),
    ),
    st.integers(0, 4),
)
def test_offset_commit_value_round_trip_every_version(value: OffsetCommitValue, version: int) -> None:
    decoded = decode_offset_commit_value(encode_offset_commit_value(value, version))
    assert decoded == OffsetCommitValue(
        value.offset,
        value.leader_epoch if version >= 3 else -1,
        value.metadata,
        value.commit_timestamp,
        value.expire_timestamp if version == 1 else -1,
    )


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00",
        b"\x00\x03\x00",
        b"\x00\x09" + bytes(30),
        b"\x00\x03" + bytes(8) + bytes(4) + b"\x00\x05ab",
    ],
)
def test_malformed_values_raise(data: bytes) -> None:
    with pytest.raises(RecordFormatError):
        decode_offset_commit_value(data)


def test_trailing_bytes_are_an_error() -> None:
    with pytest.raises(RecordFormatError):
        decode_key(encode_group_metadata_key("g") + b"x")


# ---- replay ----------------------------------------------------------------------------------------------------------


def commit(group: str, topic: str, partition: int, offset: int | None) -> tuple[bytes, bytes | None]:
    value = None if offset is None else encode_offset_commit_value(OffsetCommitValue(offset, -1, "", 1))
    return encode_offset_commit_key(group, topic, partition), value


def test_load_last_write_wins_and_tombstones_delete() -> None:
    g1 = GroupMetadataValue("consumer", 1, "range", None, 1, ())
    g2 = GroupMetadataValue("consumer", 2, None, None, 2, ())
    records = [
        commit("a", "t", 0, 1),
        commit("a", "t", 0, 2),
        commit("a", "t", 1, 5),
        commit("a", "t", 1, None),
        commit("b", "t", 0, 9),
        commit("b", "t", 0, None),
        (encode_group_metadata_key("a"), encode_group_metadata_value(g1)),
        (encode_group_metadata_key("a"), encode_group_metadata_value(g2)),
        (encode_group_metadata_key("c"), encode_group_metadata_value(g1)),
        (encode_group_metadata_key("c"), None),
        # A KIP-848 record type (ConsumerGroupMetadataKey is key version 3) and a record without key: skipped.
        (b"\x00\x03" + s16("x"), b"\x00\x00\x00\x00\x00\x01"),
        (None, b"junk"),
    ]
    state = load(records)
    assert state.groups == {"a": g2}
    assert {g: {tp: v.offset for tp, v in o.items()} for g, o in state.offsets.items()} == {
        "a": {TopicPartition("t", 0): 2}
    }
    assert decode_key(b"\x00\x03" + s16("x")) == UnknownKey(3)


# ---- rebuilding a coordinator from its records -----------------------------------------------------------------------


def join_req(member_id: str = "", instance: str | None = None, client: str = "c") -> JoinRequest:
    return JoinRequest(
        member_id, instance, client, "/10.0.0.1", 10_000, 30_000, "consumer", (("range", b"sub"),), 5
    )


def test_load_rebuilds_groups_and_offsets_after_a_restart() -> None:
    counter = itertools.count(1)
    config = CoordinatorConfig(group=GroupConfig(group_initial_rebalance_delay_ms=0))
    coord = GroupCoordinator(config, new_member_id=lambda p: f"{p}-{next(counter)}")
    log: dict[int, list[tuple[bytes, bytes | None]]] = {}

    def keep(outcome: Outcome[object]) -> None:
        for partition, recs in outcome.records.items():
            log.setdefault(partition, []).extend(recs)

    # A stable group with a dynamic and a static member, and committed offsets.
    a = coord.join_group("app", join_req(client="a"), 0).response
    assert isinstance(a, JoinResult)
    pa = coord.join_group("app", join_req(a.member_id), 0).response
    ps = coord.join_group("app", join_req(instance="i1", client="s"), 0).response
    assert isinstance(pa, Pending)
    assert isinstance(ps, Pending)
    # A zero initial delay still takes two timer rounds when a second member joined during the first.
    done = {c.ticket: c.result for _ in range(2) for c in coord.on_tick(0).completions}
    ra, rs = done[pa.ticket], done[ps.ticket]
    assert isinstance(ra, JoinResult)
    assert isinstance(rs, JoinResult)
    keep(coord.sync_group("app", SyncRequest(rs.member_id, "i1", 1, None, None, ()), 0))
    keep(
        coord.sync_group(
            "app",
            SyncRequest(ra.member_id, None, 1, None, None, ((ra.member_id, b"A"), (rs.member_id, b"S"))),
            0,
        )
    )
    keep(coord.commit_offsets("app", ra.member_id, None, 1, [OffsetCommitEntry("t", 0, 10, 3, "meta")], 5))
    keep(coord.commit_offsets("app", ra.member_id, None, 1, [OffsetCommitEntry("t", 0, 11, 3, "meta")], 6))
    # A group that only stores offsets, one deleted group, one that emptied.
    keep(coord.commit_offsets("simple", "", None, -1, [OffsetCommitEntry("u", 1, 7)], 7))
    keep(coord.commit_offsets("gone", "", None, -1, [OffsetCommitEntry("u", 1, 7)], 7))
    keep(coord.delete_groups(["gone"], 8))
    e = coord.join_group("emptied", join_req(client="e"), 0).response
    assert isinstance(e, JoinResult)
    coord.join_group("emptied", join_req(e.member_id), 0)
    keep(coord.on_tick(0))
    assert coord.groups["emptied"].state is GroupState.COMPLETING_REBALANCE
    keep(coord.leave_group("emptied", [MemberIdentity(e.member_id)], 9))
    keep(coord.on_tick(9))

    restarted = GroupCoordinator(config)
    for partition, recs in log.items():
        restarted.load(partition, recs, now_ms=100)

    assert set(restarted.groups) == {"app", "simple", "emptied"}
    app = restarted.groups["app"]
    assert app.state is GroupState.STABLE
    assert (app.generation_id, app.protocol_name, app.leader_id) == (1, "range", ra.member_id)
    assert {m.member_id: m.assignment for m in app.members.values()} == {
        ra.member_id: b"A",
        rs.member_id: b"S",
    }
    assert app.static_members == {"i1": rs.member_id}
    assert restarted.describe_group("app") == coord.describe_group("app")
    fetched = restarted.fetch_offsets("app", None)
    assert [(p.topic, p.partition, p.offset, p.leader_epoch, p.metadata) for p in fetched.partitions] == [
        ("t", 0, 11, 3, "meta")
    ]
    assert restarted.fetch_offsets("simple", [("u", [1])]).partitions[0].offset == 7
    assert restarted.groups["simple"].protocol_type is None
    assert restarted.groups["emptied"].state is GroupState.EMPTY
    assert restarted.groups["emptied"].state_timestamp_ms == 9
    assert restarted.fetch_offsets("gone", [("u", [1])]).partitions[0].offset == -1

    # Members carry on where they were; sessions restarted at load time.
    assert restarted.heartbeat("app", ra.member_id, None, 1, 101).response is ErrorCode.NONE
    synced = restarted.sync_group("app", SyncRequest(rs.member_id, "i1", 1, None, None, ()), 102).response
    assert synced == coord.sync_group("app", SyncRequest(rs.member_id, "i1", 1, None, None, ()), 102).response
    # A member that does not come back is expired after its session timeout.
    restarted.heartbeat("app", rs.member_id, "i1", 1, 10_000)
    restarted.on_tick(101 + 10_000 - 1)
    assert ra.member_id in restarted.groups["app"].members
    restarted.on_tick(101 + 10_000)
    assert ra.member_id not in restarted.groups["app"].members
    assert restarted.groups["app"].state is GroupState.PREPARING_REBALANCE
