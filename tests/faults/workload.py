"""What every fault scenario runs while it injects faults, and how it judges the outcome.

- `ConfluentWriter` (from tests/test_cluster_faults.py): an idempotent acks=all confluent-kafka producer writing
  unique values; every acknowledgement kept.
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

from confluent_kafka import Consumer, KafkaException
from confluent_kafka import TopicPartition as ConfluentTopicPartition

from compat.clients.confluent import partition_offset, value_of
from kbroker.testing.history import Ack, Commit, LogRecord, Read, Verdict, check, write_jsonl
from tests.cluster_fixture import Cluster
from tests.test_cluster_faults import ConfluentWriter, dump_replica, read_with_confluent, wait_for_full_isrs

__all__ = ["ConfluentWriter", "GroupReader", "Outcome", "judge"]


class GroupReader:
    """One member of `group` reading `topic` from a thread until stopped."""

    def __init__(self, cluster: Cluster, topic: str, group: str, name: str = "reader") -> None:
        self.topic = topic
        self.group = group
        self.name = name
        self.consumer = Consumer(
            {
                "bootstrap.servers": cluster.bootstrap,
                "group.id": group,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 10000,
                "heartbeat.interval.ms": 1000,
                "topic.metadata.refresh.interval.ms": 1000,
            }
        )
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

    def _commit(self) -> None:
        with self._lock:
            pending = [ConfluentTopicPartition(self.topic, p, end) for p, end in self._processed_end.items()]
        if not pending:
            return
        try:
            result = self.consumer.commit(offsets=pending, asynchronous=False)
        except KafkaException as error:
            self.commit_errors.append(str(error))
            return
        with self._lock:
            for tp in result or []:
                if tp.error is None:
                    self.commits.append(Commit(self.group, self.topic, tp.partition, tp.offset))

    def served(self) -> int:
        with self._lock:
            return len(self.reads)

    def start(self) -> GroupReader:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        self.consumer.close()


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
) -> Verdict:
    """Read back and check (see the module's docstring); AssertionError with the report if anything is wrong.
    Stops the cluster (the replicas' logs are read from disk)."""
    wait_for_full_isrs(cluster, in_sync_timeout)
    read = read_with_confluent(cluster, topic, partitions)
    cluster.stop()
    replicas = [r for node_id in cluster.nodes for r in dump_replica(cluster, node_id, topic, partitions)]
    log: list[LogRecord] = read + replicas
    write_jsonl(where / "acks.jsonl", outcome.acks)
    write_jsonl(where / "log.jsonl", log)
    write_jsonl(where / "reads.jsonl", outcome.reads)
    write_jsonl(where / "commits.jsonl", outcome.commits)
    verdict = check(outcome.acks, log, start_offset=0, reads=outcome.reads, commits=outcome.commits)
    print(verdict.report(examples=5))
    assert verdict.valid, f"history check failed (inputs in {where}):\n{verdict.report(examples=20)}"
    return verdict
