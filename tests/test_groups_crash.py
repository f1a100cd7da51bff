"""The broker dies (kill -9) under a consuming group and comes back: the group resumes from its committed offsets.

An OffsetCommit is answered only once its record is fsynced in `__consumer_offsets`, and the coordinator reads the
log back at startup, so every acknowledged commit survives the crash; groups come back Stable with their members and
generation, so the consumers carry on without a rebalance. kill -9 keeps the page cache: the fsync itself is checked
in test_groups_wiring.py (recovery point after an acknowledged commit).
"""

from __future__ import annotations

import time
from collections import Counter

import pytest
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

pytestmark = pytest.mark.timeout(180)

PARTITIONS = 6
RECORDS = 3000


def test_broker_killed_mid_stream_group_resumes(broker_factory: BrokerFactory) -> None:
    broker = broker_factory(overrides=GROUP_OVERRIDES)
    topic = create_topic(broker.bootstrap, PARTITIONS)
    group = unique("crash")

    def committed_now() -> dict[int, int]:
        # A new admin client each time: one kept across a kill -9 and restart can lose a race of librdkafka's and
        # time out, whatever the broker (docs/kafka-differences.md, "Clients: a librdkafka race after a restart").
        return committed(AdminClient({"bootstrap.servers": broker.bootstrap}), group, topic, PARTITIONS)

    records = produce(broker.bootstrap, topic, PARTITIONS, RECORDS)
    # A slow application: 20 records at a time, committed after each batch.
    members = [ConfluentMember(broker.bootstrap, group, topic, batch=20, pace_s=0.02) for _ in range(2)]
    try:
        wait_for(
            "a third of the records consumed", lambda: sum(len(m.records) for m in members) >= RECORDS // 3
        )
        before = committed_now()
        assert sum(max(0, o) for o in before.values()) > 0
        broker.kill()
        consumed_at_crash = sum(len(m.records) for m in members)
        assert consumed_at_crash < RECORDS, "consumed everything before the crash: slow the members down"
        time.sleep(1)
        broker.start()

        # Nothing acknowledged was lost.
        after = committed_now()
        assert all(after[p] >= before[p] for p in range(PARTITIONS)), (before, after)

        wait_for(
            "every record consumed",
            lambda: {v for m in members for v in m.values()} >= set(records),
            timeout=90,
        )
        seen = Counter(v for m in members for v in m.values())
        # Only a batch whose commit the crash cut off may be seen twice.
        duplicates = [v for v, n in seen.items() if n > 1]
        assert len(duplicates) <= 2 * 20 * len(members), duplicates[:10]
    finally:
        for m in members:
            m.stop()

    # Both members committed everything on the way out. Crash again, right after: the commits are in the log.
    final = committed_now()
    assert final == dict.fromkeys(range(PARTITIONS), RECORDS // PARTITIONS)
    broker.kill()
    broker.start()
    assert committed_now() == final

    # A new member of the group starts where the group stopped: only the new records.
    newer = produce(broker.bootstrap, topic, PARTITIONS, 60, start=RECORDS)
    member = ConfluentMember(broker.bootstrap, group, topic)
    try:
        wait_for("the new records", lambda: len(member.records) >= 60)
        wait_for_commits_at(broker.bootstrap, group, topic, PARTITIONS, (RECORDS + 60) // PARTITIONS)
        assert Counter(member.values()) == Counter(newer)
    finally:
        member.stop()
