"""Consumer groups through confluent-kafka (librdkafka 2.16), in process, against a real broker process.

librdkafka uses FindCoordinator v2, JoinGroup v5 (MEMBER_ID_REQUIRED and a second JoinGroup), SyncGroup v3,
Heartbeat v3, LeaveGroup v1, OffsetCommit/OffsetFetch v9 (flexible); its AdminClient ListGroups/DescribeGroups v5
(PROTOCOL.md 2d, 2e).
"""

from __future__ import annotations

import time
from collections import Counter

import pytest
from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions
from confluent_kafka.admin import AdminClient

from tests.conftest import BrokerFactory
from tests.test_groups_support import (
    GROUP_OVERRIDES,
    ConfluentMember,
    committed,
    create_topic,
    produce,
    unique,
    wait_for,
    wait_for_commits_at,
)

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 6
SESSION_MS = 6000


def settled(members: list[ConfluentMember]) -> bool:
    """Every member has partitions, no partition twice, all six covered."""
    shares = [m.assignment for m in members]
    if not all(shares):
        return False
    every = [p for share in shares for p in share]
    return len(every) == len(set(every)) == PARTITIONS


def test_three_members_share_six_partitions_and_one_leaves(broker_factory: BrokerFactory) -> None:
    broker = broker_factory(overrides=GROUP_OVERRIDES)
    topic = create_topic(broker.bootstrap, PARTITIONS)
    group = unique("confluent-share")
    members = [ConfluentMember(broker.bootstrap, group, topic) for _ in range(3)]
    try:
        wait_for("three disjoint shares of six partitions", lambda: settled(members))
        assert sorted(len(m.assignment) for m in members) == [2, 2, 2]  # range: two each

        first = produce(broker.bootstrap, topic, PARTITIONS, 300)
        wait_for("300 records consumed", lambda: sum(len(m.records) for m in members) >= 300)
        for m in members:
            # Each member saw only its own partitions.
            assert {p for p, _, _ in m.records} <= m.assignment

        # One member leaves (LeaveGroup on close): its partitions move at once, not after the session timeout.
        leaving, staying = members[0], members[1:]
        left_at = time.monotonic()
        leaving.stop()
        wait_for("two members sharing six partitions", lambda: settled(staying), timeout=SESSION_MS / 1000)
        assert time.monotonic() - left_at < SESSION_MS / 1000

        second = produce(broker.bootstrap, topic, PARTITIONS, 300, start=300)
        wait_for_commits_at(broker.bootstrap, group, topic, PARTITIONS, 600 // PARTITIONS)
        seen = Counter(v for m in members for v in m.values())
        assert set(seen) == set(first + second)
        twice = {v for v, n in seen.items() if n > 1}
        assert not twice, (
            sorted(twice)[:10],
            # who saw them (partition, offset), and what went wrong for each member
            [sorted((p, o) for p, o, v in m.records if v in twice)[:6] for m in members],
            [m.errors for m in members],
        )
        assert all(not m.errors for m in members), [m.errors for m in members]
    finally:
        for m in members[1:]:
            m.stop()

    # The committed offsets are the end of every partition: a new member of the group reads nothing old.
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert committed(admin, group, topic, PARTITIONS) == dict.fromkeys(range(PARTITIONS), 100)


def test_admin_lists_describes_and_deletes_groups(broker_factory: BrokerFactory) -> None:
    broker = broker_factory(overrides=GROUP_OVERRIDES)
    topic = create_topic(broker.bootstrap, PARTITIONS)
    produce(broker.bootstrap, topic, PARTITIONS, 60)
    group = unique("confluent-admin")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    member = ConfluentMember(broker.bootstrap, group, topic, config={"client.id": "admin-test-member"})
    try:
        wait_for("60 records consumed", lambda: len(member.records) >= 60)

        listed = admin.list_consumer_groups().result(30)
        assert not listed.errors
        (ours,) = [g for g in listed.valid if g.group_id == group]
        assert ours.state == ConsumerGroupState.STABLE
        stable_only = admin.list_consumer_groups(states={ConsumerGroupState.STABLE}).result(30)
        assert group in {g.group_id for g in stable_only.valid}

        described = admin.describe_consumer_groups([group])[group].result(30)
        assert described.state == ConsumerGroupState.STABLE
        assert described.partition_assignor == "range"
        assert described.coordinator.port == broker.port
        (m,) = described.members
        assert m.client_id == "admin-test-member"
        assert m.host == "/127.0.0.1"
        assert sorted(tp.partition for tp in m.assignment.topic_partitions) == list(range(PARTITIONS))

        with pytest.raises(Exception, match="NON_EMPTY_GROUP"):
            admin.delete_consumer_groups([group])[group].result(30)
    finally:
        member.stop()

    described = admin.describe_consumer_groups([group])[group].result(30)
    assert (described.state, described.members) == (ConsumerGroupState.EMPTY, [])
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
    assert sorted((tp.topic, tp.partition, tp.offset) for tp in offsets.topic_partitions) == [
        (topic, p, 10) for p in range(PARTITIONS)
    ]

    admin.delete_consumer_groups([group])[group].result(30)
    listed = admin.list_consumer_groups().result(30)
    assert group not in {g.group_id for g in listed.valid}
    with pytest.raises(Exception, match="GROUP_ID_NOT_FOUND"):
        admin.delete_consumer_groups([group])[group].result(30)
