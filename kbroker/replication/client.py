"""A minimal Kafka client over our own `protocol/` codec: what a follower needs to talk to its leader, and what the
`kbroker topics` command needs to ask for metadata.

Requests are sent one at a time on a connection and the response is read before the next is sent, so matching
responses to requests needs no bookkeeping beyond checking the correlation id. ApiVersions is not negotiated: both
ends are kbroker, and the versions used here (`FETCH_VERSION`, `OFFSET_FOR_LEADER_EPOCH_VERSION`) are inside the
ranges every kbroker registers.

Two transports share the framing: `BrokerClient` (trio, for the replica fetchers) and `SyncBrokerClient` (a
blocking socket, for command-line tools and tests).
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from protocol.codec import decode_from, encode_into
from protocol.errors import ProtocolError
from protocol.framing import NEED_DATA, FrameDecoder
from protocol.headers import (
    RequestHeader,
    encode_request_header,
    read_response_header,
    request_header_version,
    response_header_version,
)
from protocol.messages import RESPONSES, SCHEMAS
from protocol.primitives import Reader, Writer

FETCH_VERSION = 12
"""The last Fetch version that names topics (13+ use topic ids) and still carries replica_id at the top level."""
OFFSET_FOR_LEADER_EPOCH_VERSION = 4
METADATA_VERSION = 12

_RECEIVE_SIZE = 256 * 1024
# Responses can be as large as a fetch of many partitions; this bounds what a broken peer makes us buffer.
_MAX_RESPONSE_SIZE = 256 * 1024 * 1024


class BrokerClientError(Exception):
    """The connection failed or the peer answered something we cannot read; reconnect before trying again."""


def encode_request(msg: object, version: int, correlation_id: int, client_id: str) -> bytes:
    """One size-prefixed request frame: header (v1 or v2, as the message's version requires) and body."""
    schema = SCHEMAS[type(msg)]
    w = Writer()
    w.int32(0)  # size, patched below
    header = RequestHeader(
        request_api_key=schema.api_key,
        request_api_version=version,
        correlation_id=correlation_id,
        client_id=client_id,
    )
    encode_request_header(w, header, request_header_version(schema, version))
    encode_into(w, msg, version)
    w.out[0:4] = (len(w.out) - 4).to_bytes(4, "big")
    return bytes(w.out)


def decode_response(frame: bytearray, api_key: int, version: int, correlation_id: int) -> Any:
    """The response body of `frame` (a frame without its size prefix) to the request with `correlation_id`."""
    cls = RESPONSES[api_key]
    schema = SCHEMAS[cls]
    r = Reader(frame)
    got = read_response_header(r, response_header_version(schema, version))
    if got != correlation_id:
        raise BrokerClientError(f"response to correlation id {got}, expected {correlation_id}")
    return decode_from(cls, version, r)


class BrokerClient:
    """One trio connection to a broker. `async with await BrokerClient.connect(host, port) as client: ...`

    The stream may be TLS (trio.SSLStream); a SASL login is a few requests on it before any other (see
    kbroker/security/client.py, which makes the connections of an inter-broker listener that needs them)."""

    def __init__(self, stream: trio.abc.Stream, client_id: str) -> None:
        self._stream = stream
        self._client_id = client_id
        self._decoder = FrameDecoder(_MAX_RESPONSE_SIZE)
        self._correlation_id = 0

    @classmethod
    async def connect(
        cls, host: str, port: int, *, client_id: str = "kbroker", timeout_s: float = 5.0
    ) -> BrokerClient:
        try:
            with trio.fail_after(timeout_s):
                stream = await trio.open_tcp_stream(host, port)
        except (OSError, trio.TooSlowError) as exc:
            raise BrokerClientError(f"cannot connect to {host}:{port}: {exc!r}") from exc
        return cls(stream, client_id)

    async def request(self, msg: object, version: int, *, timeout_s: float) -> Any:
        """Send `msg` at `version` and return the decoded response; BrokerClientError on any failure (the
        connection is then unusable: a late response would be read as the answer to the next request)."""
        self._correlation_id += 1
        correlation_id = self._correlation_id
        api_key = SCHEMAS[type(msg)].api_key
        try:
            with trio.fail_after(timeout_s):
                await self._stream.send_all(encode_request(msg, version, correlation_id, self._client_id))
                while True:
                    frame = self._decoder.next_frame()
                    if frame is not NEED_DATA:
                        break
                    await self._receive()
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError) as exc:
            raise BrokerClientError(f"request {api_key} v{version} failed: {exc!r}") from exc
        except ProtocolError as exc:
            raise BrokerClientError(f"unreadable response frame: {exc}") from exc
        assert isinstance(frame, bytearray)
        try:
            return decode_response(frame, api_key, version, correlation_id)
        except ProtocolError as exc:
            raise BrokerClientError(f"unreadable response to API {api_key} v{version}: {exc}") from exc

    async def _receive(self) -> None:
        """Receive more of the response. On a plain TCP stream the bytes go straight into the decoder's buffer (a
        follower's fetch response of megabytes is neither copied out of a bytes object nor allocated per chunk);
        other streams (TLS) hand over what they received."""
        stream = self._stream
        if isinstance(stream, trio.SocketStream):
            received = await stream.socket.recv_into(self._decoder.receive_buffer())
            if not received:
                raise BrokerClientError("the broker closed the connection")
            self._decoder.received(received)
            return
        data = await stream.receive_some(_RECEIVE_SIZE)
        if not data:
            raise BrokerClientError("the broker closed the connection")
        self._decoder.feed(data)

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            await self._stream.aclose()

    async def __aenter__(self) -> BrokerClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


Connector = Callable[[str, int, str], Awaitable[BrokerClient]]
"""(host, port, client_id) -> a connected (and, where the listener wants it, authenticated) client."""


async def plaintext_connector(host: str, port: int, client_id: str) -> BrokerClient:
    return await BrokerClient.connect(host, port, client_id=client_id)


class BrokerClientPool:
    """Connections to other brokers for requests that may run concurrently (a coordinator's markers, a leader's
    transaction verifications): each request takes an idle connection to its broker or opens one, and gives it back
    afterwards; a failed one is closed."""

    def __init__(self, client_id: str = "kbroker", connect: Connector = plaintext_connector) -> None:
        self._client_id = client_id
        self._connect = connect
        self._idle: dict[tuple[str, int], list[BrokerClient]] = {}

    async def request(self, host: str, port: int, msg: object, version: int, *, timeout_s: float) -> Any:
        """BrokerClientError on any failure."""
        idle = self._idle.setdefault((host, port), [])
        client = idle.pop() if idle else await self._connect(host, port, self._client_id)
        try:
            response = await client.request(msg, version, timeout_s=timeout_s)
        except BaseException:
            await client.aclose()
            raise
        idle.append(client)
        return response

    async def aclose(self) -> None:
        for clients in self._idle.values():
            for client in clients:
                await client.aclose()
        self._idle.clear()


class SyncBrokerClient:
    """The same over a blocking socket: `with SyncBrokerClient("127.0.0.1", 9092) as client: client.request(...)`."""

    def __init__(
        self, host: str, port: int, *, client_id: str = "kbroker-cli", timeout: float = 10.0
    ) -> None:
        self._client_id = client_id
        self._timeout = timeout
        try:
            self._sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise BrokerClientError(f"cannot connect to {host}:{port}: {exc}") from exc
        self._decoder = FrameDecoder(_MAX_RESPONSE_SIZE)
        self._correlation_id = 0

    def request(self, msg: object, version: int) -> Any:
        self._correlation_id += 1
        correlation_id = self._correlation_id
        api_key = SCHEMAS[type(msg)].api_key
        try:
            self._sock.sendall(encode_request(msg, version, correlation_id, self._client_id))
            while True:
                frame = self._decoder.next_frame()
                if frame is not NEED_DATA:
                    break
                data = self._sock.recv(_RECEIVE_SIZE)
                if not data:
                    raise BrokerClientError("the broker closed the connection")
                self._decoder.feed(data)
        except OSError as exc:
            raise BrokerClientError(f"request {api_key} v{version} failed: {exc}") from exc
        except ProtocolError as exc:
            raise BrokerClientError(f"unreadable response frame: {exc}") from exc
        assert isinstance(frame, bytearray)
        try:
            return decode_response(frame, api_key, version, correlation_id)
        except ProtocolError as exc:
            raise BrokerClientError(f"unreadable response to API {api_key} v{version}: {exc}") from exc

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> SyncBrokerClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def parse_host_port(text: str, default_port: int = 9092) -> tuple[str, int]:
    """HOST:PORT (or [v6]:PORT, or HOST alone) as the tools take a bootstrap server."""
    host, sep, port = text.strip().rpartition(":")
    if not sep:
        return text.strip(), default_port
    if not port.isdigit():
        raise ValueError(f"bad port in {text!r}")
    return host.strip("[]"), int(port)
