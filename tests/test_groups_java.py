"""Consumer groups through the Java client 3.9 (compat/java/Harness.java `group-consume`), mixed with librdkafka.

The Java consumer uses FindCoordinator v4+ (batched keys), JoinGroup v9, SyncGroup v5, Heartbeat v4, LeaveGroup v5,
OffsetCommit/OffsetFetch v9, and offers `[range, cooperative-sticky]`; librdkafka offers `[range, roundrobin]`. A
mixed group must settle on `range`, the only protocol both support (PROTOCOL.md 2d).
"""

from __future__ import annotations

import base64
import json
import subprocess
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient

from compat.clients.java import JVM_OPTIONS, JavaHarness
from tests.conftest import BrokerFactory
from tests.test_groups_support import (
    GROUP_OVERRIDES,
    ConfluentMember,
    create_topic,
    produce,
    unique,
    wait_for,
    wait_for_commits_at,
)

pytestmark = pytest.mark.timeout(180)

PARTITIONS = 6
SESSION_MS = 6000


@pytest.fixture(scope="module")
def harness(
    java_tools: tuple[str, str], kafka_clients_classpath: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> JavaHarness:
    javac, java = java_tools
    return JavaHarness.compile(javac, java, kafka_clients_classpath, tmp_path_factory.mktemp("harness"))


class JavaMember:
    """`Harness group-consume`: a KafkaConsumer subscribed in a group, JSON lines on stdout, read as they come."""

    def __init__(
        self, harness: JavaHarness, bootstrap: str, group: str, topic: str, name: str, idle_ms: int
    ) -> None:
        self.name = name
        config = {"client.id": name, "session.timeout.ms": str(SESSION_MS), "heartbeat.interval.ms": "500"}
        options = [arg for key, value in config.items() for arg in ("--config", f"{key}={value}")]
        self.process = subprocess.Popen(
            [
                harness.java,
                *JVM_OPTIONS,
                "-cp",
                harness.classpath,
                "Harness",
                "--bootstrap",
                bootstrap,
                *options,
                "group-consume",
                topic,
                group,
                "1000000",
                str(idle_ms),
            ],
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

    def values(self) -> list[bytes]:
        return [base64.b64decode(line["value"]) for line in self.lines if "offset" in line]

    def partitions_seen(self) -> set[int]:
        return {line["partition"] for line in self.lines if "offset" in line}

    def wait(self) -> None:
        try:
            self.process.wait(60)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(10)
        self._reader.join(5)
        assert self.process.stderr is not None
        assert self.process.returncode == 0, self.process.stderr.read()[-4000:]


@pytest.fixture
def members() -> Iterator[list[JavaMember | ConfluentMember]]:
    started: list[JavaMember | ConfluentMember] = []
    yield started
    for m in started:
        if isinstance(m, JavaMember):
            if m.process.poll() is None:
                m.process.kill()
                m.process.wait(10)
        else:
            m.stop()


def describe(admin: AdminClient, group: str) -> tuple[str, dict[str, frozenset[int]]] | None:
    """(assignor, client id -> partitions) once the group is stable with three members sharing all partitions."""
    described = admin.describe_consumer_groups([group])[group].result(30)
    if described.state.name != "STABLE" or len(described.members) != 3:
        return None
    found = {
        m.client_id: frozenset(tp.partition for tp in m.assignment.topic_partitions)
        for m in described.members
    }
    every = [p for share in found.values() for p in share]
    if not all(found.values()) or len(every) != len(set(every)) or len(every) != PARTITIONS:
        return None
    return described.partition_assignor, found


def test_java_and_librdkafka_members_settle_on_range(
    broker_factory: BrokerFactory, harness: JavaHarness, members: list[JavaMember | ConfluentMember]
) -> None:
    broker = broker_factory(overrides=GROUP_OVERRIDES)
    topic = create_topic(broker.bootstrap, PARTITIONS)
    group = unique("mixed")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    # The Java members stop after 4 s without records, once they have consumed.
    java = [JavaMember(harness, broker.bootstrap, group, topic, f"java-{i}", idle_ms=4000) for i in range(2)]
    librdkafka = ConfluentMember(broker.bootstrap, group, topic, config={"client.id": "librdkafka-0"})
    members.extend([*java, librdkafka])

    assignor, shares = wait_for(
        "three members sharing six partitions", lambda: describe(admin, group), timeout=60
    )
    assert assignor == "range"
    assert sorted(len(s) for s in shares.values()) == [2, 2, 2]
    assert set(shares) == {"java-0", "java-1", "librdkafka-0"}

    records = produce(broker.bootstrap, topic, PARTITIONS, 600)
    for m in java:
        m.wait()  # consumed its share, then idle for 4 s: committed, left the group
    for m in java:
        assert m.partitions_seen() == shares[m.name], m.name
        assert not [line for line in m.lines if "commit_failed" in line]
    assert {p for p, _, _ in librdkafka.records} == shares["librdkafka-0"]
    seen = Counter(v for m in java for v in m.values()) + Counter(librdkafka.values())
    assert seen == Counter(records)

    # The Java members left: librdkafka takes over everything, from their committed offsets.
    wait_for("librdkafka alone with six partitions", lambda: len(librdkafka.assignment) == PARTITIONS)
    more = produce(broker.bootstrap, topic, PARTITIONS, 60, start=600)
    wait_for("the new records", lambda: set(librdkafka.values()) >= set(more))
    wait_for_commits_at(broker.bootstrap, group, topic, PARTITIONS, 660 // PARTITIONS)
    assert max((Counter(v for m in java for v in m.values()) + Counter(librdkafka.values())).values()) == 1
