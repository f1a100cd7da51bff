"""Transactions and exactly-once with stock clients, the same scenarios and assertions against every target (kbroker
and Apache Kafka 3.9.2 / 4.3.1): docs/transactions.md.

- The Java producer commits and aborts transactions over six partitions: read_committed consumers see exactly the
  committed records, read_uncommitted ones every record, aborted included (compat/java/TxnHarness.java).
- Java's consume-transform-produce recipe (a read_committed consumer, sendOffsetsToTransaction with the consumer's
  group metadata, KIP-447), killed with SIGKILL at random points and started again: the output holds every input
  record exactly once, and the group's offsets are the input's end.
- A zombie: two Java producers with one transactional id; the older is fenced, its records never visible.
- confluent-kafka's transactional API (init, begin, send_offsets_to_transaction, commit, abort with a rewind), and a
  zombie of its own.
- franz-go's GroupTransactSession copying a topic exactly once (compat/go/franz's txn-copy).
- A Kafka Streams word count (kafka-streams 3.9.2 from Maven Central, compat/streams/) with
  processing.guarantee=exactly_once_v2, killed with SIGKILL twice while its input arrives and started again: every
  word's count comes out exact, and no count ever went past it.

The transactional ids are unique per run (a long-lived Kafka target keeps them).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from compat.clients.franz import FranzProgram
from compat.clients.java import JVM_OPTIONS, JavaHarness
from compat.streams.install import InstallFailed, install, is_installed
from compat.target import Target
from tests.conftest import missing_tool

pytestmark = pytest.mark.timeout(300)

BUILD_DIR = Path(__file__).resolve().parent / "java" / "build"
TXN_SOURCE = Path(__file__).resolve().parent / "java" / "TxnHarness.java"
STREAMS_SOURCE = Path(__file__).resolve().parent / "java" / "StreamsWordCount.java"
STREAMS_BUILD_DIR = Path(__file__).resolve().parent / "java" / "build-streams"
READ_TIMEOUT_S = 60.0


@pytest.fixture(scope="session")
def txn_java(java_tools: tuple[str, str], kafka_clients_classpath: list[Path]) -> JavaHarness:
    javac, java = java_tools
    return JavaHarness.compile(javac, java, kafka_clients_classpath, BUILD_DIR, source=TXN_SOURCE)


# ---- helpers -------------------------------------------------------------------------------------------------------


def produce_plain(bootstrap: str, topic: str, partitions: int, count: int) -> list[bytes]:
    """`count` records "in-<i>" round-robin over the partitions, acknowledged."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    values = [b"in-%d" % i for i in range(count)]
    for i, value in enumerate(values):
        producer.produce(topic, value=value, key=b"k%d" % i, partition=i % partitions)
    assert producer.flush(60) == 0
    return values


def wait_stable(bootstrap: str, topic: str, partitions: int) -> None:
    """Until no transaction is open on the topic: every partition's last stable offset is its high watermark (a
    coordinator writes the markers after EndTxn is answered, so a transaction just committed may not be readable
    yet at read_committed)."""

    def ends(isolation: str) -> list[int]:
        consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": "compat-ends", "isolation.level": isolation}
        )
        try:
            return [
                consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30, cached=False)[1]
                for p in range(partitions)
            ]
        finally:
            consumer.close()

    deadline = time.monotonic() + READ_TIMEOUT_S
    while ends("read_committed") != ends("read_uncommitted"):
        assert time.monotonic() < deadline, f"transactions on {topic} still open after {READ_TIMEOUT_S} s"
        time.sleep(0.2)


class Read(NamedTuple):
    partition: int
    offset: int
    value: bytes
    key: bytes | None = None


def read_all(bootstrap: str, topic: str, partitions: int, isolation: str) -> list[Read]:
    """Every record a consumer at `isolation` reads from the start to the end, once no transaction is open."""
    wait_stable(bootstrap, topic, partitions)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"compat-reader-{time.monotonic_ns()}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        at_end: set[int] = set()
        out: list[Read] = []
        deadline = time.monotonic() + READ_TIMEOUT_S
        while len(at_end) < partitions and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            error = message.error()
            partition, offset = message.partition(), message.offset()
            assert partition is not None
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(partition)
                    continue
                raise KafkaException(error)
            assert offset is not None
            at_end.discard(partition)
            out.append(Read(partition, offset, message.value() or b"", message.key()))
        assert len(at_end) == partitions, f"did not reach the end of {topic} within {READ_TIMEOUT_S} s"
        return out
    finally:
        consumer.close()


def committed_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "isolation.level": "read_committed"}
    )
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=30)
        return {tp.partition: tp.offset for tp in found}
    finally:
        consumer.close()


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "compat-offsets"})
    try:
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
            for p in range(partitions)
        }
    finally:
        consumer.close()


def assert_exactly_once(copies: list[Read], inputs: list[bytes]) -> None:
    counts = Counter(read.value for read in copies)
    expected = Counter(b"copy:" + value for value in inputs)
    duplicated = sorted(v for v, n in counts.items() if n > 1)
    missing = sorted(expected - counts)
    extra = sorted(counts - expected)
    assert (duplicated, missing, extra) == ([], [], []), "the copy is not exactly once"


# ---- the Java client -----------------------------------------------------------------------------------------------


def test_java_commit_and_abort(target: Target, txn_java: JavaHarness) -> None:
    topic = target.topic("txn-java")
    target.create_topic(topic, 6)
    lines = txn_java.run(target.bootstrap, "produce-read", topic, f"tx-{topic}", "6", "40")
    decided = {line["txn"]: line["committed"] for line in lines if "txn" in line}
    assert decided == {t: t % 2 == 0 for t in range(6)}
    reads = {line["isolation"]: line["records"] for line in lines if "isolation" in line}
    everything = {f"t{t}-{j}" for t in range(6) for j in range(40)}
    committed = {f"t{t}-{j}" for t in range(0, 6, 2) for j in range(40)}
    read_committed = [value for _, _, value in reads["read_committed"]]
    assert sorted(read_committed) == sorted(committed), "read_committed sees the committed records, once each"
    assert sorted(value for _, _, value in reads["read_uncommitted"]) == sorted(everything)
    # In order within each partition, with the gaps the markers and aborted records leave.
    by_partition: dict[int, list[str]] = {}
    for partition, _, value in reads["read_committed"]:
        by_partition.setdefault(partition, []).append(value)
    for partition, values in by_partition.items():
        assert values == [f"t{t}-{j}" for t in range(0, 6, 2) for j in range(40) if j % 6 == partition]


def test_java_zombie_is_fenced(target: Target, txn_java: JavaHarness) -> None:
    topic = target.topic("txn-zombie")
    target.create_topic(topic, 1)
    lines = txn_java.run(target.bootstrap, "zombie", topic, f"tx-{topic}")
    assert {"fresh": "committed"} in lines
    [zombie] = [line["zombie"] for line in lines if "zombie" in line]
    assert zombie in ("ProducerFencedException", "InvalidProducerEpochException"), zombie
    [read] = [line["records"] for line in lines if "records" in line]
    assert [value for _, _, value in read] == ["fresh"]


class Copier:
    """A running `TxnHarness copy`, its progress lines counted, killed with SIGKILL on request."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.commits = 0
        self.done: int | None = None
        self.stderr = ""
        self._changed = threading.Condition()
        self._threads = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for text in self.process.stdout:
            line: dict[str, Any] = json.loads(text)
            with self._changed:
                if "committed" in line:
                    self.commits += 1
                if "done" in line:
                    self.done = line["done"]
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()

    def wait_commits(self, count: int, timeout: float = 120.0) -> None:
        with self._changed:
            ok = self._changed.wait_for(
                lambda: self.commits >= count or self.process.poll() is not None, timeout=timeout
            )
        assert ok, f"no progress: {self.commits} commits\n{self.stderr[-4000:]}"
        assert self.commits >= count, f"exited after {self.commits} commits\n{self.stderr[-4000:]}"

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def finish(self, timeout: float = 180.0) -> int:
        code = self.process.wait(timeout=timeout)
        for thread in self._threads:
            thread.join(timeout=10)
        assert code == 0, f"copy exited {code}\n{self.stderr[-6000:]}"
        assert self.done is not None
        return self.done


# The kill -9 scenarios cost tens of seconds each: Apache Kafka 3.9.2 alone is their reference (4.3.1 answered alike).
@pytest.mark.only_targets("kbroker", "kafka-3.9.2")
def test_java_consume_transform_produce_exactly_once_across_kill_9(
    target: Target, txn_java: JavaHarness
) -> None:
    partitions, count = 3, 3_000
    source, sink = target.topic("eos-in"), target.topic("eos-out")
    target.create_topic(source, partitions)
    target.create_topic(sink, partitions)
    inputs = produce_plain(target.bootstrap, source, partitions, count)
    group, transactional_id = f"eos-{source}", f"eos-tx-{source}"
    config = {
        # Small transactions (300 of them): a copier commits a hundred a second, so with 50 records each the three
        # killed runs (up to 0.3 s past their random commit count, when the kill lands) could copy everything and
        # leave the last run nothing to do (seen in CI: kills after 12, 41 and 7 of 60 commits).
        "max.poll.records": "10",
        # A killed static member stays in the group until its session expires; its successor takes its place at
        # once (same group.instance.id), so a short session only matters if it does not come back.
        "session.timeout.ms": "10000",
    }
    command = txn_java.command(target.bootstrap, "copy", source, sink, group, transactional_id, config=config)
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    kills = []
    for _ in range(3):
        copier = Copier(command)
        # Killed after a random number of commits: mid-transaction, between transactions, whatever the moment is.
        at = rng.randint(1, 6)
        copier.wait_commits(at)
        time.sleep(rng.uniform(0, 0.3))
        copier.kill()
        kills.append(copier.commits)
    done = Copier(command).finish()
    assert done > 0, f"the last run copied nothing (seed {seed}, kills after {kills} commits)"
    copies = read_all(target.bootstrap, sink, partitions, "read_committed")
    assert_exactly_once(copies, inputs)
    assert committed_offsets(target.bootstrap, group, source, partitions) == end_offsets(
        target.bootstrap, source, partitions
    )


# ---- confluent-kafka (librdkafka) ----------------------------------------------------------------------------------


def test_confluent_transactions_with_offsets_and_an_abort(target: Target) -> None:
    partitions, count = 3, 600
    source, sink = target.topic("ck-in"), target.topic("ck-out")
    target.create_topic(source, partitions)
    target.create_topic(sink, partitions)
    inputs = produce_plain(target.bootstrap, source, partitions, count)
    group = f"ck-{source}"
    consumer = Consumer(
        {
            "bootstrap.servers": target.bootstrap,
            "group.id": group,
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    producer = Producer({"bootstrap.servers": target.bootstrap, "transactional.id": f"ck-tx-{source}"})
    producer.init_transactions(60)
    consumer.subscribe([source])
    copied = aborted = 0
    deadline = time.monotonic() + 120
    try:
        while copied < count and time.monotonic() < deadline:
            messages = [m for m in consumer.consume(100, timeout=1.0) if m.error() is None]
            if not messages:
                continue
            producer.begin_transaction()
            for m in messages:
                partition = m.partition()
                assert partition is not None
                producer.produce(sink, value=b"copy:" + (m.value() or b""), key=m.key(), partition=partition)
            if aborted == 0 and copied > count // 3:
                # Abort one transaction (its copies reach the log first) and go back to the committed offsets.
                producer.flush(30)
                producer.abort_transaction(60)
                aborted = len(messages)
                committed = consumer.committed(consumer.assignment(), timeout=30)
                for tp in committed:
                    consumer.seek(TopicPartition(tp.topic, tp.partition, max(tp.offset, 0)))
                continue
            producer.send_offsets_to_transaction(
                consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 60
            )
            producer.commit_transaction(60)
            copied += len(messages)
    finally:
        consumer.close()
    assert aborted > 0
    assert copied == count
    assert_exactly_once(read_all(target.bootstrap, sink, partitions, "read_committed"), inputs)
    uncommitted = read_all(target.bootstrap, sink, partitions, "read_uncommitted")
    assert len(uncommitted) == count + aborted, (
        "the aborted copies are in the log, invisible to read_committed"
    )
    assert committed_offsets(target.bootstrap, group, source, partitions) == end_offsets(
        target.bootstrap, source, partitions
    )


def test_confluent_zombie_is_fenced(target: Target) -> None:
    topic = target.topic("ck-zombie")
    target.create_topic(topic, 1)
    transactional_id = f"ck-zombie-{topic}"
    zombie = Producer({"bootstrap.servers": target.bootstrap, "transactional.id": transactional_id})
    zombie.init_transactions(60)
    zombie.begin_transaction()
    zombie.produce(topic, value=b"zombie", partition=0)
    zombie.flush(30)
    fresh = Producer({"bootstrap.servers": target.bootstrap, "transactional.id": transactional_id})
    fresh.init_transactions(60)  # fences the zombie (its transaction is aborted first)
    with pytest.raises(KafkaException) as failure:
        zombie.commit_transaction(30)
    error = failure.value.args[0]
    assert error.fatal() or error.txn_requires_abort(), error
    fresh.begin_transaction()
    fresh.produce(topic, value=b"fresh", partition=0)
    fresh.commit_transaction(60)
    assert [r.value for r in read_all(target.bootstrap, topic, 1, "read_committed")] == [b"fresh"]
    assert sorted(r.value for r in read_all(target.bootstrap, topic, 1, "read_uncommitted")) == [
        b"fresh",
        b"zombie",
    ]


# ---- franz-go ------------------------------------------------------------------------------------------------------


def test_franz_group_transact_session_copies_exactly_once(
    target: Target, franz_program: FranzProgram
) -> None:
    partitions, count = 3, 1_000
    source, sink = target.topic("franz-in"), target.topic("franz-out")
    target.create_topic(source, partitions)
    target.create_topic(sink, partitions)
    inputs = produce_plain(target.bootstrap, source, partitions, count)
    group = f"franz-{source}"
    lines = franz_program.run(
        target.bootstrap, "txn-copy", source, sink, group, f"franz-tx-{source}", str(count)
    )
    assert lines[-1]["done"] == count
    assert_exactly_once(read_all(target.bootstrap, sink, partitions, "read_committed"), inputs)
    assert committed_offsets(target.bootstrap, group, source, partitions) == end_offsets(
        target.bootstrap, source, partitions
    )


# ---- Kafka Streams -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def streams_word_count(java_tools: tuple[str, str]) -> list[str]:
    """The command that runs compat/java/StreamsWordCount.java (compiled against Kafka Streams), arguments to add."""
    javac, java = java_tools
    if not is_installed() and shutil.which("mvn") is None:
        missing_tool("mvn is not installed (apt package maven), needed to resolve Kafka Streams")
    try:
        libs = install()
    except InstallFailed as error:
        pytest.fail(str(error))
    classpath = sorted(libs.glob("*.jar"))
    program = JavaHarness.compile(javac, java, classpath, STREAMS_BUILD_DIR, source=STREAMS_SOURCE)
    return [java, *JVM_OPTIONS, "-cp", program.classpath, program.main]


WORDS = [f"word{i}" for i in range(25)]


@pytest.mark.only_targets("kbroker", "kafka-3.9.2")
def test_kafka_streams_exactly_once_v2_word_count_across_kill_9(
    target: Target, streams_word_count: list[str], tmp_path: Path
) -> None:
    source, sink = target.topic("wc-in"), target.topic("wc-out")
    target.create_topic(source, 3)
    target.create_topic(sink, 3)
    rng = random.Random()
    lines = [" ".join(rng.choice(WORDS) for _ in range(5)) for _ in range(900)]
    expected = Counter(word for line in lines for word in line.split())
    command = [
        *streams_word_count,
        target.bootstrap,
        f"wc-{source}",
        source,
        sink,
        str(tmp_path / "state"),
        str(target.replication_factor),
    ]

    def feed() -> None:
        # The input arrives while the application runs and is killed: 18 chunks, 0.4 s apart.
        producer = Producer({"bootstrap.servers": target.bootstrap, "enable.idempotence": True})
        for start in range(0, len(lines), 50):
            for line in lines[start : start + 50]:
                producer.produce(source, value=line.encode())
            producer.flush(30)
            time.sleep(0.4)
        assert producer.flush(30) == 0

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    for _ in range(2):
        app = StreamsApp(command)
        app.wait_running()
        time.sleep(rng.uniform(0.5, 2.5))
        app.kill()
    app = StreamsApp(command)
    try:
        app.wait_running()
        feeder.join(timeout=60)
        deadline = time.monotonic() + 120
        while True:
            counts = latest_counts(target.bootstrap, sink)
            if counts == expected or time.monotonic() > deadline:
                break
            time.sleep(1)
    finally:
        app.stop()
    reads = read_all(target.bootstrap, sink, 3, "read_committed")
    seen: dict[str, int] = {}
    for read in reads:
        assert read.key is not None
        word, count = read.key.decode(), int.from_bytes(read.value, "big", signed=True)
        assert count <= expected[word], f"{word} counted {count} times, more than its {expected[word]}"
        seen[word] = count
    assert seen == dict(expected)


def latest_counts(bootstrap: str, topic: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for read in read_all(bootstrap, topic, 3, "read_committed"):
        assert read.key is not None
        counts[read.key.decode()] = int.from_bytes(read.value, "big", signed=True)
    return counts


class StreamsApp:
    """A running StreamsWordCount: its state changes followed; killed with SIGKILL, or stopped cleanly."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.states: list[str] = []
        self.stderr = ""
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for text in self.process.stdout:
            line = json.loads(text)
            with self._changed:
                if "state" in line:
                    self.states.append(line["state"])
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()

    def wait_running(self, timeout: float = 120.0) -> None:
        with self._changed:
            self._changed.wait_for(
                lambda: "RUNNING" in self.states or self.process.poll() is not None, timeout=timeout
            )
            assert "RUNNING" in self.states, f"states {self.states}\n{self.stderr[-6000:]}"

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.kill()
