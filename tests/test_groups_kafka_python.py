"""Consumer groups through kafka-python 3 (in process), against a real broker process.

kafka-python 3.0.12 uses FindCoordinator v6, JoinGroup v7, SyncGroup v5, Heartbeat v4, LeaveGroup v5 and
OffsetCommit/OffsetFetch v8, all flexible; its admin client ListGroups/DescribeGroups v5, DeleteGroups v2 and
OffsetDelete v0 (PROTOCOL.md 2d, 2e).
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.consumer.subscription_state import ConsumerRebalanceListener

from tests.conftest import BrokerFactory
from tests.test_groups_support import (
    GROUP_OVERRIDES,
    create_topic,
    produce,
    unique,
    wait_for,
    wait_for_commits_at,
)

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 6
SESSION_MS = 6000


class Member(ConsumerRebalanceListener):
    """A kafka-python group consumer on its own thread: poll, process, commit synchronously."""

    def __init__(self, bootstrap: str, group: str, topic: str, name: str) -> None:
        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            client_id=name,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout_ms=SESSION_MS,
            heartbeat_interval_ms=500,
        )
        self.name = name
        self.consumer.subscribe([topic], listener=self)
        # Have the topic's partitions before the first JoinGroup. kafka-python 3.0.12 loses a rebalance that a
        # metadata change started: a member that joined without the topic's partitions rejoins once they arrive;
        # if it is the leader, its assignment makes `need_rejoin()` false again while the join is still in flight,
        # and when a poll's timeout ends that join early, no later poll finishes it (poll only joins while
        # `need_rejoin()`). The member then stays in REBALANCING with its heartbeats disabled until the coordinator
        # expires it. Seen here: the broker's request log has the leader's SyncGroup answered within 4 ms, the
        # client logged "Received SyncGroup response" and then "need_rejoin: False" at every poll (docs/groups.md).
        wait_for(
            f"{name} to know the partitions of {topic}",
            lambda: len(self.consumer.partitions_for_topic(topic) or ()) == PARTITIONS or None,
        )
        self.assignment: frozenset[int] = frozenset()
        self.values: list[bytes] = []
        self.partitions_seen: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def on_partitions_revoked(self, revoked: object) -> None:
        self.assignment = frozenset()

    def on_partitions_assigned(self, assigned: list[TopicPartition]) -> None:
        self.assignment = frozenset(tp.partition for tp in assigned)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                batches = self.consumer.poll(timeout_ms=200)
                for tp, records in batches.items():
                    self.partitions_seen.add(tp.partition)
                    self.values.extend(r.value for r in records)
                if batches:
                    self.consumer.commit()
        finally:
            self.consumer.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        assert not self._thread.is_alive()


def explain(bootstrap: str, group: str, members: list[Member]) -> Callable[[], str]:
    """What each member and the coordinator believe, for a failure message."""

    def describe() -> str:
        lines = []
        for m in members:
            # Private: kafka-python has no public view of its group membership.
            coordinator = m.consumer._coordinator  # type: ignore[attr-defined]
            lines.append(
                f"{m.name}: assignment {sorted(m.assignment)}, {coordinator._generation}, "
                f"state {coordinator.state}, rejoin needed {coordinator.rejoin_needed}"
            )
        try:
            admin = KafkaAdminClient(bootstrap_servers=bootstrap)
            try:
                lines.append(f"broker: {admin.describe_groups([group])[group]}")
            finally:
                admin.close()
        except Exception as exc:  # the explanation must not hide the failure it explains
            lines.append(f"broker: DescribeGroups failed: {exc!r}")
        # Where each thread of the clients is (a member stuck in a rebalance shows where it waits).
        names = {t.ident: t.name for t in threading.enumerate()}
        for ident, frame in sys._current_frames().items():
            lines.append(
                f"thread {names.get(ident, ident)}:\n" + "".join(traceback.format_stack(frame)[-12:])
            )
        return "\n".join(lines)

    return describe


def settled(members: list[Member]) -> bool:
    shares = [m.assignment for m in members]
    every = [p for share in shares for p in share]
    return all(shares) and len(every) == len(set(every)) == PARTITIONS


def test_three_members_share_six_partitions_and_one_leaves(broker_factory: BrokerFactory) -> None:
    broker = broker_factory(overrides=GROUP_OVERRIDES)
    topic = create_topic(broker.bootstrap, PARTITIONS)
    group = unique("kp3-share")
    members = [Member(broker.bootstrap, group, topic, f"kp3-{i}") for i in range(3)]
    try:
        wait_for(
            "three disjoint shares of six partitions",
            lambda: settled(members),
            explain=explain(broker.bootstrap, group, members),
        )
        assert sorted(len(m.assignment) for m in members) == [2, 2, 2]

        first = produce(broker.bootstrap, topic, PARTITIONS, 300)
        wait_for("300 records consumed", lambda: sum(len(m.values) for m in members) >= 300)
        for m in members:
            assert m.partitions_seen <= m.assignment

        leaving, staying = members[0], members[1:]
        left_at = time.monotonic()
        leaving.stop()
        wait_for(
            "two members sharing six partitions",
            lambda: settled(staying),
            timeout=SESSION_MS / 1000,
            explain=explain(broker.bootstrap, group, staying),
        )
        assert time.monotonic() - left_at < SESSION_MS / 1000

        second = produce(broker.bootstrap, topic, PARTITIONS, 300, start=300)
        wait_for_commits_at(broker.bootstrap, group, topic, PARTITIONS, 600 // PARTITIONS)
        seen = Counter(v for m in members for v in m.values)
        assert set(seen) == set(first + second)
        assert max(seen.values()) == 1, [v for v, n in seen.items() if n > 1][:10]
    finally:
        for m in members[1:]:
            m.stop()


def test_admin_client(broker_factory: BrokerFactory) -> None:
    broker = broker_factory(overrides=GROUP_OVERRIDES)
    topic = create_topic(broker.bootstrap, PARTITIONS)
    produce(broker.bootstrap, topic, PARTITIONS, 60)
    group = unique("kp3-admin")
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    member = Member(broker.bootstrap, group, topic, "kp3-admin-member")
    try:
        wait_for("60 records consumed", lambda: len(member.values) >= 60)
        listed = {g["group_id"]: g for g in admin.list_groups()}
        assert listed[group]["group_state"] == "Stable"
        assert listed[group]["protocol_type"] == "consumer"
        assert group in {g["group_id"] for g in admin.list_groups(states_filter=["Stable"])}
        assert group not in {g["group_id"] for g in admin.list_groups(states_filter=["Empty"])}

        described = admin.describe_groups([group])[group]
        assert (described["group_state"], described["protocol_data"]) == ("Stable", "range")
        (m,) = described["members"]
        assert (m["client_id"], m["client_host"]) == ("kp3-admin-member", "/127.0.0.1")
        assert m["member_metadata"]["topics"] == [topic]
        (assigned,) = m["member_assignment"]["assigned_partitions"]
        assert (assigned["topic"], sorted(assigned["partitions"])) == (topic, list(range(PARTITIONS)))

        # Offsets of a topic the members consume cannot be deleted while they do.
        answer = admin.delete_group_offsets(group, [TopicPartition(topic, 0)])
        assert answer[TopicPartition(topic, 0)].__name__ == "GroupSubscribedToTopicError"
    finally:
        member.stop()

    offsets = admin.list_group_offsets(group)[group]
    assert {tp.partition: o.offset for tp, o in offsets.items()} == dict.fromkeys(range(PARTITIONS), 10)

    answer = admin.delete_group_offsets(group, [TopicPartition(topic, 0)])
    assert answer[TopicPartition(topic, 0)].__name__ == "NoError"
    offsets = admin.list_group_offsets(group)[group]
    assert sorted(tp.partition for tp in offsets) == list(range(1, PARTITIONS))

    assert admin.delete_groups([group, "no-such-group"]) == {
        group: "OK",
        "no-such-group": "GroupIdNotFoundError",
    }
    assert group not in {g["group_id"] for g in admin.list_groups()}
    admin.close()
