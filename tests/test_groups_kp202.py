"""Consumer groups through kafka-python 2.0.2 (its own venv, as subprocesses), against a real broker process.

kafka-python 2.0.2 does not negotiate versions: it hard-codes FindCoordinator v0, JoinGroup v2, SyncGroup v1,
Heartbeat v1, LeaveGroup v1, OffsetCommit v2 and OffsetFetch v1 (PROTOCOL.md 4.1), the oldest versions any of our
clients sends.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient

from tests.conftest import BrokerFactory
from tests.test_groups_support import GROUP_OVERRIDES, committed, create_topic, produce, unique, wait_for

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 6
SESSION_MS = 3000

# A group member as an application would write it: subscribe, process, commit synchronously. One JSON line per
# record and per assignment; exits cleanly (LeaveGroup) on SIGTERM.
MEMBER_SCRIPT = r"""
import json, signal, sys
from kafka import KafkaConsumer
from kafka.consumer.subscription_state import ConsumerRebalanceListener

bootstrap, group, topic, name, session_ms = sys.argv[1:]
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

class Listener(ConsumerRebalanceListener):
    def on_partitions_revoked(self, revoked):
        print(json.dumps({"revoked": sorted(tp.partition for tp in revoked)}), flush=True)

    def on_partitions_assigned(self, assigned):
        print(json.dumps({"assigned": sorted(tp.partition for tp in assigned)}), flush=True)

consumer = KafkaConsumer(
    bootstrap_servers=bootstrap, group_id=group, client_id=name, auto_offset_reset="earliest",
    enable_auto_commit=False, session_timeout_ms=int(session_ms), heartbeat_interval_ms=300,
)
consumer.subscribe([topic], listener=Listener())
while not stop:
    batches = consumer.poll(timeout_ms=200)
    for tp, records in batches.items():
        for r in records:
            print(json.dumps({"partition": r.partition, "offset": r.offset, "value": r.value.decode()}), flush=True)
    if batches:
        consumer.commit()
consumer.close()
print(json.dumps({"closed": True}), flush=True)
"""


class Kp202Member:
    def __init__(self, python: Path, bootstrap: str, group: str, topic: str, name: str) -> None:
        self.name = name
        self.process = subprocess.Popen(
            [str(python), "-c", MEMBER_SCRIPT, bootstrap, group, topic, name, str(SESSION_MS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(json.loads(line))

    def values(self) -> list[str]:
        return [line["value"] for line in self.lines if "value" in line]

    def partitions_seen(self) -> set[int]:
        return {line["partition"] for line in self.lines if "value" in line}

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.kill()
        self._reader.join(5)

    def stderr(self) -> str:
        assert self.process.stderr is not None
        return self.process.stderr.read() if self.process.poll() is not None else ""


def shares(admin: AdminClient, group: str, members: int) -> dict[str, frozenset[int]] | None:
    """client id -> partitions once the group is stable with `members` members sharing all partitions."""
    described = admin.describe_consumer_groups([group])[group].result(30)
    if described.state.name != "STABLE" or len(described.members) != members:
        return None
    found = {
        m.client_id: frozenset(tp.partition for tp in m.assignment.topic_partitions)
        for m in described.members
    }
    every = [p for share in found.values() for p in share]
    if not all(found.values()) or len(every) != len(set(every)) or len(every) != PARTITIONS:
        return None
    return found


def test_kp202_members_share_leave_and_die(broker_factory: BrokerFactory, kp202_python: Path) -> None:
    broker = broker_factory(overrides=GROUP_OVERRIDES)
    topic = create_topic(broker.bootstrap, PARTITIONS)
    group = unique("kp202")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    members = [Kp202Member(kp202_python, broker.bootstrap, group, topic, f"kp202-{i}") for i in range(3)]
    try:
        settled = wait_for("three members with two partitions each", lambda: shares(admin, group, 3))
        assert sorted(len(s) for s in settled.values()) == [2, 2, 2]

        first = produce(broker.bootstrap, topic, PARTITIONS, 300)
        wait_for("300 records consumed", lambda: sum(len(m.values()) for m in members) >= 300)
        for m in members:
            assert m.partitions_seen() <= settled[m.name]
        assert Counter(v for m in members for v in m.values()) == Counter(v.decode() for v in first)
        # Nothing in flight before members go: every processed record is committed.
        wait_for(
            "offsets committed",
            lambda: committed(admin, group, topic, PARTITIONS) == dict.fromkeys(range(PARTITIONS), 50),
        )

        # A clean exit: LeaveGroup v1, the partitions move at once.
        leaving = members[0]
        left_at = time.monotonic()
        leaving.stop()
        wait_for(
            "two members sharing six partitions", lambda: shares(admin, group, 2), timeout=SESSION_MS / 1000
        )
        assert time.monotonic() - left_at < SESSION_MS / 1000

        # kill -9: the survivor gets everything once the victim's session has expired.
        victim, survivor = members[1], members[2]
        killed_at = time.monotonic()
        victim.kill()
        wait_for(
            "one member with six partitions", lambda: shares(admin, group, 1), timeout=SESSION_MS / 1000 + 10
        )
        assert time.monotonic() - killed_at < 2 * SESSION_MS / 1000

        second = produce(broker.bootstrap, topic, PARTITIONS, 300, start=300)
        expected = {v.decode() for v in first + second}
        wait_for("every record consumed", lambda: {v for m in members for v in m.values()} >= expected)
        # Every commit was synchronous after processing, and no member went with a commit in flight.
        seen = Counter(v for m in members for v in m.values())
        assert max(seen.values()) == 1, [v for v, n in seen.items() if n > 1][:10]
    finally:
        for m in members:
            m.stop()
    assert {"closed": True} in survivor.lines, survivor.stderr()[-3000:]
