"""What every fault scenario runs while it injects faults, and how it judges the outcome.

- `Writer`: a confluent-kafka producer in a thread writing unique values (`<name>-<n>`) round robin over the
  partitions; idempotent with acks=all by default (or plain acks=1). Every acknowledgement is kept, with its time.
- `GroupReader`: a confluent-kafka consumer group member that processes records and commits synchronously; it keeps
  every record it was served (history `Read`s: they must all be in the final log at that offset) and every committed
  offset it saw, both its own successful commits and the offset each partition resumed at after an assignment
  (history `Commit`s, in the order observed: they must never go back).
- `judge`: once the faults are healed, wait until every partition is back in sync on every node, read every partition
  with confluent-kafka, stop the cluster, dump every replica's log from disk, and run kbroker.testing.history over
  all of it (lost, duplicated or misplaced acknowledged writes, one value per offset across reads and replicas,
  dense offsets, dirty reads, committed offsets going back). The inputs are kept as JSONL in the test's directory.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer
from confluent_kafka import TopicPartition as ConfluentTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import kbroker.common
from compat.clients.confluent import partition_offset, value_of
from kbroker.log.config import LogConfig
from kbroker.log.log_manager import partition_dir_name
from kbroker.log.partition_log import PartitionLog
from kbroker.replication.client import SyncBrokerClient, parse_host_port
from kbroker.testing.history import UNKNOWN_OFFSET, Ack, Commit, LogRecord, Read, Verdict, check, write_jsonl
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.messages.produce_response import ProduceResponse
from protocol.records import Record, build_batch, decode_records, iter_batches
from tests.broker_process import BrokerProcess
from tests.cluster_fixture import Cluster
from tests.test_cluster_faults import read_with_confluent, wait_for_full_isrs

FLUSH_BOUND_S = 150.0
READER_CLOSE_BOUND_S = 60.0


class Writer:
    """Writes `<name>-<n>` to `topic` round robin over its partitions from a thread, at about `rate_per_s`."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        partitions: int,
        *,
        rate_per_s: float = 100.0,
        name: str = "confluent",
        idempotent: bool = True,
    ) -> None:
        self.topic = topic
        self.partitions = partitions
        self.name = name
        self.interval = 1.0 / rate_per_s
        settings: dict[str, str | int | bool] = {
            "bootstrap.servers": bootstrap,
            "linger.ms": 5,
            # Long enough that no record times out during a fault: each is acknowledged or reported failed.
            "message.timeout.ms": 120_000,
            "topic.metadata.refresh.interval.ms": 1000,
        }
        settings.update({"acks": "all", "enable.idempotence": True} if idempotent else {"acks": 1})
        self.producer = Producer(settings)
        self.acks: list[Ack] = []
        self.ack_times: list[float] = []
        self.failed: list[str] = []
        self.unknown_offsets = 0
        """Deliveries reported without an offset (still checked: the value must be in the log, once)."""
        self.sent = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"writer-{name}", daemon=True)

    def _on_delivery(self, err: KafkaError | None, msg: Message) -> None:
        with self._lock:
            if err is not None:
                self.failed.append(f"{msg.value()!r}: {err}")
            else:
                partition, offset = msg.partition(), msg.offset()
                assert partition is not None
                # librdkafka may report a retried idempotent batch delivered without learning its offset.
                where = UNKNOWN_OFFSET if offset is None else offset
                self.acks.append(Ack(self.topic, partition, where, value_of(msg), self.name))
                if offset is None:
                    self.unknown_offsets += 1
                self.ack_times.append(time.monotonic())

    def _run(self) -> None:
        while not self._stop.is_set():
            n = self.sent
            value = f"{self.name}-{n}".encode()
            self.producer.produce(
                self.topic, value=value, partition=n % self.partitions, on_delivery=self._on_delivery
            )
            self.sent += 1
            self.producer.poll(self.interval)

    def start(self) -> Writer:
        self._thread.start()
        return self

    def acknowledged(self) -> int:
        with self._lock:
            return len(self.acks)

    def wait_for_progress(self, more: int = 1, timeout: float = 30.0) -> None:
        """Wait until `more` records more than now are acknowledged (the cluster serves)."""
        target = self.acknowledged() + more
        deadline = time.monotonic() + timeout
        while self.acknowledged() < target:
            assert time.monotonic() < deadline, f"{self.name}: no progress in {timeout}s: {self.failed[-5:]}"
            time.sleep(0.05)

    def acked_at(self) -> list[tuple[bytes, float]]:
        """(value, when it was acknowledged) of every acknowledged record."""
        with self._lock:
            return [(a.value, t) for a, t in zip(self.acks, self.ack_times, strict=True)]

    def stop(self) -> int:
        """Stop writing and wait for every outstanding delivery report; returns how many are still missing."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)
        return self.producer.flush(FLUSH_BOUND_S)


class SingleNode:
    """What the workload needs of a cluster, for one broker."""

    def __init__(self, broker: BrokerProcess) -> None:
        self.broker = broker

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    def create_topic(self, name: str, partitions: int, replication_factor: int = 1) -> None:
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        admin.create_topics([NewTopic(name, partitions, replication_factor)])[name].result(30)


def dump_dir(data_dir: Path, topic: str, partitions: int, source: str) -> list[LogRecord]:
    """A stopped broker's log of every partition, straight from its data directory."""
    records = []
    for partition in range(partitions):
        tp = kbroker.common.TopicPartition(topic, partition)
        log = PartitionLog.open(data_dir / partition_dir_name(tp), LogConfig(), int(time.time() * 1000))
        try:
            offset = log.log_start_offset
            while offset < log.log_end_offset:
                data = bytearray(log.read(offset, 1 << 20, log.log_end_offset))
                for batch in iter_batches(data):
                    for record in decode_records(batch):
                        records.append(
                            LogRecord(topic, partition, record.offset, record.value or b"", source)
                        )
                    offset = batch.last_offset + 1
        finally:
            log.close()
    return records


def read_all(bootstrap: str, topic: str, partitions: int) -> list[LogRecord]:
    """Every record of every partition up to its high watermark (confluent-kafka, assign and seek)."""
    return read_with_confluent(bootstrap, topic, partitions)


class GroupReader:
    """One member of `group` reading `topic` from a thread until stopped."""

    def __init__(self, bootstrap: str, topic: str, group: str, name: str = "reader") -> None:
        self.topic = topic
        self.group = group
        self.name = name
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 10000,
                "heartbeat.interval.ms": 1000,
                "topic.metadata.refresh.interval.ms": 1000,
                "on_commit": self._on_commit,
            }
        )
        self.hung = False
        self._commit_in_flight = False
        """The consumer did not close within READER_CLOSE_BOUND_S (left to its thread)."""
        self.reads: list[Read] = []
        self.commits: list[Commit] = []
        self.commit_errors: list[str] = []
        self._processed_end: dict[int, int] = {}
        self._fresh: set[int] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"group-reader-{name}", daemon=True)

    def _on_assign(self, _consumer: Consumer, partitions: list[ConfluentTopicPartition]) -> None:
        self._fresh.update(tp.partition for tp in partitions)

    def _run(self) -> None:
        self.consumer.subscribe([self.topic], on_assign=self._on_assign)
        last_commit = time.monotonic()
        while not self._stop.is_set():
            for msg in self.consumer.consume(num_messages=200, timeout=0.2):
                if msg.error():
                    continue  # informational (a partition EOF, a broker gone); librdkafka retries by itself
                partition, offset = partition_offset(msg)
                with self._lock:
                    if partition in self._fresh:
                        # Where the group resumed this partition: its committed offset (or the start).
                        self._fresh.discard(partition)
                        self.commits.append(Commit(self.group, self.topic, partition, offset))
                    self.reads.append(Read(self.topic, partition, offset, value_of(msg), self.name))
                    self._processed_end[partition] = offset + 1
            if time.monotonic() - last_commit > 0.5:
                self._commit()
                last_commit = time.monotonic()
        self._commit()
        self.consumer.close()  # serves the last commits' outcomes

    def _commit(self) -> None:
        """Commit what was processed, asynchronously: librdkafka can lose its group coordinator for good after every
        broker went down at once (a known class of its bugs, e.g. confluentinc/librdkafka#3847), and a synchronous
        commit then never returns. The outcome comes to _on_commit, from consume()."""
        if self._commit_in_flight:
            return  # one at a time: librdkafka may retry an older commit after a newer one, moving the offset back
        with self._lock:
            pending = [ConfluentTopicPartition(self.topic, p, end) for p, end in self._processed_end.items()]
        if not pending:
            return
        try:
            self.consumer.commit(offsets=pending, asynchronous=True)
            self._commit_in_flight = True
        except KafkaException as error:
            self.commit_errors.append(str(error))

    def _on_commit(self, error: KafkaError | None, partitions: list[ConfluentTopicPartition]) -> None:
        self._commit_in_flight = False
        if error is not None:
            self.commit_errors.append(str(error))
            return
        with self._lock:
            for tp in partitions:
                if tp.error is None and tp.offset >= 0:
                    self.commits.append(Commit(self.group, self.topic, tp.partition, tp.offset))

    def served(self) -> int:
        with self._lock:
            return len(self.reads)

    def start(self) -> GroupReader:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(READER_CLOSE_BOUND_S)
        self.hung = self._thread.is_alive()


@dataclass
class Outcome:
    """Everything a scenario's clients saw."""

    acks: list[Ack] = field(default_factory=list)
    reads: list[Read] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)


def judge(
    cluster: Cluster,
    topic: str,
    partitions: int,
    outcome: Outcome,
    where: Path,
    *,
    in_sync_timeout: float = 60.0,
    strict: bool = True,
) -> Verdict:
    """Read back and check (see the module's docstring); AssertionError with the report if anything is wrong
    (unless not `strict`: the caller looks at the verdict). Stops the cluster (the replicas' logs are read from
    disk)."""
    wait_for_full_isrs(cluster, in_sync_timeout)
    read = read_all(cluster.bootstrap, topic, partitions)
    cluster.stop()
    replicas = [
        r
        for node_id, node in cluster.nodes.items()
        for r in dump_dir(node.data_dir, topic, partitions, f"node{node_id}-disk")
    ]
    log: list[LogRecord] = read + replicas
    write_jsonl(where / "acks.jsonl", outcome.acks)
    write_jsonl(where / "log.jsonl", log)
    write_jsonl(where / "reads.jsonl", outcome.reads)
    write_jsonl(where / "commits.jsonl", outcome.commits)
    verdict = check(outcome.acks, log, start_offset=0, reads=outcome.reads, commits=outcome.commits)
    if not strict:
        return verdict
    print(verdict.report(examples=5))
    assert verdict.valid, f"history check failed (inputs in {where}):\n{verdict.report(examples=20)}"
    return verdict


@dataclass(frozen=True)
class ProduceAnswer:
    error_code: int
    error_message: str | None
    base_offset: int


def produce_to(
    address: str, topic: str, partition: int, values: list[bytes], *, acks: int = -1, timeout_s: float = 10.0
) -> ProduceAnswer:
    """One Produce v9 (our own codec) of one batch to the broker at HOST:PORT; its partition's answer."""
    batch = build_batch([Record(offset=i, timestamp=int(time.time() * 1000), key=None, value=v)
                         for i, v in enumerate(values)])  # fmt: skip
    request = ProduceRequest(
        acks=acks,
        timeout_ms=int(timeout_s * 1000) // 2,
        topic_data=[
            TopicProduceData(
                name=topic, partition_data=[PartitionProduceData(index=partition, records=bytes(batch))]
            )
        ],
    )
    host, port = parse_host_port(address)
    with SyncBrokerClient(host, port, timeout=timeout_s) as client:
        response: ProduceResponse = client.request(request, 9)
    answer = response.responses[0].partition_responses[0]
    return ProduceAnswer(answer.error_code, answer.error_message, answer.base_offset)
