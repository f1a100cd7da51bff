"""Bad input on one connection must not hurt the broker or anyone else.

Each test opens a raw socket and misbehaves (garbage, impossible length prefixes, a truncated frame, an API or
version the broker does not have, a record batch with a wrong CRC) while a well-behaved confluent-kafka
producer keeps writing on its own connection. The offending connection gets an error or is closed, as Apache
Kafka does; afterwards the broker still answers a new connection, every record the bystander sent was
acknowledged, and everything stored (before and during the bad input) reads back intact.

Requests are built by hand with struct (and kafka-python's record batch builder), independently of our own
protocol/ codec, so a codec bug cannot hide on both sides.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.broker_process import BrokerProcess

pytestmark = pytest.mark.timeout(120)

CLOSE_TIMEOUT_S = 10.0
API_PRODUCE, API_METADATA, API_VERSIONS = 0, 3, 18
UNSUPPORTED_VERSION, CORRUPT_MESSAGE = 35, 2
KAFKA_DEFAULT_MAX_REQUEST_BYTES = 104_857_600  # socket.request.max.bytes


# ---- raw protocol helpers -------------------------------------------------------------------------------


def frame(
    api_key: int, api_version: int, correlation_id: int, body: bytes, *, flexible_header: bool = False
) -> bytes:
    """A size-prefixed request: header v1 (v2 adds an empty tagged-field section) followed by the body."""
    client_id = b"bad-input-test"
    header = struct.pack(">hhih", api_key, api_version, correlation_id, len(client_id)) + client_id
    if flexible_header:
        header += b"\x00"
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def connect(broker: BrokerProcess) -> socket.socket:
    sock = socket.create_connection((broker.host, broker.port), timeout=CLOSE_TIMEOUT_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError(f"connection closed after {len(data)} of {size} bytes")
        data += chunk
    return bytes(data)


def recv_response(sock: socket.socket) -> bytes:
    """One size-prefixed response (correlation id included)."""
    (size,) = struct.unpack(">i", recv_exactly(sock, 4))
    return recv_exactly(sock, size)


def assert_closed_by_broker(sock: socket.socket) -> None:
    """The broker must close this connection within CLOSE_TIMEOUT_S (bytes sent before closing are allowed)."""
    sock.settimeout(CLOSE_TIMEOUT_S)
    try:
        while sock.recv(65536):
            pass
    except (ConnectionResetError, BrokenPipeError):
        pass
    except TimeoutError:
        pytest.fail(f"the broker kept the connection open for {CLOSE_TIMEOUT_S} s")


def assert_broker_answers(broker: BrokerProcess) -> None:
    """A new connection still gets an ApiVersions v0 answer with error 0."""
    assert broker.is_running(), f"broker died:\n{broker.log_tail()}"
    with connect(broker) as sock:
        sock.sendall(frame(API_VERSIONS, 0, 7, b""))
        response = recv_response(sock)
    correlation_id, error_code = struct.unpack(">ih", response[:6])
    assert (correlation_id, error_code) == (7, 0)


def produce_v7(topic: str, partition: int, records: bytes) -> bytes:
    """Produce v7 body (non-flexible): transactional_id null, acks -1, timeout 30 s, one topic, one partition."""
    name = topic.encode()
    return (
        struct.pack(">hhi", -1, -1, 30_000)
        + struct.pack(">i", 1)
        + struct.pack(">h", len(name))
        + name
        + struct.pack(">i", 1)
        + struct.pack(">ii", partition, len(records))
        + records
    )


def parse_produce_v7_response(response: bytes) -> tuple[int, int, int]:
    """(correlation id, error code, base offset) of the single partition in a Produce v7 response."""
    correlation_id, topics = struct.unpack_from(">ii", response, 0)
    assert topics == 1
    (name_length,) = struct.unpack_from(">h", response, 8)
    offset = 10 + name_length
    partitions, index, error_code, base_offset = struct.unpack_from(">iihq", response, offset)
    assert (partitions, index) == (1, 0)
    return correlation_id, error_code, base_offset


def record_batch(value: bytes) -> bytearray:
    """A valid magic v2 batch of one record, built by kafka-python (an independent implementation)."""
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=0, producer_id=-1, producer_epoch=-1, base_sequence=-1,
        batch_size=1 << 20,
    )  # fmt: skip
    builder.append(0, timestamp=int(time.time() * 1000), key=b"k", value=value, headers=[])
    batch: bytearray = builder.build()  # unannotated in kafka-python's stubs
    return batch


# ---- the well-behaved bystander ---------------------------------------------------------------------------


class Bystander:
    """A confluent-kafka producer writing one record every few milliseconds on its own connection."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.topic = f"bystander-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(self.topic, num_partitions=1, replication_factor=1)])[
            self.topic
        ].result(30)
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        self.sent = 0
        self.acked: dict[int, int] = {}  # value index -> offset
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bystander", daemon=True)

    def _on_delivery(self, error: object, message: Message) -> None:
        if error is not None:
            self.errors.append(str(error))
            return
        value, offset = message.value(), message.offset()
        assert isinstance(value, bytes)
        assert offset is not None
        self.acked[int(value)] = offset

    def _run(self) -> None:
        while not self._stop.is_set():
            self.producer.produce(self.topic, value=b"%d" % self.sent, on_delivery=self._on_delivery)
            self.sent += 1
            self.producer.poll(0.005)

    def start(self) -> Bystander:
        self._thread.start()
        # Some data is stored before the bad input begins.
        deadline = time.monotonic() + 30
        while len(self.acked) < 20 and time.monotonic() < deadline and not self.errors:
            time.sleep(0.01)
        assert len(self.acked) >= 20, f"bystander got no acknowledgements before the test: {self.errors[:3]}"
        return self

    def verify(self) -> None:
        """Stop producing; every record acknowledged without error, and all of it readable in order."""
        self._stop.set()
        self._thread.join(10)
        assert self.producer.flush(30) == 0
        assert not self.errors, f"bystander delivery errors: {self.errors[:5]}"
        assert sorted(self.acked) == list(range(self.sent))
        assert sorted(self.acked.values()) == list(range(self.sent))
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"bystander-{uuid.uuid4()}",
                "enable.auto.commit": False,
            }
        )
        try:
            consumer.assign([TopicPartition(self.topic, 0, 0)])
            values: list[int] = []
            deadline = time.monotonic() + 30
            while len(values) < self.sent and time.monotonic() < deadline:
                for message in consumer.consume(1000, timeout=0.2):
                    assert message.error() is None, message.error()
                    assert message.offset() == len(values)
                    value = message.value()
                    assert isinstance(value, bytes)
                    values.append(int(value))
        finally:
            consumer.close()
        assert values == [index for index, _ in sorted(self.acked.items(), key=lambda item: item[1])]


@pytest.fixture
def bystander(broker: BrokerProcess) -> Iterator[Bystander]:
    bystander = Bystander(broker.bootstrap).start()
    yield bystander
    bystander._stop.set()


# ---- the tests --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "garbage",
    [
        pytest.param(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", id="http-request"),
        pytest.param(struct.pack(">i", 12) + b"\xde\xad\xbe\xef" * 3, id="random-header"),
        pytest.param(struct.pack(">i", 0), id="empty-frame"),
        pytest.param(struct.pack(">i", 3) + b"\x00\x12\x00", id="frame-shorter-than-a-header"),
    ],
)
def test_garbage_closes_the_connection(broker: BrokerProcess, bystander: Bystander, garbage: bytes) -> None:
    with connect(broker) as sock:
        sock.sendall(garbage)
        assert_closed_by_broker(sock)
    assert_broker_answers(broker)
    bystander.verify()


def test_negative_length_prefix_closes_the_connection(broker: BrokerProcess, bystander: Bystander) -> None:
    with connect(broker) as sock:
        sock.sendall(struct.pack(">i", -16) + b"\x00" * 16)
        assert_closed_by_broker(sock)
    assert_broker_answers(broker)
    bystander.verify()


@pytest.mark.parametrize("size", [KAFKA_DEFAULT_MAX_REQUEST_BYTES + 1, 2**31 - 1], ids=["max-plus-1", "2GiB"])
def test_huge_length_prefix_closes_the_connection(
    broker: BrokerProcess, bystander: Bystander, size: int
) -> None:
    # Only the prefix is sent: the broker must refuse without waiting for (or allocating) the announced bytes.
    with connect(broker) as sock:
        sock.sendall(struct.pack(">i", size) + b"\x00" * 64)
        assert_closed_by_broker(sock)
    assert_broker_answers(broker)
    bystander.verify()


def test_truncated_frame_then_close(broker: BrokerProcess, bystander: Bystander) -> None:
    request = frame(API_METADATA, 1, 1, struct.pack(">i", -1))
    with connect(broker) as sock:
        sock.sendall(request[: len(request) // 2])
    time.sleep(0.2)
    # Several times, in case the broker leaks something per half-read connection.
    for _ in range(20):
        with connect(broker) as sock:
            sock.sendall(request[:5])
    assert_broker_answers(broker)
    bystander.verify()


def test_unknown_api_key_closes_the_connection(broker: BrokerProcess, bystander: Bystander) -> None:
    with connect(broker) as sock:
        sock.sendall(frame(1000, 0, 1, b"\x00" * 8))
        assert_closed_by_broker(sock)
    assert_broker_answers(broker)
    bystander.verify()


def test_unsupported_version_of_known_api_closes_the_connection(
    broker: BrokerProcess, bystander: Bystander
) -> None:
    # Metadata v99: Kafka closes the connection for any API but ApiVersions (PROTOCOL.md 1.1).
    with connect(broker) as sock:
        sock.sendall(frame(API_METADATA, 99, 1, struct.pack(">i", -1), flexible_header=True))
        assert_closed_by_broker(sock)
    assert_broker_answers(broker)
    bystander.verify()


def test_api_versions_newer_than_supported_gets_error_35_in_v0(
    broker: BrokerProcess, bystander: Bystander
) -> None:
    # KIP-511: unparsed body, error UNSUPPORTED_VERSION, v0 response schema listing ApiVersions' own range.
    with connect(broker) as sock:
        sock.sendall(frame(API_VERSIONS, 127, 42, b"\x00garbage-body", flexible_header=True))
        response = recv_response(sock)
        correlation_id, error_code, count = struct.unpack_from(">ihi", response, 0)
        assert (correlation_id, error_code) == (42, UNSUPPORTED_VERSION)
        ranges = {
            key: (low, high) for key, low, high in struct.iter_unpack(">hhh", response[10 : 10 + 6 * count])
        }
        assert API_VERSIONS in ranges
        assert ranges[API_VERSIONS][1] < 127
        # The connection stays usable: the client retries at a version the broker has.
        sock.sendall(frame(API_VERSIONS, 0, 43, b""))
        assert struct.unpack_from(">ih", recv_response(sock), 0) == (43, 0)
    bystander.verify()


def test_produce_with_wrong_crc_gets_corrupt_message(broker: BrokerProcess, bystander: Bystander) -> None:
    topic = f"crc-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})  # must outlive the future it returns
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(30)
    with connect(broker) as sock:
        good = record_batch(b"first")
        sock.sendall(frame(API_PRODUCE, 7, 1, produce_v7(topic, 0, bytes(good))))
        assert parse_produce_v7_response(recv_response(sock)) == (1, 0, 0)

        corrupt = record_batch(b"second")
        corrupt[-3] ^= 0xFF  # a byte of the value, covered by the CRC (which stays as computed)
        sock.sendall(frame(API_PRODUCE, 7, 2, produce_v7(topic, 0, bytes(corrupt))))
        correlation_id, error_code, _ = parse_produce_v7_response(recv_response(sock))
        assert (correlation_id, error_code) == (2, CORRUPT_MESSAGE)

        # Nothing of the corrupt batch was stored, and the connection goes on working.
        sock.sendall(frame(API_PRODUCE, 7, 3, produce_v7(topic, 0, bytes(record_batch(b"third")))))
        assert parse_produce_v7_response(recv_response(sock)) == (3, 0, 1)

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"crc-{uuid.uuid4()}"})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        stored: list[tuple[int | None, bytes | str | None]] = []
        deadline = time.monotonic() + 30
        while len(stored) < 2 and time.monotonic() < deadline:
            for message in consumer.consume(10, timeout=0.5):
                assert message.error() is None, message.error()
                stored.append((message.offset(), message.value()))
    finally:
        consumer.close()
    assert stored == [(0, b"first"), (1, b"third")]
    bystander.verify()
