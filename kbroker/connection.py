"""One client connection: TLS if its listener has it, read frames, handle requests in order, answer in order.

Requests are handled one at a time, in the order they arrive, as Kafka does. The one exception to "finish before
the next" is the wait of an acks=-1 produce for fsync and replication: its batches are appended at once, and the
handler returns a `Deferred`; the connection goes on with the next requests while a writer task sends the responses
strictly in request order (awaiting each deferred one in turn). So many acks=-1 batches pipelined on one connection
share one fsync and one replication round instead of paying for one each. At most `MAX_PENDING_RESPONSES` responses
wait at a time; beyond that the reader stops reading (back-pressure).

Security (kbroker/security/): the connection owns its `ConnectionSession`. On a TLS listener the handshake comes
first (a client certificate gives the principal on SSL listeners); on a SASL listener frames stay capped at
`sasl.server.max.receive.size` until the login succeeds. A handler may ask to close after its response (a failed
login); a client over its quota is not read from for its throttle time (KIP-219); a connection silent for
`connections.max.idle.ms` is closed. Anything wrong with what a peer sends closes only that peer's connection.
"""

from __future__ import annotations

import itertools
import logging
import os
import ssl
from dataclasses import dataclass

import trio

from kbroker.config import Listener
from kbroker.dispatch import Outgoing, RequestDispatcher, SplicedFrame
from kbroker.handlers.registry import CloseConnection
from kbroker.log.segment import FileRecords
from kbroker.security.session import ConnectionSession
from kbroker.security.tls import ReloadingContext, principal_of_certificate
from protocol.errors import ProtocolError
from protocol.framing import NEED_DATA, FrameDecoder

log = logging.getLogger(__name__)

_connection_ids = itertools.count(1)
RECEIVE_SIZE = 256 * 1024
MAX_PENDING_RESPONSES = 64


@dataclass(frozen=True)
class ListenerRuntime:
    """What a connection of one listener needs to know about it."""

    listener: Listener
    max_request_bytes: int
    tls: ReloadingContext | None = None
    sasl_max_receive_size: int = 524288
    idle_timeout_s: float = 600.0


async def serve_connection(
    dispatcher: RequestDispatcher, runtime: ListenerRuntime, raw: trio.SocketStream, peer: str
) -> None:
    connection_id = next(_connection_ids)
    session = ConnectionSession.for_listener(runtime.listener, connection_id, peer)
    stream: trio.abc.Stream = raw
    stats = dispatcher.stats
    stats.active_connections += 1
    stats.connections_created += 1
    try:
        if runtime.tls is not None:
            tls_stream = await _tls_handshake(runtime.tls, raw, session)
            if tls_stream is None:
                return
            stream = tls_stream
        async with trio.open_nursery() as nursery:
            send, receive = trio.open_memory_channel[Outgoing](MAX_PENDING_RESPONSES)
            nursery.start_soon(_write_responses, stream, receive, nursery.cancel_scope, peer, connection_id)
            async with send:
                if not await _read_requests(dispatcher, runtime, session, stream, send):
                    # the peer misbehaved: close now, without the responses still pending (as Kafka does)
                    nursery.cancel_scope.cancel()
    finally:
        stats.active_connections -= 1
        with trio.move_on_after(1) as scope:
            scope.shield = True
            await stream.aclose()


async def _tls_handshake(
    tls: ReloadingContext, raw: trio.SocketStream, session: ConnectionSession
) -> trio.SSLStream[trio.SocketStream] | None:
    """The TLS handshake, bounded in time; the principal of the client's certificate on an SSL listener. None (and
    a log line) if the client fails it: an untrusted or expired certificate, none where one is required, a client
    that does not speak TLS."""
    stream = trio.SSLStream(raw, tls.context(), server_side=True)
    try:
        with trio.fail_after(HANDSHAKE_TIMEOUT_S):
            await stream.do_handshake()
    except (trio.BrokenResourceError, trio.TooSlowError, ssl.SSLError, OSError) as exc:
        cause = exc.__cause__ or exc
        log.info(
            "TLS handshake with %s on listener %s failed: %s", session.peer, session.listener.name, cause
        )
        return None
    if not session.needs_sasl:
        try:
            session.principal = principal_of_certificate(stream.getpeercert(binary_form=True), tls.tls)
        except ValueError as exc:
            log.info("refusing %s on listener %s: %s", session.peer, session.listener.name, exc)
            return None
    return stream


HANDSHAKE_TIMEOUT_S = 10.0


async def _read_requests(
    dispatcher: RequestDispatcher,
    runtime: ListenerRuntime,
    session: ConnectionSession,
    stream: trio.abc.Stream,
    send: trio.MemorySendChannel[Outgoing],
) -> bool:
    """Read and handle requests until the peer closes (True) or must be disconnected (False)."""
    peer, connection_id = session.peer, session.connection_id
    decoder = FrameDecoder(runtime.max_request_bytes)
    # A plain TCP connection receives straight into the decoder's buffers (a large request lands in its own buffer,
    # which the produce path then writes to the log without copying it again); TLS hands over decrypted bytes.
    sock = stream.socket if isinstance(stream, trio.SocketStream) else None
    try:
        while True:
            decoder.max_frame_size = (
                runtime.max_request_bytes if session.authenticated else runtime.sasl_max_receive_size
            )
            frame = decoder.next_frame()
            if frame is NEED_DATA:
                received = 0
                with trio.move_on_after(runtime.idle_timeout_s) as idle:
                    if sock is not None:
                        try:
                            received = await sock.recv_into(decoder.receive_buffer())
                        except OSError as exc:  # what trio's stream would call a broken resource
                            raise trio.BrokenResourceError from exc
                        decoder.received(received)
                    else:
                        data = await stream.receive_some(RECEIVE_SIZE)
                        decoder.feed(data)
                        received = len(data)
                if idle.cancelled_caught:
                    log.info("closing connection %d from %s: idle for %.0f s", connection_id, peer,
                             runtime.idle_timeout_s)  # fmt: skip
                    return True
                if not received:
                    return True
                continue
            assert isinstance(frame, bytearray)
            response: Outgoing | None
            if session.raw_sasl:
                response = await dispatcher.handle_raw_sasl(frame, session)
            else:
                response = await dispatcher.handle(frame, session)
            if response is not None:
                await send.send(response)
            if session.close_reason is not None:
                log.info("closing connection %d from %s: %s", connection_id, peer, session.close_reason)
                return True  # after the response is sent
            if session.mute_ms:
                await trio.sleep(session.mute_ms / 1000)
    except CloseConnection as exc:
        log.info("closing connection %d from %s: %s", connection_id, peer, exc)
    except ProtocolError as exc:
        log.info("closing connection %d from %s: malformed request: %s", connection_id, peer, exc)
    except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError, ssl.SSLError):
        pass
    except Exception:
        # A handler bug must not take the server down: drop this connection only, and say why.
        log.exception("closing connection %d from %s after an internal error", connection_id, peer)
    return False


async def _write_responses(
    stream: trio.abc.Stream,
    receive: trio.MemoryReceiveChannel[Outgoing],
    scope: trio.CancelScope,
    peer: str,
    connection_id: int,
) -> None:
    # On plain TCP a fetch's records go from the segment files to the socket with sendfile (no copy through
    # Python); TLS must encrypt them, so it sends their bytes.
    sock = stream.socket if isinstance(stream, trio.SocketStream) else None
    try:
        async with receive:
            async for outgoing in receive:
                data = (
                    outgoing if isinstance(outgoing, bytearray | bytes | SplicedFrame) else await outgoing()
                )
                if not isinstance(data, SplicedFrame):
                    await stream.send_all(data)
                    continue
                try:
                    if sock is not None:
                        await _send_spliced(sock, data)
                    else:
                        await stream.send_all(b"".join(_materialized(data)))
                finally:
                    data.close()
    except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError, ssl.SSLError):
        scope.cancel()
    except Exception:
        log.exception("closing connection %d from %s after an internal error", connection_id, peer)
        scope.cancel()


def _materialized(frame: SplicedFrame) -> list[bytes | memoryview]:
    return [part if isinstance(part, memoryview) else part.materialize() for part in frame.parts]


async def _send_spliced(sock: trio.socket.SocketType, frame: SplicedFrame) -> None:
    """Send a response's encoded parts with send and its file ranges with sendfile. (Not with MSG_MORE on the parts
    before a file range: tried, responses were held back by the kernel's cork timer and consuming ran five times
    slower.)"""
    for part in frame.parts:
        if isinstance(part, memoryview):
            while part:
                sent = await sock.send(part)
                part = part[sent:]
            continue
        assert isinstance(part, FileRecords)
        position, remaining = part.position, part.size
        while remaining:
            try:
                sent = os.sendfile(sock.fileno(), part.fd, position, remaining)
            except BlockingIOError:
                await trio.lowlevel.wait_writable(sock)
                continue
            except OSError as exc:  # as a failed send: the peer is gone
                raise trio.BrokenResourceError from exc
            if sent == 0:
                # The file ends before the range does (truncated since the read: a leader that became a follower).
                # The response's size is already on the wire, so the connection cannot go on; the client retries.
                raise trio.BrokenResourceError(
                    f"segment range truncated before it was sent ({remaining} bytes short)"
                )
            position += sent
            remaining -= sent
        await trio.lowlevel.checkpoint()
