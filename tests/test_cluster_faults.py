"""Issue 4's fault tests: a 3-node cluster (etcd + three kbroker processes, tests/cluster_fixture.py) under kill -9.

- Idempotent acks=all producers (confluent-kafka in a thread, the Java client through compat/java/Harness.java in a
  subprocess) write continuously while the leader of the busiest partition is killed with SIGKILL five times in a
  row, each time restarted and waited for until it is back in every ISR. Every failover is timed: from the kill
  until a produce with acks=-1 to that partition is acknowledged by its new leader. Then every partition is read
  from offset 0 to the high watermark, every replica's log is dumped from disk, and kbroker.testing.history checks
  that each acknowledged record is present exactly once at the offset it was acknowledged with, offsets are dense,
  and no offset holds two values, in the read and in every replica.
- A consumer group that commits after processing keeps consuming across the kill of its coordinator (the leader of
  its `__consumer_offsets` partition), and every resume starts from its committed offsets: nothing skipped.
- kcat -L, kafka-python and confluent-kafka (new clients and long-lived ones) show the new leaders after a failover.

Run with -s to see the measured failover times.
"""

from __future__ import annotations

import base64
import json
import statistics
import subprocess
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition
from kafka.cluster import ClusterMetadata

import kbroker.common
from compat.clients.confluent import partition_offset, value_of
from compat.clients.java import JVM_OPTIONS, JavaHarness
from kbroker.log.config import LogConfig
from kbroker.log.log_manager import partition_dir_name
from kbroker.log.partition_log import PartitionLog
from kbroker.replication.client import BrokerClientError, SyncBrokerClient, parse_host_port
from kbroker.replication.topics_tool import ClusterDescription
from kbroker.testing.history import Ack, LogRecord, Verdict, check, write_jsonl
from protocol.errors import ErrorCode
from protocol.messages.find_coordinator_request import FindCoordinatorRequest
from protocol.messages.find_coordinator_response import FindCoordinatorResponse
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.messages.produce_response import ProduceResponse
from protocol.records import Record, build_batch, decode_records, iter_batches
from tests.cluster_fixture import Cluster, running_cluster

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(420)]

KILLS = 5
# Bounds: a failover takes about one registration lease (broker.session.timeout.ms = 3 s in the fixture); a
# restarted node needs a few seconds to catch up and rejoin the ISR.
FAILOVER_BOUND_S = 30.0
REJOIN_BOUND_S = 60.0
FLUSH_BOUND_S = 150.0


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with running_cluster(tmp_path, request=request) as c:
        yield c


@pytest.fixture(scope="module")
def harness(
    java_tools: tuple[str, str], kafka_clients_classpath: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> JavaHarness:
    javac, java = java_tools
    return JavaHarness.compile(javac, java, kafka_clients_classpath, tmp_path_factory.mktemp("harness"))


# ---- producers -------------------------------------------------------------------------------------------------


class ConfluentWriter:
    """An idempotent acks=all confluent-kafka producer writing unique values `confluent-N` from a thread until
    stopped, skewed so that partition 0 is the busiest (half the records; the rest spread over the others).
    Every delivery report is kept: acknowledgements as history Acks, failures as strings."""

    def __init__(self, cluster: Cluster, topic: str, partitions: int, rate_per_s: float = 200.0) -> None:
        self.topic = topic
        self.partitions = partitions
        self.interval = 1.0 / rate_per_s
        self.producer = Producer(
            {
                "bootstrap.servers": cluster.bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                # Long enough that no record times out during a failover: a record either is acknowledged or
                # the producer reports why not.
                "message.timeout.ms": 120_000,
                "topic.metadata.refresh.interval.ms": 1000,
            }
        )
        self.acks: list[Ack] = []
        self.ack_times: list[float] = []
        self.failed: list[str] = []
        self.sent = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="confluent-writer", daemon=True)

    def _on_delivery(self, err: KafkaError | None, msg: Message) -> None:
        with self._lock:
            if err is not None:
                self.failed.append(f"{msg.value()!r}: {err}")
            else:
                self.acks.append(Ack(self.topic, *partition_offset(msg), value_of(msg), "confluent"))
                self.ack_times.append(time.monotonic())

    def _run(self) -> None:
        while not self._stop.is_set():
            n = self.sent
            partition = 0 if n % 2 == 0 else 1 + (n // 2) % (self.partitions - 1)
            self.producer.produce(
                self.topic,
                value=f"confluent-{n}".encode(),
                partition=partition,
                on_delivery=self._on_delivery,
            )
            self.sent += 1
            self.producer.poll(self.interval)

    def start(self) -> ConfluentWriter:
        self._thread.start()
        return self

    def acked_per_partition(self) -> Counter[int]:
        with self._lock:
            return Counter(a.partition for a in self.acks)

    def acks_since(self, moment: float) -> int:
        with self._lock:
            return sum(1 for t in self.ack_times if t > moment)

    def stop(self) -> int:
        """Stop writing and wait for every outstanding delivery report; returns how many are still missing."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)
        return self.producer.flush(FLUSH_BOUND_S)


class JavaWriter:
    """The Java client (defaults: idempotent, acks=all) through Harness `produce`: records are fed on its stdin at
    a steady rate until stopped, value `java-I` to partition I % partitions. The Harness prints one JSON line per
    delivery (index, partition, offset, or an error) into a file, read once it has exited."""

    def __init__(
        self, harness: JavaHarness, cluster: Cluster, topic: str, partitions: int, out_dir: Path
    ) -> None:
        self.topic = topic
        self.partitions = partitions
        self.stdout_path = out_dir / "java-producer.out"
        self.stderr_path = out_dir / "java-producer.err"
        self.fed = 0
        self._stop = threading.Event()
        self._stdout: IO[bytes] = self.stdout_path.open("wb")
        self._stderr: IO[bytes] = self.stderr_path.open("wb")
        self.process = subprocess.Popen(
            [harness.java, *JVM_OPTIONS, "-cp", harness.classpath, "Harness", "--bootstrap", cluster.bootstrap,
             "produce", topic, str(2**31 - 1)],
            stdin=subprocess.PIPE, stdout=self._stdout, stderr=self._stderr,
        )  # fmt: skip
        self._thread = threading.Thread(target=self._feed, name="java-feeder", daemon=True)

    def value(self, index: int) -> bytes:
        return f"java-{index}".encode()

    def _feed(self, lines_per_tick: int = 10, tick_s: float = 0.1) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            while not self._stop.is_set():
                chunk = []
                for _ in range(lines_per_tick):
                    i = self.fed
                    # partition, timestamp (producer's clock), key (null), value, headers (none): compat/records.py
                    value = base64.b64encode(self.value(i)).decode()
                    chunk.append(f"{i % self.partitions}\t-\t-\t{value}\t-\n")
                    self.fed += 1
                stdin.write("".join(chunk).encode())
                stdin.flush()
                self._stop.wait(tick_s)
        except BrokenPipeError:
            pass  # the JVM died; stop() reports it with its stderr
        finally:
            self._close_stdin()

    def _close_stdin(self) -> None:
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
        except BrokenPipeError:
            pass  # the JVM is gone already

    def start(self) -> JavaWriter:
        self._thread.start()
        return self

    def stop(self) -> tuple[list[Ack], list[str], dict[str, Any]]:
        """Close its stdin (the Harness then flushes and exits); (acks, errors, final summary)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)
        else:
            self._close_stdin()
        try:
            self.process.wait(FLUSH_BOUND_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        finally:
            self._stdout.close()
            self._stderr.close()
        acks, errors, summary = [], [], {}
        for line in self.stdout_path.read_text().splitlines():
            obj = json.loads(line)
            if "error" in obj:
                errors.append(f"java-{obj['index']}: {obj['error']}")
            elif "index" in obj:
                acks.append(
                    Ack(self.topic, obj["partition"], obj["offset"], self.value(obj["index"]), "java")
                )
            else:
                summary = obj
        return acks, errors, summary

    def stderr_tail(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-4000:]


# ---- raw requests (our own codec) ------------------------------------------------------------------------------


def client_for(cluster: Cluster, node_id: int, timeout: float = 10.0) -> SyncBrokerClient:
    host, port = parse_host_port(cluster.node(node_id).bootstrap)
    return SyncBrokerClient(host, port, timeout=timeout)


def raw_produce(cluster: Cluster, node_id: int, topic: str, partition: int, value: bytes) -> tuple[int, int]:
    """One record, Produce v9 acks=-1 (not idempotent) to node_id; (error code, base offset)."""
    batch = build_batch([Record(offset=0, timestamp=int(time.time() * 1000), key=None, value=value)])
    request = ProduceRequest(
        acks=-1,
        timeout_ms=5000,
        topic_data=[
            TopicProduceData(
                name=topic, partition_data=[PartitionProduceData(index=partition, records=bytes(batch))]
            )
        ],
    )
    with client_for(cluster, node_id) as client:
        response: ProduceResponse = client.request(request, 9)
    answer = response.responses[0].partition_responses[0]
    return answer.error_code, answer.base_offset


def find_coordinator(cluster: Cluster, group: str) -> int:
    """The node id FindCoordinator (v3) names for `group`, asked of the first running node that answers."""
    for node_id in cluster.running():
        try:
            with client_for(cluster, node_id) as client:
                response: FindCoordinatorResponse = client.request(
                    FindCoordinatorRequest(key=group, key_type=0), 3
                )
        except BrokerClientError:
            continue
        if response.error_code == ErrorCode.NONE:
            return response.node_id
    raise AssertionError(f"no node names a coordinator for {group}")


@dataclass(frozen=True, slots=True)
class Failover:
    kill: int
    victim: int
    partition: int
    new_leader: int
    isr: tuple[int, ...]  # as Metadata showed it when the produce was acknowledged
    seconds: float  # kill -9 until an acks=-1 produce to the partition is acknowledged by its new leader


def time_failover(
    cluster: Cluster, topic: str, partition: int, victim: int, killed_at: float, kill: int
) -> tuple[Failover, list[Ack]]:
    """Ask the live nodes for the partition's leader and send it a one-record acks=-1 produce, every 50 ms, until
    one is acknowledged by a leader other than the victim. Acknowledged probes join the history."""
    attempt = 0
    last = "nothing yet"
    while time.monotonic() - killed_at < FAILOVER_BOUND_S:
        attempt += 1
        try:
            state = cluster.describe([topic]).topics[topic].partitions[partition]
            leader = state.leader
            if leader >= 0 and leader != victim:
                value = f"probe-{kill}-{attempt}".encode()
                error, offset = raw_produce(cluster, leader, topic, partition, value)
                if error == ErrorCode.NONE:
                    seconds = time.monotonic() - killed_at
                    ack = Ack(topic, partition, offset, value, "probe")
                    return Failover(kill, victim, partition, leader, state.isr, seconds), [ack]
                last = f"leader {leader} answered {ErrorCode(error).name}"
            else:
                last = f"leader {leader}"
        except (BrokerClientError, KeyError, IndexError) as error:
            last = repr(error)
        time.sleep(0.05)
    raise AssertionError(
        f"{topic}-{partition}: no acknowledged produce {FAILOVER_BOUND_S}s after killing {victim}: {last}"
    )


# ---- reading back ----------------------------------------------------------------------------------------------


def read_with_confluent(
    cluster: Cluster | str, topic: str, partitions: int, timeout: float = 60.0
) -> list[LogRecord]:
    """Every record of every partition from offset 0 up to its high watermark, in read order (assign + seek), from
    the cluster or a bootstrap address."""
    consumer = Consumer(
        {
            "bootstrap.servers": cluster if isinstance(cluster, str) else cluster.bootstrap,
            "group.id": "fault-test-reader",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in range(partitions)
        }
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        read: list[LogRecord] = []
        next_offset = dict.fromkeys(range(partitions), 0)
        deadline = time.monotonic() + timeout
        while any(next_offset[p] < ends[p] for p in range(partitions)):
            assert time.monotonic() < deadline, f"read stalled at {next_offset}, high watermarks {ends}"
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            error = msg.error()
            if error:
                assert error.code() == KafkaError._PARTITION_EOF, error
                continue
            partition, offset = partition_offset(msg)
            read.append(LogRecord(topic, partition, offset, value_of(msg), "confluent-read"))
            next_offset[partition] = offset + 1
        return read
    finally:
        consumer.close()


def dump_replica(cluster: Cluster, node_id: int, topic: str, partitions: int) -> list[LogRecord]:
    """A stopped node's log of every partition, straight from its data directory."""
    records = []
    for partition in range(partitions):
        log = PartitionLog.open(
            cluster.node(node_id).data_dir
            / partition_dir_name(kbroker.common.TopicPartition(topic, partition)),
            LogConfig(),
            int(time.time() * 1000),
        )
        try:
            offset = log.log_start_offset
            while offset < log.log_end_offset:
                data = bytearray(log.read(offset, 1 << 20, log.log_end_offset))
                for batch in iter_batches(data):
                    for record in decode_records(batch):
                        value = record.value or b""
                        records.append(
                            LogRecord(topic, partition, record.offset, value, f"node{node_id}-disk")
                        )
                    offset = batch.last_offset + 1
        finally:
            log.close()
    return records


def wait_for_full_isrs(cluster: Cluster, timeout: float = REJOIN_BOUND_S) -> ClusterDescription:
    """Every partition of every topic (`__consumer_offsets` too) led and in sync on all three nodes."""
    return cluster.wait_until(
        lambda d: (
            len(d.brokers) == 3
            and all(p.leader >= 0 and len(p.isr) == 3 for t in d.topics.values() for p in t.partitions)
        ),
        "every partition to have three in-sync replicas",
        timeout,
    )


def verdict_or_fail(verdict: Verdict, where: Path) -> None:
    print(verdict.report(examples=5))
    assert verdict.valid, f"history check failed (inputs in {where}):\n{verdict.report(examples=20)}"


# ---- the tests -------------------------------------------------------------------------------------------------


def test_acknowledged_writes_survive_five_leader_kills(
    cluster: Cluster, harness: JavaHarness, tmp_path: Path
) -> None:
    topic, partitions = "faults", 4
    cluster.create_topic(
        topic, partitions=partitions, replication_factor=3, configs={"min.insync.replicas": "2"}
    )
    java = JavaWriter(harness, cluster, topic, partitions, tmp_path)
    confluent = ConfluentWriter(cluster, topic, partitions)
    failovers: list[Failover] = []
    probes: list[Ack] = []
    try:
        java.start()
        confluent.start()
        for kill in range(1, KILLS + 1):
            time.sleep(3.0)  # writes flow under the current leaders
            counts = confluent.acked_per_partition()
            busiest = max(range(partitions), key=lambda p: counts[p])
            described = cluster.describe([topic])
            victim = described.topics[topic].partitions[busiest].leader
            assert victim > 0, f"{topic}-{busiest} has no leader before kill {kill}"
            # A killed controller adds its own lease lapse and a new controller's start to the failover.
            role = ", the controller" if described.controller_id == victim else ""
            killed_at = time.monotonic()
            cluster.kill(victim)
            failover, acked = time_failover(cluster, topic, busiest, victim, killed_at, kill)
            failovers.append(failover)
            probes += acked
            print(
                f"kill {kill}: node {victim} (leader of {topic}-{busiest}, the busiest{role}) -> node "
                f"{failover.new_leader} (ISR {list(failover.isr)}) acknowledged a produce after "
                f"{failover.seconds:.2f}s"
            )
            assert victim not in failover.isr
            restart_began = time.monotonic()
            cluster.start_node(victim)
            listening = time.monotonic()
            wait_for_full_isrs(cluster)
            print(
                f"        node {victim} restarted: listening after {listening - restart_began:.1f}s, back in "
                f"every ISR {time.monotonic() - listening:.1f}s later"
            )
        # The producer goes on after the last kill: wait for its next acknowledgement, not for a fixed time.
        after_last_kill = time.monotonic()
        deadline = after_last_kill + 30
        while confluent.acks_since(after_last_kill) == 0:
            assert time.monotonic() < deadline, (
                "the confluent producer made no progress after the kills (30 s)"
            )
            time.sleep(0.05)
    finally:
        unflushed = confluent.stop()
        java_acks, java_errors, java_summary = java.stop()

    seconds = [f.seconds for f in failovers]
    print(
        f"failover over {KILLS} kills -9 of the busiest partition's leader: median {statistics.median(seconds):.2f}s, "
        f"worst {max(seconds):.2f}s ({', '.join(f'{s:.2f}' for s in seconds)})"
    )
    assert unflushed == 0, f"{unflushed} confluent deliveries never reported"
    assert not confluent.failed, (
        f"{len(confluent.failed)} confluent deliveries failed: {confluent.failed[:5]}"
    )
    assert len(confluent.acks) == confluent.sent
    assert java.process.returncode is not None
    assert not java_errors, (
        f"{len(java_errors)} Java deliveries failed: {java_errors[:5]}\n{java.stderr_tail()}"
    )
    java_state = f"Java producer: fed {java.fed}, summary {java_summary}\n{java.stderr_tail()}"
    assert java_summary.get("sent") == java.fed, java_state
    assert java_summary.get("acknowledged") == java.fed, java_state
    acks = confluent.acks + java_acks + probes
    print(f"acknowledged: {len(confluent.acks)} confluent, {len(java_acks)} Java, {len(probes)} probes")

    # The read every client would see, then every replica's own log.
    wait_for_full_isrs(cluster)
    read = read_with_confluent(cluster, topic, partitions)
    cluster.stop()
    replicas = [r for node_id in (1, 2, 3) for r in dump_replica(cluster, node_id, topic, partitions)]
    write_jsonl(tmp_path / "acks.jsonl", acks)
    write_jsonl(tmp_path / "log.jsonl", read + replicas)
    verdict_or_fail(check(acks, read + replicas, start_offset=0), tmp_path)
    assert all(f.seconds < FAILOVER_BOUND_S for f in failovers)


# ---- consumer group across a coordinator failover --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Resume:
    """A partition's consumption did not continue at the next offset: it restarted at `offset`."""

    consumer: str
    partition: int
    offset: int
    committed: int  # the last offset whose commit we saw succeed
    processed_end: int  # one past the highest offset processed so far


class GroupRun:
    """Consumers of one group, one after the other, processing records and committing what they processed.

    The timeline of records processed and commits that succeeded lets the test check every resume: a partition's
    consumption may only restart at an offset between the last successful commit we saw and the end of what was
    processed (a commit whose reply was lost may have landed: that is why not exactly the former)."""

    def __init__(self, cluster: Cluster, topic: str, group: str) -> None:
        self.cluster = cluster
        self.topic = topic
        self.group = group
        self.processed: list[LogRecord] = []  # first processing of each offset, in order
        self.first_value: dict[tuple[int, int], bytes] = {}
        self.redelivered = 0
        self.resumes: list[Resume] = []
        self.violations: list[str] = []
        self.committed: dict[int, int] = defaultdict(int)
        self.processed_end: dict[int, int] = defaultdict(int)
        self.last_seen: dict[int, int] = {}
        self.commit_errors: list[tuple[float, str]] = []
        self.commit_times: list[float] = []

    def consumer(self) -> Consumer:
        return Consumer(
            {
                "bootstrap.servers": self.cluster.bootstrap,
                "group.id": self.group,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 500,
                # Small prefetch, so that consuming keeps fetching (from the new leaders) across the failover.
                "queued.min.messages": 50,
                "topic.metadata.refresh.interval.ms": 1000,
            }
        )

    def start(self) -> Consumer:
        """A new member: its first record of each partition is a resume, checked against the commits."""
        self.last_seen.clear()
        consumer = self.consumer()
        consumer.subscribe([self.topic])
        return consumer

    def process(self, name: str, partition: int, offset: int, value: bytes) -> None:
        # A member's first record of a partition is always a resume, even at offset 0 (nothing committed yet).
        if partition not in self.last_seen or self.last_seen[partition] + 1 != offset:
            resume = Resume(name, partition, offset, self.committed[partition], self.processed_end[partition])
            self.resumes.append(resume)
            if not resume.committed <= offset <= resume.processed_end:
                self.violations.append(f"{resume}: outside [committed, processed end]")
        self.last_seen[partition] = offset
        if offset < self.processed_end[partition]:
            self.redelivered += 1
            if self.first_value.get((partition, offset)) != value:
                self.violations.append(
                    f"{self.topic}-{partition}@{offset} redelivered with another value {value!r}"
                )
            return
        self.processed.append(LogRecord(self.topic, partition, offset, value, f"group {self.group}"))
        self.first_value[(partition, offset)] = value
        self.processed_end[partition] = offset + 1

    def commit(self, consumer: Consumer) -> bool:
        """Commit what was processed (synchronously); False (and the error kept) if the commit failed."""
        pending = [
            TopicPartition(self.topic, p, end)
            for p, end in self.processed_end.items()
            if end > self.committed[p]
        ]
        if not pending:
            return True
        try:
            result = consumer.commit(offsets=pending, asynchronous=False)
        except KafkaException as error:
            self.commit_errors.append((time.monotonic(), str(error)))
            return False
        for tp in result or []:
            if tp.error is not None:
                self.commit_errors.append((time.monotonic(), f"{tp.partition}: {tp.error}"))
                return False
        for tp in pending:
            self.committed[tp.partition] = max(self.committed[tp.partition], tp.offset)
        self.commit_times.append(time.monotonic())
        return True

    def consume(self, consumer: Consumer, name: str, until: int, timeout: float) -> None:
        """Process and commit, batch by batch, until `until` distinct records were processed."""
        deadline = time.monotonic() + timeout
        while len(self.processed) < until:
            assert time.monotonic() < deadline, (
                f"{name}: {len(self.processed)} of {until} records after {timeout}s; "
                f"commit errors {self.commit_errors[-5:]}"
            )
            for msg in consumer.consume(num_messages=100, timeout=0.5):
                if msg.error():
                    continue  # informational (e.g. a partition EOF); librdkafka retries by itself
                self.process(name, *partition_offset(msg), value_of(msg))
            self.commit(consumer)

    def commit_everything(self, consumer: Consumer, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.commit(consumer):
            assert time.monotonic() < deadline, f"cannot commit: {self.commit_errors[-5:]}"
            time.sleep(0.2)


def produce_values(cluster: Cluster, topic: str, values: list[bytes]) -> list[Ack]:
    acks: list[Ack] = []
    failed: list[str] = []

    def report(err: KafkaError | None, msg: Message) -> None:
        if err is None:
            acks.append(Ack(topic, *partition_offset(msg), value_of(msg), "confluent"))
        else:
            failed.append(str(err))

    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 5,
         "message.timeout.ms": 120_000}
    )  # fmt: skip
    for i, value in enumerate(values):
        producer.produce(topic, value=value, partition=i % 3, on_delivery=report)
        producer.poll(0)
    assert producer.flush(FLUSH_BOUND_S) == 0
    assert not failed, failed[:5]
    return acks


def test_consumer_group_resumes_from_committed_offsets_across_coordinator_failover(
    cluster: Cluster, tmp_path: Path
) -> None:
    topic, group = "orders", "fault-group"
    cluster.create_topic(topic, partitions=3, replication_factor=3, configs={"min.insync.replicas": "2"})
    acks = produce_values(cluster, topic, [f"order-{i}".encode() for i in range(3000)])
    run = GroupRun(cluster, topic, group)

    first = run.start()
    run.consume(first, "first", until=1000, timeout=60)
    coordinator = find_coordinator(cluster, group)
    killed_at = time.monotonic()
    cluster.kill(coordinator)
    # More records after the kill: the consumer has to fetch them from whatever leaders the partitions have now.
    producing = threading.Thread(
        target=lambda: acks.extend(
            produce_values(cluster, topic, [f"order-{i}".encode() for i in range(3000, 4000)])
        )
    )
    producing.start()
    run.consume(first, "first", until=2500, timeout=90)
    run.commit_everything(first)
    producing.join(FLUSH_BOUND_S)
    assert not producing.is_alive()
    commits_after_kill = [t for t in run.commit_times if t > killed_at]
    assert commits_after_kill, "no commit succeeded after the coordinator was killed"
    new_coordinator = find_coordinator(cluster, group)
    assert new_coordinator != coordinator
    print(
        f"coordinator failover: node {coordinator} killed, node {new_coordinator} took over; first successful "
        f"commit {commits_after_kill[0] - killed_at:.2f}s after the kill; {len(run.commit_errors)} commits failed "
        f"meanwhile: {sorted({e for _, e in run.commit_errors})[:5]}"
    )
    first.close()

    # The killed node returns; a new member of the group takes over from the committed offsets.
    cluster.start_node(coordinator)
    wait_for_full_isrs(cluster)
    committed_before = dict(run.committed)
    second = run.start()
    try:
        run.consume(second, "second", until=4000, timeout=90)
        run.commit_everything(second)
    finally:
        second.close()

    # The first consumer's final commit succeeded, and it left: the second starts exactly there, in every
    # partition the first had not finished.
    ends = Counter(a.partition for a in acks)
    unfinished = sorted(p for p in range(3) if committed_before.get(p, 0) < ends[p])
    second_resumes = {r.partition: r.offset for r in run.resumes if r.consumer == "second"}
    assert second_resumes == {p: committed_before.get(p, 0) for p in unfinished}, run.resumes
    print(f"resumes: {run.resumes}; redelivered {run.redelivered}")
    assert not run.violations, run.violations
    write_jsonl(tmp_path / "acks.jsonl", acks)
    write_jsonl(tmp_path / "processed.jsonl", run.processed)
    verdict_or_fail(check(acks, run.processed, start_offset=0), tmp_path)


# ---- metadata after a failover ---------------------------------------------------------------------------------


def test_kcat_kafka_python_and_confluent_show_the_new_leaders(cluster: Cluster, kcat_path: Path) -> None:
    topic, partitions = "meta", 6
    cluster.create_topic(
        topic, partitions=partitions, replication_factor=3, configs={"min.insync.replicas": "2"}
    )
    before = cluster.describe([topic]).topics[topic]
    led = Counter(p.leader for p in before.partitions)
    victim = led.most_common(1)[0][0]

    # Long-lived clients, which have cached the old leaders.
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "enable.idempotence": True})
    kp = KafkaConsumer(bootstrap_servers=cluster.bootstrap, group_id=None)
    try:
        assert (
            producer.list_topics(topic, timeout=10).topics[topic].partitions[0].leader
            == before.partitions[0].leader
        )
        assert kp.partitions_for_topic(topic) == set(range(partitions))

        cluster.kill(victim)
        after = cluster.wait_until(
            lambda d: (
                victim not in d.brokers
                and all(p.leader >= 0 and p.leader != victim for p in d.topics[topic].partitions)
            ),
            f"new leaders for every partition node {victim} led",
        )
        expected = {p.partition: p.leader for p in after.topics[topic].partitions}
        epochs = {p.partition: p.leader_epoch for p in after.topics[topic].partitions}
        live = sorted(after.brokers)
        moved = [p.partition for p in before.partitions if p.leader == victim]
        assert moved
        assert all(epochs[p] == before.partitions[p].leader_epoch + 1 for p in moved)
        print(f"killed node {victim}; partitions {moved} moved; leaders now {expected}")

        # kcat -L (librdkafka 2.0.2, Metadata v4).
        listing = json.loads(
            subprocess.run(
                [str(kcat_path), "-b", cluster.bootstrap, "-L", "-J", "-t", topic],
                capture_output=True, text=True, timeout=30, check=True,
            ).stdout
        )  # fmt: skip
        assert sorted(b["id"] for b in listing["brokers"]) == live
        assert {p["partition"]: p["leader"] for p in listing["topics"][0]["partitions"]} == expected

        # confluent-kafka: a new AdminClient, and the producer that cached the old leaders.
        for name, client in (("new AdminClient", AdminClient({"bootstrap.servers": cluster.bootstrap})),
                             ("long-lived Producer", producer)):  # fmt: skip
            metadata = client.list_topics(topic, timeout=10)
            assert sorted(metadata.brokers) == live, name
            assert {i: p.leader for i, p in metadata.topics[topic].partitions.items()} == expected, name
        # ... and it can write to every partition through the new leaders.
        delivered: list[str | None] = []

        def on_delivery(err: KafkaError | None, _msg: Message) -> None:
            delivered.append(None if err is None else str(err))

        for p in range(partitions):
            producer.produce(topic, value=b"after failover", partition=p, on_delivery=on_delivery)
        assert producer.flush(30) == 0
        assert delivered == [None] * partitions

        # kafka-python: a new consumer, and the one that cached the old leaders, after a metadata refresh.
        fresh = KafkaConsumer(bootstrap_servers=cluster.bootstrap, group_id=None)
        try:
            for name, consumer in (("new KafkaConsumer", fresh), ("long-lived KafkaConsumer", kp)):
                consumer.topics()  # always a Metadata request for every topic
                # the consumer's own metadata cache, private (so outside kafka-python's stubs)
                cached: ClusterMetadata = vars(consumer)["_client"].cluster
                assert sorted(b.node_id for b in cached.brokers()) == live, name
                for p in range(partitions):
                    tp = KafkaTopicPartition(topic, p)
                    assert cached.leader_for_partition(tp) == expected[p], (name, p)
                    assert cached.leader_epoch_for_partition(tp) == epochs[p], (name, p)
        finally:
            fresh.close()
    finally:
        kp.close()
