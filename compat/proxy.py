"""A TCP proxy in front of one broker that can cut a connection at a chosen moment, the same way for any broker.

Clients reach the broker only through the proxy when the broker advertises the proxy's address (compat/sibling.py
starts one so). The proxy reads the Kafka framing (a 4-byte size, then the request or response) just enough to know
each request's API key and correlation id (and a Produce request's batches), and forwards every byte unchanged until
a fault is armed:

    done = proxy.spoil_produce_responses({3: ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, 6: CUT})

counts the Produce requests sent from then on. The response to the third reaches the client with that error in
every partition (Kafka's own case of a retriable error after the append): the client retries batches the broker
holds already. The response to the sixth is dropped and its connection (client side and upstream) closed: the
broker has appended the batches, the client never hears so and sends them again on a new connection. Both are what
an idempotent producer must survive without duplicates. `done` maps each request number to a threading.Event set
once its fault has happened, so a scenario waits for the faults instead of hoping for them.

The count pauses while a spoiled batch waits for its retry to be answered without error (a batch is known by its
topic, partition, producer id, epoch and base sequence): the sixth is the sixth counted, not the sixth sent. Without
the pause the cut could fall on the very request that retries the third's batches, with four new requests pipelined
behind it; the broker appends those too, so when the client sends that retry once more on its new connection, the
batch is no longer among the producer's last five there, and Kafka and kbroker alike answer
OUT_OF_ORDER_SEQUENCE_NUMBER. The Java client 3.9 then retries it until delivery.timeout.ms: the batches acknowledged
meanwhile make it believe an earlier batch is still on its way (the retry loop of KAFKA-14359's family). Two faults
that close together hit a limit of the client and of the five-batch window, not what the scenario tests.

To spoil a Produce response the proxy decodes and re-encodes it with our codec, which knows Kafka 3.9's versions. So
the one other thing it changes is the broker's ApiVersions answer: Produce's maximum is capped at the codec's (v11),
and a client that would speak Kafka 4's Produce v12-13 (franz-go against Kafka 4.3) speaks v11 through the proxy.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from protocol.codec import decode_from, encode_into
from protocol.errors import ProtocolError
from protocol.headers import (
    encode_response_header,
    read_request_header_prefix,
    read_response_header,
    request_header_version,
    response_header_version,
    skip_tagged_fields,
)
from protocol.messages import SCHEMAS
from protocol.messages.api_versions_response import ApiVersionsResponse
from protocol.messages.produce_request import ProduceRequest
from protocol.messages.produce_response import ProduceResponse
from protocol.primitives import Reader, Writer
from protocol.records import RECORD_BATCH_OVERHEAD, RecordBatch

PRODUCE = 0
API_VERSIONS = 18
CUT = None  # a fault that drops the response and closes the connection

# A batch as a retry repeats it: topic, partition, producer id, producer epoch, base sequence.
BatchKey = tuple[str, int, int, int, int]


@dataclass(frozen=True)
class _Fault:
    error_code: int | None  # CUT, or the error every partition of the response answers
    done: threading.Event


class FaultProxy:
    def __init__(self, upstream_host: str, upstream_port: int, host: str = "127.0.0.1") -> None:
        self.upstream = (upstream_host, upstream_port)
        self._listener = socket.create_server((host, 0))
        self.host = host
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._connections: list[_Connection] = []
        self._produce_requests = 0
        self._faults: dict[int, _Fault] = {}
        # Batches of spoiled responses whose retry has not been answered without error yet: the count waits.
        self._unanswered: set[BatchKey] = set()
        self._closed = False
        self._acceptor = threading.Thread(target=self._accept, name=f"proxy-{self.port}", daemon=True)
        self._acceptor.start()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def spoil_produce_responses(self, faults: Mapping[int, int | None]) -> dict[int, threading.Event]:
        """Arm faults by Produce request number, counted from now (1 is the next; the count pauses while a spoiled
        batch's retry is unanswered): CUT drops that request's response and closes its connection, an error code
        replaces the response by that error in every partition (and no offsets). Returns the events set once each
        fault has happened."""
        assert all(nth >= 1 for nth in faults)
        armed = {nth: _Fault(error_code, threading.Event()) for nth, error_code in faults.items()}
        with self._lock:
            self._produce_requests = 0
            self._faults = armed
            self._unanswered = set()
        return {nth: fault.done for nth, fault in armed.items()}

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._acceptor.join(5)
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            connection.close()
        for connection in connections:
            connection.join()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- internals (called from the connection threads) ------------------------------------------------------

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            connection = _Connection(self, client, upstream)
            with self._lock:
                self._connections = [c for c in self._connections if c.alive()]
                self._connections.append(connection)
            connection.start()

    def _fault_for(self, batches: set[BatchKey]) -> tuple[_Fault | None, set[BatchKey]]:
        """Count a Produce request (carrying `batches`) on its way to the broker, unless a spoiled batch still
        waits for its retry to be answered. Returns the armed fault if this request's response is the one to spoil,
        and the spoiled batches it retries (whose answer the connection reports with `_answered`)."""
        with self._lock:
            retried = batches & self._unanswered
            if not self._faults or self._unanswered:
                return None, retried
            self._produce_requests += 1
            fault = self._faults.pop(self._produce_requests, None)
            if fault is not None:
                self._unanswered = set(batches)
            return fault, retried

    def _answered(self, batches: set[BatchKey]) -> None:
        """Retries of spoiled batches were answered without error."""
        with self._lock:
            self._unanswered -= batches


class _Connection:
    """One client connection and its upstream twin, each direction pumped by its own thread."""

    def __init__(self, proxy: FaultProxy, client: socket.socket, upstream: socket.socket) -> None:
        self.proxy = proxy
        self.client = client
        self.upstream = upstream
        # correlation id of a response to spoil -> (request version, fault); requests are pipelined
        self._victims: dict[int, tuple[int, _Fault]] = {}
        # correlation id of a request that retries spoiled batches -> (request version, those batches)
        self._retries: dict[int, tuple[int, set[BatchKey]]] = {}
        # correlation id of an ApiVersions request -> its version
        self._api_versions: dict[int, int] = {}
        self._threads = [
            threading.Thread(target=self._requests, daemon=True),
            threading.Thread(target=self._responses, daemon=True),
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def alive(self) -> bool:
        return any(thread.is_alive() for thread in self._threads)

    def join(self) -> None:
        for thread in self._threads:
            thread.join(5)

    def close(self) -> None:
        for sock in (self.client, self.upstream):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _requests(self) -> None:
        try:
            while True:
                frame = _read_frame(self.client)
                if frame is None:
                    break
                api_key, version, correlation_id = struct.unpack_from(">hhi", frame, 4)
                if api_key == PRODUCE:
                    fault, retried = self.proxy._fault_for(_produce_batches(frame, version))
                    if fault is not None:
                        self._victims[correlation_id] = (version, fault)
                    if retried:
                        self._retries[correlation_id] = (version, retried)
                if api_key == API_VERSIONS:
                    self._api_versions[correlation_id] = version
                self.upstream.sendall(frame)
        except (OSError, ProtocolError):  # a frame our codec cannot read ends the connection too
            pass
        self.close()

    def _responses(self) -> None:
        try:
            while True:
                frame = _read_frame(self.upstream)
                if frame is None:
                    break
                (correlation_id,) = struct.unpack_from(">i", frame, 4)
                api_versions = self._api_versions.pop(correlation_id, None)
                if api_versions is not None:
                    frame = _cap_produce_version(frame, api_versions)
                retry = self._retries.pop(correlation_id, None)
                if retry is not None:
                    self.proxy._answered(_answered_batches(frame, *retry))
                victim = self._victims.pop(correlation_id, None)
                if victim is not None:
                    version, fault = victim
                    if fault.error_code is None:
                        self.close()
                        fault.done.set()
                        return
                    frame = _produce_error(frame, version, fault.error_code)
                    self.client.sendall(frame)
                    fault.done.set()
                    continue
                self.client.sendall(frame)
        except (OSError, ProtocolError):  # a frame our codec cannot read ends the connection too
            pass
        self.close()


def _produce_batches(frame: bytes, version: int) -> set[BatchKey]:
    """The idempotent batches of a Produce request frame, as a retry would repeat them."""
    schema = SCHEMAS[ProduceRequest]
    reader = Reader(bytearray(frame[4:]))
    read_request_header_prefix(reader)
    if request_header_version(schema, version) == 2:
        skip_tagged_fields(reader)
    request = decode_from(ProduceRequest, version, reader)
    batches: set[BatchKey] = set()
    for topic in request.topic_data:
        for partition in topic.partition_data:
            records = partition.records
            if records is None or len(records) < RECORD_BATCH_OVERHEAD:
                continue
            batch = RecordBatch(records)
            if batch.producer_id >= 0:
                key = (
                    topic.name,
                    partition.index,
                    batch.producer_id,
                    batch.producer_epoch,
                    batch.base_sequence,
                )
                batches.add(key)
    return batches


def _answered_batches(frame: bytes, version: int, batches: set[BatchKey]) -> set[BatchKey]:
    """Those of `batches` whose partition the Produce response frame answers without error."""
    reader = Reader(bytearray(frame[4:]))
    read_response_header(reader, response_header_version(SCHEMAS[ProduceResponse], version))
    response = decode_from(ProduceResponse, version, reader)
    fine = {
        (topic.name, partition.index)
        for topic in response.responses
        for partition in topic.partition_responses
        if partition.error_code == 0
    }
    return {key for key in batches if key[:2] in fine}


def _produce_error(frame: bytes, version: int, error_code: int) -> bytes:
    """A Produce response frame with `error_code` (and no offsets) in every partition."""
    schema = SCHEMAS[ProduceResponse]
    header_version = response_header_version(schema, version)
    reader = Reader(bytearray(frame[4:]))
    correlation_id = read_response_header(reader, header_version)
    response = decode_from(ProduceResponse, version, reader)
    for topic in response.responses:
        for partition in topic.partition_responses:
            partition.error_code = error_code
            partition.base_offset = -1
            partition.log_append_time_ms = -1
    writer = Writer()
    writer.int32(0)
    encode_response_header(writer, correlation_id, header_version)
    encode_into(writer, response, version)
    writer.out[0:4] = (len(writer.out) - 4).to_bytes(4, "big")
    return bytes(writer.out)


def _cap_produce_version(frame: bytes, version: int) -> bytes:
    """An ApiVersions response frame whose Produce maximum is at most the one our codec knows; the frame unchanged
    when nothing is above it, or when it is not a successful answer at `version` (a broker answers a version it
    lacks with UNSUPPORTED_VERSION in v0's layout)."""
    if version > SCHEMAS[ApiVersionsResponse].valid.hi:
        return frame
    reader = Reader(bytearray(frame[4:]))
    correlation_id = read_response_header(reader, 0)  # ApiVersions answers with header v0 at every version
    try:
        response = decode_from(ApiVersionsResponse, version, reader)
    except ProtocolError:
        return frame
    highest = SCHEMAS[ProduceResponse].valid.hi
    produce = [k for k in response.api_keys if k.api_key == PRODUCE and k.max_version > highest]
    if response.error_code != 0 or not produce:
        return frame
    for key in produce:
        key.max_version = highest
    writer = Writer()
    writer.int32(0)
    encode_response_header(writer, correlation_id, 0)
    encode_into(writer, response, version)
    writer.out[0:4] = (len(writer.out) - 4).to_bytes(4, "big")
    return bytes(writer.out)


def _read_frame(sock: socket.socket) -> bytes | None:
    """One size-prefixed frame (size included), or None at a clean end of stream."""
    header = _read_exactly(sock, 4)
    if header is None:
        return None
    (size,) = struct.unpack(">i", header)
    body = _read_exactly(sock, size)
    if body is None:
        raise ConnectionError("connection closed inside a frame")
    return header + body


def _read_exactly(sock: socket.socket, size: int) -> bytes | None:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(min(size - len(data), 1 << 20))
        if not chunk:
            if data:
                raise ConnectionError("connection closed inside a frame")
            return None
        data += chunk
    return bytes(data)
