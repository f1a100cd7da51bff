"""One connection, many requests in flight (kbroker/connection.py): answers leave in request order, whether they are
ready at once (written by the reading task itself) or wait for an fsync (acks=-1, sent by the writer task), and a
client that stops reading its answers holds back only itself. connections.max.idle.ms counts only the time a
connection waits for its peer.

Raw sockets against a broker process, as a pipelining client (librdkafka, the Java client) uses them."""

from __future__ import annotations

import fcntl
import socket
import struct
import termios
import threading
import time

import pytest

from protocol.codec import decode_from
from protocol.errors import ErrorCode
from protocol.headers import read_response_header, response_header_version
from protocol.messages import RESPONSES, SCHEMAS
from protocol.messages.api_versions_request import ApiVersionsRequest
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from protocol.primitives import Reader
from protocol.records import Record, build_batch
from tests.broker_process import BrokerProcess
from tests.conftest import BrokerFactory
from tests.test_groups_support import Wire, create_topic

pytestmark = pytest.mark.timeout(120)


def produce_request(topic: str, partition: int, acks: int, value: bytes, count: int = 1) -> ProduceRequest:
    batch = build_batch([Record(i, 1_700_000_000_000, None, value) for i in range(count)])
    return ProduceRequest(
        acks=acks,
        timeout_ms=30_000,
        topic_data=[
            TopicProduceData(
                name=topic, partition_data=[PartitionProduceData(index=partition, records=bytes(batch))]
            )
        ],
    )


def read_answer(wire: Wire, request: object, version: int) -> tuple[int, object]:
    """(correlation id, decoded response) of the next answer on the connection."""
    (size,) = struct.unpack(">i", wire._recv(4))
    reader = Reader(bytearray(wire._recv(size)))
    response_cls = RESPONSES[SCHEMAS[type(request)].api_key]
    correlation_id = read_response_header(reader, response_header_version(SCHEMAS[response_cls], version))
    return correlation_id, decode_from(response_cls, version, reader)


def test_pipelined_answers_keep_the_request_order_across_fsync_waits(broker: BrokerProcess) -> None:
    """acks=-1 produces wait for their fsync while the acks=1 produces, Metadata and ApiVersions requests behind them
    are answered at once: each later answer must still leave after the ones before it."""
    topic = create_topic(broker.bootstrap, 2, prefix="pipelined")
    value = b"v" * 2000
    requests: list[tuple[object, int]] = []
    for i in range(40):
        requests.append((produce_request(topic, i % 2, -1, value, count=50), 9))
        requests.append((produce_request(topic, i % 2, 1, value), 9))
        requests.append((MetadataRequest(topics=[MetadataRequestTopic(name=topic)]), 12))
        requests.append((ApiVersionsRequest(), 3))
    with Wire(broker.bootstrap) as wire:
        for request, version in requests:
            wire.send(request, version)
        for expected, (request, version) in enumerate(requests, start=1):
            correlation_id, answer = read_answer(wire, request, version)
            assert correlation_id == expected
            if isinstance(request, ProduceRequest):
                (partition,) = answer.responses[0].partition_responses  # type: ignore[attr-defined]
                assert partition.error_code == ErrorCode.NONE
    # Every record is there: 20 x (50 + 1) in each of the two partitions, so the next two appends to partition 1
    # (50 records, then 1) get these offsets.
    with Wire(broker.bootstrap) as wire:
        for (request, version), offset in zip(requests[-4:-2], (20 * 51, 20 * 51 + 50), strict=True):
            wire.send(request, version)
            _, answer = read_answer(wire, request, version)
            (partition,) = answer.responses[0].partition_responses  # type: ignore[attr-defined]
            assert partition.base_offset == offset


def unread_bytes(sock: socket.socket) -> int:
    """What the kernel holds for `sock` that the client has not read yet (FIONREAD)."""
    (unread,) = struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))
    return int(unread)


def test_a_client_that_stops_reading_holds_back_only_itself(broker: BrokerProcess) -> None:
    """A client sends far more requests than its answers' worth of socket buffers and reads nothing: its answers
    pile up (the broker writes what the socket takes and queues the rest, then stops reading the client), while
    another connection is served; once the client reads, every answer arrives, whole and in order."""
    topic = create_topic(broker.bootstrap, 1, prefix="stalled")
    request = MetadataRequest(topics=[MetadataRequestTopic(name=topic)])
    count = 20_000
    stalled = Wire(broker.bootstrap)

    def send_all() -> None:
        for _ in range(count):
            stalled.send(request, 12)

    sender = threading.Thread(target=send_all, daemon=True)
    sender.start()
    try:
        # The stalled client's receive buffer fills up with answers it does not read.
        deadline = time.monotonic() + 30
        while unread_bytes(stalled.sock) < 64 * 1024:
            assert time.monotonic() < deadline, f"only {unread_bytes(stalled.sock)} bytes of answers arrived"
            time.sleep(0.01)
        with Wire(broker.bootstrap) as other:
            answer = other.call(produce_request(topic, 0, 1, b"x"), 9)
            assert answer.responses[0].partition_responses[0].error_code == ErrorCode.NONE
        for expected in range(1, count + 1):
            correlation_id, metadata = read_answer(stalled, request, 12)
            assert correlation_id == expected
            assert metadata.topics[0].name == topic  # type: ignore[attr-defined]
        sender.join(30)
        assert not sender.is_alive()
    finally:
        stalled.close()


def test_idle_expiry_closes_only_a_connection_waiting_for_its_peer(broker_factory: BrokerFactory) -> None:
    """connections.max.idle.ms is the time a connection waits for its peer (kbroker/connection.py, IdleExpiry): a
    client that asks more often than that is served on, a request kept waiting longer than that (a Fetch parked
    for its max_wait_ms) is answered, and the connection is closed once its peer has then been quiet that long.
    (Kafka 3.9.2 closes this connection 1.2 s into the parked fetch: docs/kafka-differences.md.)"""
    broker = broker_factory(overrides={"connections.max.idle.ms": "1000"}, name="idle")
    topic = create_topic(broker.bootstrap, 1, prefix="idle")
    with Wire(broker.bootstrap) as wire:
        # 2.4 s of requests 0.3 s apart: each is answered on the same connection.
        for _ in range(8):
            request = ApiVersionsRequest(client_software_name="idle-test", client_software_version="1")
            assert wire.call(request, 3).error_code == ErrorCode.NONE
            time.sleep(0.3)
        # A fetch at the end of the empty log parks for max_wait_ms, 2.5 times the idle timeout.
        fetch = FetchRequest(
            replica_id=-1,
            max_wait_ms=2500,
            min_bytes=1,
            max_bytes=1 << 20,
            topics=[FetchTopic(topic=topic, partitions=[FetchPartition(partition=0, fetch_offset=0)])],
        )
        asked = time.monotonic()
        response = wire.call(fetch, 12)
        answered = time.monotonic()
        assert answered - asked >= 2.0, "the fetch did not park: this test no longer covers a long request"
        assert response.error_code == ErrorCode.NONE
        assert response.responses[0].partitions[0].error_code == ErrorCode.NONE
        # Then the client is quiet: closed, and not before the timeout.
        wire.sock.settimeout(10)
        assert wire.sock.recv(1) == b""
        assert time.monotonic() - answered >= 1.0
    assert "idle for 1 s" in broker.log_text()
