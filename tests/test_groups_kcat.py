"""Consumer groups through kcat 1.7.1 (librdkafka 2.0.2) `-G`, as subprocesses, against a real broker process.

librdkafka 2.0.2 enables its balanced consumer only if our version ranges overlap FindCoordinator 0, OffsetCommit 1-2,
OffsetFetch 1, JoinGroup/SyncGroup/Heartbeat/LeaveGroup 0 (PROTOCOL.md 2d); it then uses FindCoordinator v2,
JoinGroup v5, SyncGroup v3, Heartbeat v3, LeaveGroup v1, OffsetCommit v7 and OffsetFetch v7 (flexible). kcat commits
with librdkafka's auto commit (every 5 s, and on a clean exit), so a killed member's last records may be consumed again
by the member that takes its partitions: at least once, nothing skipped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from tests.conftest import BrokerFactory
from tests.test_groups_support import GROUP_OVERRIDES, create_topic, produce, unique, wait_for

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 6
SESSION_MS = 3000


class KcatMember:
    """`kcat -G GROUP TOPIC`: prints "partition offset value" per record, unbuffered."""

    def __init__(self, kcat: Path, bootstrap: str, group: str, topic: str, name: str, *extra: str) -> None:
        self.name = name
        self.process = subprocess.Popen(
            [
                str(kcat),
                "-b",
                bootstrap,
                "-u",
                "-q",
                # Not `-o beginning`: in -G mode kcat would start every assigned partition there, ignoring commits.
                "-X",
                "auto.offset.reset=earliest",
                "-X",
                f"client.id={name}",
                "-X",
                f"session.timeout.ms={SESSION_MS}",
                "-X",
                "heartbeat.interval.ms=300",
                "-f",
                "%p %o %s\\n",
                *extra,
                "-G",
                group,
                topic,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.records: list[tuple[int, int, str]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            partition, offset, value = line.split()
            self.records.append((int(partition), int(offset), value))

    def values(self) -> list[str]:
        return [v for _, _, v in self.records]

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        """SIGTERM: kcat leaves the group and commits what it consumed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.kill()
        self._reader.join(5)


def shares(admin: AdminClient, group: str) -> dict[str, frozenset[int]] | None:
    """client id -> assigned partitions while the group is stable, else None."""
    described = admin.describe_consumer_groups([group])[group].result(30)
    if described.state.name != "STABLE":
        return None
    return {
        m.client_id: frozenset(tp.partition for tp in m.assignment.topic_partitions)
        for m in described.members
    }


def disjoint_cover(found: dict[str, frozenset[int]] | None, members: int) -> dict[str, frozenset[int]] | None:
    if found is None or len(found) != members:
        return None
    every = [p for share in found.values() for p in share]
    if not all(found.values()) or len(every) != len(set(every)) or len(every) != PARTITIONS:
        return None
    return found


def test_kcat_members_share_partitions_and_a_killed_one_is_replaced(
    broker_factory: BrokerFactory, kcat_path: Path
) -> None:
    broker = broker_factory(overrides=GROUP_OVERRIDES)
    topic = create_topic(broker.bootstrap, PARTITIONS)
    group = unique("kcat")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    members = [KcatMember(kcat_path, broker.bootstrap, group, topic, f"kcat-{i}") for i in range(3)]
    try:
        settled = wait_for(
            "three kcat members with two partitions each", lambda: disjoint_cover(shares(admin, group), 3)
        )
        assert sorted(len(s) for s in settled.values()) == [2, 2, 2]

        first = produce(broker.bootstrap, topic, PARTITIONS, 300)
        wait_for("300 records consumed", lambda: sum(len(m.records) for m in members) >= 300)
        for m in members:
            assert {p for p, _, _ in m.records} <= settled[m.name]
        assert Counter(v for m in members for v in m.values()) == Counter(v.decode() for v in first)

        # kill -9: no LeaveGroup; the broker notices when the session times out and moves the partitions.
        victim, survivors = members[0], members[1:]
        killed_at = time.monotonic()
        victim.kill()
        after = wait_for(
            "two kcat members sharing six partitions",
            lambda: disjoint_cover(shares(admin, group), 2),
            timeout=SESSION_MS / 1000 + 10,
        )
        moved_after = time.monotonic() - killed_at
        # Session timeout, then the survivors' next heartbeat and rejoin; well under twice the timeout.
        assert moved_after < 2 * SESSION_MS / 1000, moved_after
        assert set(after) == {m.name for m in survivors}

        second = produce(broker.bootstrap, topic, PARTITIONS, 300, start=300)
        expected = {v.decode() for v in first + second}
        wait_for(
            "every record consumed",
            lambda: {v for m in members for v in m.values()} >= expected,
        )
        # At least once: the victim's uncommitted records may come again, from its partitions only.
        seen = Counter(v for m in members for v in m.values())
        victim_values = set(victim.values())
        assert all(n == 1 or v in victim_values for v, n in seen.items())
    finally:
        for m in members[1:]:
            m.stop()

    # After a clean exit the group resumes from its committed offsets: a new member sees only new records.
    third = produce(broker.bootstrap, topic, PARTITIONS, 12, start=600)
    result = subprocess.run(
        [
            str(kcat_path),
            "-b",
            broker.bootstrap,
            "-q",
            "-e",
            "-f",
            "%s\\n",
            "-G",
            group,
            topic,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert sorted(result.stdout.split()) == sorted(v.decode() for v in third), result.stderr[-2000:]
