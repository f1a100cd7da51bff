"""Helpers shared by the consumer-group tests (tests/test_groups_*.py); no tests here.

- `Wire`: one raw connection speaking any request at any version through our own codec, for exact checks of what the
  broker answers at every protocol version.
- topic creation and producing through confluent-kafka, a polling helper, and the group's committed offsets.
- `GROUP_OVERRIDES`: broker settings that keep group tests fast (no initial rebalance delay, short session timeouts
  allowed).
"""

from __future__ import annotations

import socket
import struct
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from protocol.codec import decode_from, encode_into
from protocol.headers import (
    RequestHeader,
    encode_request_header,
    read_response_header,
    request_header_version,
    response_header_version,
)
from protocol.messages import RESPONSES, SCHEMAS
from protocol.primitives import Reader, Writer

T = TypeVar("T")

# The first rebalance happens at once; members may ask for session timeouts down to 1 s, so killed consumers are
# noticed quickly.
GROUP_OVERRIDES = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
}


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class Wire:
    """A raw client: `call(message, version)` sends one request and returns the decoded response."""

    def __init__(self, bootstrap: str, client_id: str | None = "groups-wire") -> None:
        host, _, port = bootstrap.rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=60)
        self.client_id = client_id
        self.correlation_id = 0
        self.peer_host = "/" + self.sock.getsockname()[0]

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def call(self, message: T, version: int) -> Any:  # the response class of the message's API
        self.send(message, version)
        schema = SCHEMAS[type(message)]
        (size,) = struct.unpack(">i", self._recv(4))
        r = Reader(bytearray(self._recv(size)))
        response_cls = RESPONSES[schema.api_key]
        correlation_id = read_response_header(r, response_header_version(SCHEMAS[response_cls], version))
        assert correlation_id == self.correlation_id
        return decode_from(response_cls, version, r)

    def send(self, message: object, version: int) -> None:
        """Send one request without reading its answer (`call` reads it; a request left waiting is not)."""
        schema = SCHEMAS[type(message)]
        self.correlation_id += 1
        w = Writer()
        w.int32(0)
        header = RequestHeader(
            request_api_key=schema.api_key,
            request_api_version=version,
            correlation_id=self.correlation_id,
            client_id=self.client_id,
        )
        encode_request_header(w, header, request_header_version(schema, version))
        encode_into(w, message, version)
        w.out[0:4] = (len(w.out) - 4).to_bytes(4, "big")
        self.sock.sendall(bytes(w.out))

    def _recv(self, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            data += chunk
        return bytes(data)


def subscription(*topics: str) -> bytes:
    """A ConsumerProtocol v0 subscription: what the group reads to know which topics its members consume."""
    out = struct.pack(">hi", 0, len(topics))
    for topic in topics:
        out += struct.pack(">h", len(topic)) + topic.encode()
    return out + struct.pack(">i", -1)  # no user data


def assignment(topic: str, partitions: list[int]) -> bytes:
    """A ConsumerProtocol v0 assignment of one topic's partitions."""
    out = struct.pack(">hi", 0, 1) + struct.pack(">h", len(topic)) + topic.encode()
    out += struct.pack(">i", len(partitions)) + b"".join(struct.pack(">i", p) for p in partitions)
    return out + struct.pack(">i", -1)


def assigned_partitions(data: bytes) -> list[int]:
    """The partitions of a one-topic ConsumerProtocol assignment (any version: the prefix is the same)."""
    _version, topics = struct.unpack_from(">hi", data, 0)
    pos = 6
    out: list[int] = []
    for _ in range(topics):
        (length,) = struct.unpack_from(">h", data, pos)
        pos += 2 + length
        (count,) = struct.unpack_from(">i", data, pos)
        pos += 4
        out.extend(struct.unpack_from(f">{count}i", data, pos))
        pos += 4 * count
    return sorted(out)


def create_topic(bootstrap: str, partitions: int, prefix: str = "groups") -> str:
    topic = unique(prefix)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])[topic].result(30)
    return topic


def produce(bootstrap: str, topic: str, partitions: int, count: int, start: int = 0) -> list[bytes]:
    """Records `start`..`start+count-1`, value b"<i>", round robin over the partitions; acks=all."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    errors: list[str] = []
    values = []
    for i in range(start, start + count):
        value = str(i).encode()
        values.append(value)
        producer.produce(
            topic,
            value=value,
            partition=i % partitions,
            on_delivery=lambda err, _msg: errors.append(str(err)) if err else None,
        )
    assert producer.flush(60) == 0
    assert not errors, errors[:3]
    return values


def wait_for(
    what: str,
    check: Callable[[], T | None],
    timeout: float = 30.0,
    interval: float = 0.1,
    explain: Callable[[], str] | None = None,
) -> T:
    """Poll `check` until it returns something other than None (or False); fail with `what` after `timeout`.

    `explain`, if given, describes the state at the timeout (what each client and the broker believe), so that a
    failure in CI can be understood from its output alone.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            detail = f"\n{explain()}" if explain is not None else ""
            raise AssertionError(f"timed out after {timeout} s waiting for {what}{detail}")
        time.sleep(interval)


def committed(admin: AdminClient, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offset of each partition; -1001 (librdkafka's OFFSET_INVALID) where there is none."""
    request = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(partitions)])]
    answer = admin.list_consumer_group_offsets(request)[group].result(30)
    return {tp.partition: tp.offset for tp in answer.topic_partitions}


def wait_for_commits_at(bootstrap: str, group: str, topic: str, partitions: int, end: int) -> None:
    """Wait until the group has committed offset `end` on every partition.

    The members here record a record before they commit its offset, and only the partition's current owner commits;
    so once every partition is committed to its end, every record the group will consume (a record consumed twice
    after a rebalance included) has been recorded. This is the event to wait for before counting duplicates.
    """
    admin = AdminClient({"bootstrap.servers": bootstrap})
    wait_for(
        f"offset {end} committed on all {partitions} partitions",
        lambda: committed(admin, group, topic, partitions) == dict.fromkeys(range(partitions), end),
    )


class ConfluentMember:
    """A confluent-kafka (librdkafka) group consumer on its own thread: subscribe, process, commit synchronously.

    Every record it processes is appended to `records` as (partition, offset, value) before its offset is committed,
    so across a group the records seen are a superset of what was committed (at least once), and exactly once while
    no rebalance interrupts a commit: a revocation commits too (`_on_revoke`). `assignment` is the current set of
    partitions (eager rebalancing).
    """

    def __init__(
        self,
        bootstrap: str,
        group: str,
        topic: str,
        *,
        batch: int = 500,
        pace_s: float = 0.0,
        config: Mapping[str, str | int] | None = None,
    ) -> None:
        import threading

        from confluent_kafka import Consumer

        settings: dict[str, str | int] = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            **(config or {}),
        }
        self.consumer = Consumer(settings)
        self.topic = topic
        # Records per consume() call, and a pause after each batch (a slow application, for mid-stream crashes).
        self.batch = batch
        self.pace_s = pace_s
        self.records: list[tuple[int, int, bytes]] = []
        self.assignment: frozenset[int] = frozenset()
        self.assignments: list[frozenset[int]] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"member-{group}", daemon=True)
        self._thread.start()

    def _on_assign(self, _consumer: object, partitions: list[Any]) -> None:
        self.assignment = frozenset(tp.partition for tp in partitions)
        self.assignments.append(self.assignment)

    def _on_revoke(self, consumer: Any, _partitions: list[Any]) -> None:
        # consume() serves a revocation in the middle of a call and still returns what it collected before it, from
        # the revoked partitions (confluent-kafka-python #1013): committed after the call, those offsets would be
        # left out (a commit covers the current assignment), and the partitions' next owner would read the records
        # again. So commit here, while they are still ours: everything handed to the application so far.
        from confluent_kafka import KafkaError, KafkaException

        try:
            consumer.commit(asynchronous=False)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError._NO_OFFSET:  # (nothing consumed since the last commit)
                self.errors.append(f"commit on revocation: {exc}")
        self.assignment = frozenset()

    def _run(self) -> None:
        from confluent_kafka import KafkaException

        self.consumer.subscribe([self.topic], on_assign=self._on_assign, on_revoke=self._on_revoke)
        try:
            while not self._stop.is_set():
                messages = self.consumer.consume(num_messages=self.batch, timeout=0.2)
                processed = False
                for message in messages:
                    error = message.error()
                    if error is not None:
                        if not error.retriable() and error.code() != -191:  # -191: partition EOF
                            self.errors.append(str(error))
                        continue
                    partition, offset, value = message.partition(), message.offset(), message.value()
                    assert partition is not None
                    assert offset is not None
                    assert isinstance(value, bytes)
                    self.records.append((partition, offset, value))
                    processed = True
                if processed:
                    try:
                        self.consumer.commit(asynchronous=False)
                    except KafkaException as exc:
                        # A rebalance got in the way: these records may be seen again elsewhere.
                        self.errors.append(f"commit: {exc}")
                    if self.pace_s:
                        time.sleep(self.pace_s)
        finally:
            self.consumer.close()

    def stop(self) -> None:
        """Leave the group (LeaveGroup) and wait for the thread."""
        self._stop.set()
        self._thread.join(30)
        assert not self._thread.is_alive(), "consumer thread did not stop"

    def values(self) -> list[bytes]:
        return [value for _, _, value in self.records]
