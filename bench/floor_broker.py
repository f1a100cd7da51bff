"""The least a Python broker can do per produce request: a floor for kbroker's CPU per record (bench/python_floor.py).

    .venv/bin/python bench/floor_broker.py --data-dir /tmp/floor --port 19192 [--mode trio|threads]

It answers ApiVersions, Metadata and Produce (v8-v10), and nothing else. Every topic a Metadata request names
exists, with 4 partitions led by this broker (as the mock cluster auto-creates them). For each record batch of a
Produce it does what any broker must: check its CRC-32C, set its base offset, append it to its partition's file with
one `write` from the request's own buffer (into disk blocks reserved ahead, as kbroker's segments do), and answer with
the offset. Nothing more: no segments, indexes, log configs, producer-id checks, metrics, quotas or access control,
no validation beyond the CRC. At acks=all (trio mode) it fsyncs the request's files through kbroker's `Fsyncer`
(Linux asynchronous I/O, kbroker/log/fsyncer.py) before it answers, one request at a time per connection: no group
commit across requests, which kbroker's committer does. The threads mode refuses acks=all with
INVALID_REQUIRED_ACKS.

The connection loop is kbroker's (kbroker/connection.py) cut to the bone: `os.readv` straight into the frame decoder's
buffer (protocol/framing.py, which kbroker uses), `wait_readable` only when the socket is dry, one pass through trio's
scheduler per request, the answer written with `os.write`. `--mode threads` serves each connection in a thread of
its own with blocking system calls instead, with no event loop at all: the least Python can do.

Prints `BOOTSTRAP 127.0.0.1:PORT` once it listens, and runs until stopped (SIGTERM, SIGINT).
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import struct
import sys
import threading
import uuid
from pathlib import Path

import trio
from crc32c import crc32c

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from kbroker.log.files import preallocate  # noqa: E402
from kbroker.log.fsyncer import Fsyncer  # noqa: E402
from protocol.codec import decode, encode  # noqa: E402
from protocol.errors import ErrorCode, ProtocolError  # noqa: E402
from protocol.framing import NEED_DATA, FrameDecoder  # noqa: E402
from protocol.messages.api_versions_response import ApiVersion, ApiVersionsResponse  # noqa: E402
from protocol.messages.metadata_request import MetadataRequest  # noqa: E402
from protocol.messages.metadata_response import (  # noqa: E402
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)

PARTITIONS = 4
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")
NODE_ID = 1
PRODUCE, FETCH, METADATA, API_VERSIONS = 0, 1, 3, 18
# Fetch is advertised, never served: librdkafka writes the v2 record batch format only to a broker that lists
# Produce v3+ and Fetch v4+. Produce from v8, the first with every field of today's answer (record errors).
ADVERTISED = {PRODUCE: (8, 10), FETCH: (4, 12), METADATA: (0, 12), API_VERSIONS: (0, 3)}

_HEADER = struct.Struct(">hhih")  # api key, api version, correlation id, client id length
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
# a batch's base offset (8), length (4), leader epoch (4), magic (1), CRC (4); the CRC covers the rest
_CRC_AT, _CRC_FROM, _LAST_OFFSET_DELTA_AT = 17, 21, 23
# Disk blocks reserved ahead of a file's end, as kbroker's busy segments do (kbroker/log/segment.py): a write into
# reserved blocks costs the kernel its copy only, not ext4's block allocation.
PREALLOCATE_BYTES = 8 * 1024 * 1024
# a partition's answer after its index and error code: base offset, log append time -1, log start offset 0
_PARTITION_TAIL = struct.Struct(">qqq")


# protocol/primitives.py's Reader and Writer read and write these too, each on a cursor object of its own; the floor
# keeps to bare functions over the frame and a position, the least it can cost.
def _uvarint(buf: bytearray, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _write_uvarint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_length(frame: bytearray, pos: int, flexible: bool, fixed: struct.Struct) -> tuple[int, int]:
    """An array's count, or a string's or bytes' length (-1: null): compact in flexible versions (an unsigned varint
    of n + 1), else `fixed`."""
    if flexible:
        n, pos = _uvarint(frame, pos)
        return n - 1, pos
    return int(fixed.unpack_from(frame, pos)[0]), pos + fixed.size


def _write_length(out: bytearray, n: int, flexible: bool, fixed: struct.Struct) -> None:
    if flexible:
        _write_uvarint(out, n + 1)
    else:
        out += fixed.pack(n)


class FloorBroker:
    """The partitions' files and the answers to the three APIs; `handle(frame)` is the whole request path."""

    def __init__(self, data_dir: Path, port: int, *, acks_all: bool) -> None:
        self.data_dir = data_dir
        self.port = port
        self.acks_all = acks_all
        self.to_fsync: list[int] = []
        """The files an acks=all request wrote (`acks_all`, one thread): fsync them before its answer."""
        # (topic, partition) -> [fd, next offset, size, bytes reserved]
        self._logs: dict[tuple[str, int], list[int]] = {}
        self._lock = threading.Lock()  # --mode threads: two connections may open a partition's file at once

    def close(self) -> None:
        for log in self._logs.values():
            if log[0] >= 0:
                os.close(log[0])

    def _log(self, topic: str, partition: int) -> list[int] | None:
        """The partition's [fd, next offset, size, bytes reserved]; None for a name Kafka would not take."""
        log = self._logs.get((topic, partition))
        if log is None:
            if not _LEGAL_TOPIC.fullmatch(topic) or topic in (".", ".."):
                return None
            with self._lock:
                log = self._logs.get((topic, partition))
                if log is None:
                    directory = self.data_dir / f"{topic}-{partition}"
                    directory.mkdir(parents=True, exist_ok=True)
                    fd = os.open(
                        directory / "00000000000000000000.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644
                    )
                    log = self._logs[(topic, partition)] = [fd, 0, 0, 0]
        return log

    def handle(self, frame: bytearray) -> bytes | bytearray | None:
        """One request frame (without its size prefix) in, the response frame's body out (None: no response).
        Raises ProtocolError for a request it cannot read or does not serve: its connection is closed."""
        try:
            return self._handle(frame)
        except (IndexError, struct.error, UnicodeDecodeError) as exc:
            raise ProtocolError(f"malformed request: {exc}") from exc

    def _handle(self, frame: bytearray) -> bytes | bytearray | None:
        api_key, version, correlation_id, client_id_length = _HEADER.unpack_from(frame, 0)
        pos = _HEADER.size + max(client_id_length, 0)
        if api_key == PRODUCE and 8 <= version <= 10:
            flexible = version >= 9
            if flexible:
                pos = self._skip_tags(frame, pos)
            return self._produce(frame, pos, correlation_id, flexible)
        if api_key == METADATA and version <= 12:
            if version >= 9:
                pos = self._skip_tags(frame, pos)
            return self._metadata(frame, pos, version, correlation_id)
        if api_key == API_VERSIONS:
            return self._api_versions(version, correlation_id)
        raise ProtocolError(f"API {api_key} v{version} is not served by the floor broker")

    @staticmethod
    def _skip_tags(frame: bytearray, pos: int) -> int:
        count, pos = _uvarint(frame, pos)
        for _ in range(count):
            _, pos = _uvarint(frame, pos)
            size, pos = _uvarint(frame, pos)
            pos += size
        return pos

    def _produce(self, frame: bytearray, pos: int, correlation_id: int, flexible: bool) -> bytearray | None:
        size, pos = _read_length(frame, pos, flexible, _I16)  # transactional id
        pos += max(size, 0)
        acks = _I16.unpack_from(frame, pos)[0]
        pos += 6  # acks, timeout
        out = bytearray(_I32.pack(correlation_id))
        if flexible:
            out.append(0)  # response header v1: no tagged fields
        topics, pos = _read_length(frame, pos, flexible, _I32)
        _write_length(out, topics, flexible, _I32)
        for _ in range(topics):
            size, pos = _read_length(frame, pos, flexible, _I16)
            if size < 0:
                raise ProtocolError("a produce request names a null topic")
            _write_length(out, size, flexible, _I16)
            name = frame[pos : pos + size]
            out += name
            topic = name.decode()
            pos += size
            partitions, pos = _read_length(frame, pos, flexible, _I32)
            _write_length(out, partitions, flexible, _I32)
            for _ in range(partitions):
                index = _I32.unpack_from(frame, pos)[0]
                size, pos = _read_length(frame, pos + 4, flexible, _I32)
                error, base_offset = self._append(topic, index, frame, pos, pos + size, acks)
                pos += max(size, 0)
                out += _I32.pack(index) + _I16.pack(error) + _PARTITION_TAIL.pack(base_offset, -1, 0)
                if flexible:
                    pos = self._skip_tags(frame, pos)
                    out += b"\x01\x00\x00"  # no record errors, no error message, no tagged fields
                else:
                    out += b"\x00\x00\x00\x00\xff\xff"  # no record errors, no error message
            if flexible:
                pos = self._skip_tags(frame, pos)
                out.append(0)
        out += _I32.pack(0)  # throttle time
        if flexible:
            out.append(0)
        return None if acks == 0 else out

    def _append(
        self, topic: str, partition: int, frame: bytearray, start: int, end: int, acks: int
    ) -> tuple[int, int]:
        """The error code and base offset of one partition's records (one v2 batch, as every client sends)."""
        if acks not in (0, 1) and not (acks == -1 and self.acks_all):
            return ErrorCode.INVALID_REQUIRED_ACKS, -1
        if not 0 <= partition < PARTITIONS:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1
        if end - start < 61 or frame[start + 16] != 2:
            return ErrorCode.INVALID_RECORD, -1
        if crc32c(memoryview(frame)[start + _CRC_FROM : end]) != _U32.unpack_from(frame, start + _CRC_AT)[0]:
            return ErrorCode.CORRUPT_MESSAGE, -1
        log = self._log(topic, partition)
        if log is None:
            return ErrorCode.INVALID_TOPIC_EXCEPTION, -1
        with self._lock:
            if log[0] < 0:
                return ErrorCode.KAFKA_STORAGE_ERROR, -1
            base_offset = log[1]
            _I64.pack_into(frame, start, base_offset)
            if log[2] + end - start > log[3] and preallocate(log[0], log[3], PREALLOCATE_BYTES):
                log[3] += PREALLOCATE_BYTES
            try:
                written = os.write(log[0], memoryview(frame)[start:end])
            except OSError:
                written = -1
            if written != end - start:
                # (a full disk) the file may end in a torn batch: no more appends to it
                os.close(log[0])
                log[0] = -1
                return ErrorCode.KAFKA_STORAGE_ERROR, -1
            log[2] += written
            log[1] = base_offset + _I32.unpack_from(frame, start + _LAST_OFFSET_DELTA_AT)[0] + 1
            if acks == -1:
                self.to_fsync.append(log[0])
        return ErrorCode.NONE, base_offset

    def _metadata(self, frame: bytearray, pos: int, version: int, correlation_id: int) -> bytes:
        request = decode(MetadataRequest, version, memoryview(frame)[pos:])
        names = (
            [t.name for t in request.topics if t.name]
            if request.topics
            else sorted({t for t, _ in self._logs})
        )
        partitions = [
            MetadataResponsePartition(
                partition_index=i,
                leader_id=NODE_ID,
                leader_epoch=0,
                replica_nodes=[NODE_ID],
                isr_nodes=[NODE_ID],
            )
            for i in range(PARTITIONS)
        ]
        response = MetadataResponse(
            brokers=[MetadataResponseBroker(node_id=NODE_ID, host="127.0.0.1", port=self.port)],
            cluster_id="floor-broker",
            controller_id=NODE_ID,
            topics=[
                MetadataResponseTopic(
                    name=name, topic_id=uuid.uuid5(uuid.NAMESPACE_OID, name), partitions=partitions
                )
                for name in names
            ],
        )
        return _I32.pack(correlation_id) + (b"\x00" if version >= 9 else b"") + encode(response, version)

    @staticmethod
    def _api_versions(version: int, correlation_id: int) -> bytes:
        if version > 3:  # KIP-511: a version we do not know is answered at v0 with the versions we have
            response = ApiVersionsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
            version = 0
        else:
            response = ApiVersionsResponse()
        response.api_keys = [
            ApiVersion(api_key=key, min_version=low, max_version=high)
            for key, (low, high) in ADVERTISED.items()
        ]
        return _I32.pack(correlation_id) + encode(response, version)


def _receive(decoder: FrameDecoder, fd: int) -> bytearray | bool:
    """The next whole request frame, reading the socket into the decoder's buffer as needed; True when a
    non-blocking socket has nothing more for now, False once the peer has closed.

    Callers drop the last frame before they call it: a large frame gets a new buffer here, which reuses the memory
    of the last one only if that is free by then (held, it cost a fresh mapping and its page faults every time:
    ~0.2 µs more kernel time per 1 KiB record)."""
    while True:
        frame = decoder.next_frame()
        if frame is not NEED_DATA:
            assert isinstance(frame, bytearray)
            return frame
        try:
            received = os.readv(fd, [decoder.receive_buffer()])
        except BlockingIOError:
            return True
        if not received:
            return False
        decoder.received(received)


async def _serve_trio_connection(broker: FloorBroker, fsyncer: Fsyncer, stream: trio.SocketStream) -> None:
    sock = stream.socket
    fd = sock.fileno()
    decoder = FrameDecoder()
    try:
        while True:
            frame = _receive(decoder, fd)
            if frame is True:
                await trio.lowlevel.wait_readable(sock)
                continue
            if frame is False:
                return
            response = broker.handle(frame)
            del frame  # (see `_receive`)
            if broker.to_fsync:
                fds, broker.to_fsync = broker.to_fsync, []
                if any(await fsyncer.fsync_all(fds)):
                    print("an fsync failed: closing the connection unanswered", file=sys.stderr, flush=True)
                    return
            else:
                # one pass through the scheduler per request, as kbroker's loop
                await trio.lowlevel.checkpoint()
            if response is not None:
                data = _I32.pack(len(response)) + response
                try:
                    sent = os.write(fd, data)
                except BlockingIOError:
                    sent = 0
                if sent < len(data):
                    await stream.send_all(data[sent:])
    except (ProtocolError, trio.BrokenResourceError, ConnectionError) as exc:
        print(f"connection closed: {exc!r}", file=sys.stderr, flush=True)


def _serve_blocking_connection(broker: FloorBroker, sock: socket.socket) -> None:
    fd = sock.fileno()
    decoder = FrameDecoder()
    try:
        while True:
            frame = _receive(decoder, fd)
            if not isinstance(frame, bytearray):
                return  # (a blocking socket: only the peer's close ends a read without a frame)
            response = broker.handle(frame)
            del frame  # (see `_receive`)
            if response is not None:
                sock.sendall(_I32.pack(len(response)) + response)
    except (ProtocolError, ConnectionError) as exc:
        print(f"connection closed: {exc!r}", file=sys.stderr, flush=True)
    finally:
        sock.close()


def _listener(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    print(f"BOOTSTRAP 127.0.0.1:{port}", flush=True)
    return listener


def serve_trio(broker: FloorBroker) -> None:
    async def main() -> None:
        listener = trio.SocketListener(trio.socket.from_stdlib_socket(_listener(broker.port)))

        fsyncer = Fsyncer()

        async def handler(stream: trio.SocketStream) -> None:
            await _serve_trio_connection(broker, fsyncer, stream)

        async with trio.open_nursery() as nursery:
            await nursery.start(fsyncer.run)
            await trio.serve_listeners(handler, [listener])

    trio.run(main)


def serve_threads(broker: FloorBroker) -> None:
    listener = _listener(broker.port)
    while True:
        sock, _ = listener.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_serve_blocking_connection, args=(broker, sock), daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, required=True, help="where the partitions' files go")
    parser.add_argument("--port", type=int, default=19192, help="port on 127.0.0.1 [19192]")
    parser.add_argument(
        "--mode",
        choices=("trio", "threads"),
        default="trio",
        help="trio event loop, or a thread per connection [trio]",
    )
    args = parser.parse_args(argv)
    broker = FloorBroker(args.data_dir, args.port, acks_all=args.mode == "trio")
    try:
        (serve_trio if args.mode == "trio" else serve_threads)(broker)
    except KeyboardInterrupt:
        pass
    finally:
        broker.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
