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

import trio

from kbroker.dispatch import Outgoing, RequestDispatcher
from kbroker.handlers.registry import CloseConnection
from protocol.errors import ProtocolError
from protocol.framing import NEED_DATA, FrameDecoder

log = logging.getLogger(__name__)

_connection_ids = itertools.count(1)
RECEIVE_SIZE = 256 * 1024
MAX_PENDING_RESPONSES = 64


async def serve_connection(
    dispatcher: RequestDispatcher, max_request_bytes: int, stream: trio.SocketStream
) -> None:
    connection_id = next(_connection_ids)
    try:
        peer_addr = stream.socket.getpeername()
        peer = f"{peer_addr[0]}:{peer_addr[1]}"
    except OSError:
        peer = "?"
    try:
        async with trio.open_nursery() as nursery:
            send, receive = trio.open_memory_channel[Outgoing](MAX_PENDING_RESPONSES)
            nursery.start_soon(_write_responses, stream, receive, nursery.cancel_scope, peer, connection_id)
            async with send:
                decoder = FrameDecoder(max_request_bytes)
                if not await _read_requests(dispatcher, decoder, stream, send, peer, connection_id):
                    # the peer misbehaved: close now, without the responses still pending (as Kafka does)
                    nursery.cancel_scope.cancel()
    finally:
        with trio.move_on_after(1) as scope:
            scope.shield = True
            await stream.aclose()


async def _read_requests(
    dispatcher: RequestDispatcher,
    decoder: FrameDecoder,
    stream: trio.SocketStream,
    send: trio.MemorySendChannel[Outgoing],
    peer: str,
    connection_id: int,
) -> bool:
    """Read and handle requests until the peer closes (True) or must be disconnected (False)."""
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
            response = await dispatcher.handle(frame, peer, connection_id)
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
