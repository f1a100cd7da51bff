"""One client connection: read frames, handle requests in order, answer in order.

Requests are handled one at a time, in the order they arrive, as Kafka does. The one exception to "finish before
the next" is the wait of an acks=-1 produce for fsync and replication: its batches are appended at once, and the
handler returns a `Deferred`; the connection goes on with the next requests while a writer task sends the responses
strictly in request order (awaiting each deferred one in turn). So many acks=-1 batches pipelined on one connection
share one fsync and one replication round instead of paying for one each. At most `MAX_PENDING_RESPONSES` responses
wait at a time; beyond that the reader stops reading (back-pressure).
Anything wrong with what a peer sends closes only that peer's connection.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import trio

from kbroker.handlers.registry import HANDLERS, CloseConnection, Deferred, RequestContext
from protocol.codec import decode_from, encode_into
from protocol.errors import ErrorCode, ProtocolError
from protocol.framing import NEED_DATA, FrameDecoder
from protocol.headers import (
    API_VERSIONS_KEY,
    encode_response_header,
    read_request_header_prefix,
    response_header_version,
    skip_tagged_fields,
)
from protocol.messages.api_versions_response import ApiVersion, ApiVersionsResponse
from protocol.primitives import Reader, Writer

if TYPE_CHECKING:
    from kbroker.broker import Broker

log = logging.getLogger(__name__)

_connection_ids = itertools.count(1)
RECEIVE_SIZE = 256 * 1024
MAX_PENDING_RESPONSES = 64

# What the reader hands the writer: an encoded response, or a coroutine function that produces one later.
Outgoing = bytearray | bytes | Callable[[], Awaitable[bytearray]]


def _unsupported_api_versions(correlation_id: int) -> bytes:
    """KIP-511: a too-new ApiVersions request gets UNSUPPORTED_VERSION in the v0 schema, listing only key 18."""
    w = Writer()
    w.int32(0)  # size, patched below
    encode_response_header(w, correlation_id, 0)
    h = HANDLERS[API_VERSIONS_KEY]
    encode_into(
        w,
        ApiVersionsResponse(
            error_code=ErrorCode.UNSUPPORTED_VERSION,
            api_keys=[
                ApiVersion(api_key=API_VERSIONS_KEY, min_version=h.min_version, max_version=h.max_version)
            ],
        ),
        0,
    )
    w.out[0:4] = (len(w.out) - 4).to_bytes(4, "big")
    return bytes(w.out)


async def handle_request(broker: Broker, frame: bytearray, peer: str, connection_id: int) -> Outgoing | None:
    """Decode, dispatch and encode one request; None means no response (acks=0 produce)."""
    r = Reader(frame)
    header = read_request_header_prefix(r)
    api_key, version = header.request_api_key, header.request_api_version
    handler = HANDLERS.get(api_key)
    if handler is None:
        raise CloseConnection(f"API key {api_key} is not supported")
    if not handler.min_version <= version <= handler.max_version:
        if api_key == API_VERSIONS_KEY:
            return _unsupported_api_versions(header.correlation_id)
        raise CloseConnection(
            f"API key {api_key} version {version} is not supported (we support {handler.min_version}-{handler.max_version})"
        )
    schema = handler.request_schema
    if version in schema.flexible:
        skip_tagged_fields(r)
    request: object = decode_from(schema.struct.cls, version, r)
    ctx = RequestContext(
        broker=broker,
        api_key=api_key,
        api_version=version,
        correlation_id=header.correlation_id,
        client_id=header.client_id,
        client_host=peer,
        connection_id=connection_id,
    )
    response = await handler.fn(ctx, request)
    if response is None:
        return None
    header_version = response_header_version(schema, version)
    if isinstance(response, Deferred):
        deferred = response

        async def encode_later() -> bytearray:
            return _encode_response(header.correlation_id, header_version, await deferred.wait(), version)

        return encode_later
    return _encode_response(header.correlation_id, header_version, response, version)


def _encode_response(correlation_id: int, header_version: int, response: object, version: int) -> bytearray:
    w = Writer()
    w.int32(0)
    encode_response_header(w, correlation_id, header_version)
    encode_into(w, response, version)
    w.out[0:4] = (len(w.out) - 4).to_bytes(4, "big")
    return w.out  # no copy: a fetch response can be megabytes


async def serve_connection(broker: Broker, stream: trio.SocketStream) -> None:
    connection_id = next(_connection_ids)
    try:
        peer_addr = stream.socket.getpeername()
        peer = f"{peer_addr[0]}:{peer_addr[1]}"
    except OSError:
        peer = "?"
    broker.connections += 1
    try:
        async with trio.open_nursery() as nursery:
            send, receive = trio.open_memory_channel[Outgoing](MAX_PENDING_RESPONSES)
            nursery.start_soon(_write_responses, stream, receive, nursery.cancel_scope, peer, connection_id)
            async with send:
                if not await _read_requests(broker, stream, send, peer, connection_id):
                    # the peer misbehaved: close now, without the responses still pending (as Kafka does)
                    nursery.cancel_scope.cancel()
    finally:
        broker.connections -= 1
        with trio.move_on_after(1) as scope:
            scope.shield = True
            await stream.aclose()


async def _read_requests(
    broker: Broker,
    stream: trio.SocketStream,
    send: trio.MemorySendChannel[Outgoing],
    peer: str,
    connection_id: int,
) -> bool:
    """Read and handle requests until the peer closes (True) or must be disconnected (False)."""
    decoder = FrameDecoder(broker.config.get_int("socket.request.max.bytes"))
    try:
        while True:
            frame = decoder.next_frame()
            if frame is NEED_DATA:
                data = await stream.receive_some(RECEIVE_SIZE)
                if not data:
                    return True
                decoder.feed(data)
                continue
            assert isinstance(frame, bytearray)
            response = await handle_request(broker, frame, peer, connection_id)
            if response is not None:
                await send.send(response)
    except CloseConnection as exc:
        log.info("closing connection %d from %s: %s", connection_id, peer, exc)
    except ProtocolError as exc:
        log.info("closing connection %d from %s: malformed request: %s", connection_id, peer, exc)
    except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
        pass
    except Exception:
        # A handler bug must not take the server down: drop this connection only, and say why.
        log.exception("closing connection %d from %s after an internal error", connection_id, peer)
    return False


async def _write_responses(
    stream: trio.SocketStream,
    receive: trio.MemoryReceiveChannel[Outgoing],
    scope: trio.CancelScope,
    peer: str,
    connection_id: int,
) -> None:
    try:
        async with receive:
            async for outgoing in receive:
                data = outgoing if isinstance(outgoing, bytearray | bytes) else await outgoing()
                await stream.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
        scope.cancel()
    except Exception:
        log.exception("closing connection %d from %s after an internal error", connection_id, peer)
        scope.cancel()
