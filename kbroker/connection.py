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
login); a client over its quota is not read from for its throttle time (KIP-219); a connection that has waited for
its peer for `connections.max.idle.ms` is closed (`IdleExpiry`). Anything wrong with what a peer sends closes only
that peer's connection.
"""

from __future__ import annotations

import collections
import itertools
import logging
import math
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


class IdleExpiry:
    """`connections.max.idle.ms` for one listener's connections, as Kafka's idle expiry: a connection that has been
    waiting for its peer that long is closed. A connection only notes when each wait for its peer began
    (`PeerWait.since`); one task (`run`) looks at them all every tenth of the timeout and cancels those idle too long,
    so a connection is closed between 1 and 1.1 times the timeout after its peer went quiet.

    Not a deadline on each wait: setting a cancel scope's deadline before every wait for the peer and clearing it
    after cost ~10 µs of trio's deadline bookkeeping per wait (ping-pong produce, one record per request: 130-145 µs
    of broker CPU per request with it, 120 without), and a broker whose clients wait for each answer waits for the
    peer once per request."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.interval_s = min(max(timeout_s / 10, 0.05), 60.0)
        self._waits: set[PeerWait] = set()

    def watch(self, scope: trio.CancelScope) -> PeerWait:
        wait = PeerWait(scope)
        self._waits.add(wait)
        return wait

    def forget(self, wait: PeerWait) -> None:
        self._waits.discard(wait)

    async def run(self) -> None:
        if math.isinf(self.timeout_s):
            return
        while True:
            await trio.sleep(self.interval_s)
            self.expire(trio.current_time())

    def expire(self, now: float) -> None:
        """Cancel the waits that began `timeout_s` or more before `now`."""
        oldest = now - self.timeout_s
        for wait in self._waits:
            if wait.since <= oldest:
                wait.scope.cancel()


class PeerWait:
    """One connection's wait for its peer: when it began (trio's clock), or infinity while the connection is busy
    with a request (an idle timeout never interrupts one)."""

    __slots__ = ("scope", "since")

    def __init__(self, scope: trio.CancelScope) -> None:
        self.scope = scope
        self.since = math.inf


async def serve_connection(
    dispatcher: RequestDispatcher,
    runtime: ListenerRuntime,
    idle: IdleExpiry,
    raw: trio.SocketStream,
    peer: str,
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
            responses = _Responses(stream, nursery.cancel_scope, peer, connection_id)
            nursery.start_soon(responses.run)
            try:
                if not await _read_requests(dispatcher, runtime, idle, session, stream, responses):
                    # the peer misbehaved: close now, without the responses still pending (as Kafka does)
                    nursery.cancel_scope.cancel()
            finally:
                responses.close()
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
    idle_expiry: IdleExpiry,
    session: ConnectionSession,
    stream: trio.abc.Stream,
    responses: _Responses,
) -> bool:
    """Read and handle requests until the peer closes (True) or must be disconnected (False).

    On plain TCP the socket is read with `os.readv` straight into the frame decoder's buffer (a large request lands
    in its own buffer, which the produce path then writes to the log without copying it again), and trio is asked
    to wait only when there is nothing to read: trio's socket methods pass through its scheduler at every call,
    which cost several times the system call itself for each request. The loop still passes through the scheduler
    at least once per request, so that a client that never lets its socket run dry does not keep the other
    connections waiting: a request that arrived while the loop waited for the socket has already passed through it,
    any other passes through `checkpoint` first. TLS hands over decrypted bytes.

    The idle timeout (connections.max.idle.ms) is one cancel scope for the whole loop, which `idle_expiry` cancels
    only while the loop waits for the peer (it notes when each wait began)."""
    peer, connection_id = session.peer, session.connection_id
    decoder = FrameDecoder(runtime.max_request_bytes)
    sock = stream.socket if isinstance(stream, trio.SocketStream) else None
    fd = sock.fileno() if sock is not None else -1
    idle = trio.CancelScope()
    wait = idle_expiry.watch(idle)
    yielded = False  # passed through trio's scheduler since the last request was handled
    try:
        with idle:
            while True:
                decoder.max_frame_size = (
                    runtime.max_request_bytes if session.authenticated else runtime.sasl_max_receive_size
                )
                frame = decoder.next_frame()
                if frame is NEED_DATA:
                    received = -1
                    if sock is not None:
                        try:
                            received = os.readv(fd, [decoder.receive_buffer()])
                        except BlockingIOError:
                            pass
                        except OSError as exc:  # what trio's stream would call a broken resource
                            raise trio.BrokenResourceError from exc
                        if received > 0:
                            decoder.received(received)
                            continue
                    wait.since = trio.current_time()
                    if sock is not None:
                        if received < 0:
                            await trio.lowlevel.wait_readable(sock)
                    else:
                        data = await stream.receive_some(RECEIVE_SIZE)
                        decoder.feed(data)
                        received = len(data)
                    wait.since = math.inf
                    if idle.cancel_called:
                        # Found idle as the peer's bytes came: idle all the same, and no request may be handled
                        # half before the scope cancels it at its first await.
                        break
                    yielded = True
                    if not received:
                        return True
                    continue
                assert isinstance(frame, bytearray)
                if not yielded:
                    await trio.lowlevel.checkpoint()
                yielded = False
                response: Outgoing | None
                if session.raw_sasl:
                    response = await dispatcher.handle_raw_sasl(frame, session)
                else:
                    response = await dispatcher.handle(frame, session)
                if response is not None:
                    await responses.submit(response)
                if session.close_reason is not None:
                    log.info("closing connection %d from %s: %s", connection_id, peer, session.close_reason)
                    return True  # after the response is sent
                if session.mute_ms:
                    await trio.sleep(session.mute_ms / 1000)
                    yielded = True
        # Only the idle expiry cancels this scope, and only while the loop waits for the peer.
        log.info(
            "closing connection %d from %s: idle for %.0f s", connection_id, peer, runtime.idle_timeout_s
        )
        return True
    except CloseConnection as exc:
        log.info("closing connection %d from %s: %s", connection_id, peer, exc)
    except ProtocolError as exc:
        log.info("closing connection %d from %s: malformed request: %s", connection_id, peer, exc)
    except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError, ssl.SSLError):
        pass
    except Exception:
        # A handler bug must not take the server down: drop this connection only, and say why.
        log.exception("closing connection %d from %s after an internal error", connection_id, peer)
    finally:
        idle_expiry.forget(wait)
    return False


class _Responses:
    """A connection's responses, sent strictly in request order by `run` (the connection's writer task).

    An acks=-1 produce's response waits for its fsync and replication while later requests are read and handled:
    its place in the queue is held by a coroutine function (`Outgoing`) that the writer awaits in turn. At most
    `MAX_PENDING_RESPONSES` wait; beyond that `submit` waits (back-pressure: the reader stops reading).

    On plain TCP a response that is ready at once with nothing queued before it and nothing being sent is sent by
    the reading task itself (bytes with `os.write`, what the socket does not take at once going to the queue; a
    fetch's answer with file ranges with its sendfiles): no hand-over to the writer task, which would cost two trio
    task switches per request."""

    def __init__(
        self, stream: trio.abc.Stream, scope: trio.CancelScope, peer: str, connection_id: int
    ) -> None:
        self._stream = stream
        self._sock = stream.socket if isinstance(stream, trio.SocketStream) else None
        self._fd = self._sock.fileno() if self._sock is not None else -1
        self._scope = scope
        self._peer = peer
        self._connection_id = connection_id
        self._queue: collections.deque[Outgoing] = collections.deque()
        self._sending = False
        self._closed = False
        self._more = trio.Event()
        self._room = trio.Event()
        self._room_wanted = False
        """Whether `submit` waits for room (only then does a sent response replace `_room`)."""

    async def submit(self, outgoing: Outgoing) -> None:
        if self._fd >= 0 and not self._queue and not self._sending:
            if isinstance(outgoing, SplicedFrame):
                # A fetch's answer with file ranges: sent from here too, waiting for the socket if need be (what
                # would come after it could not be sent before it anyway).
                self._sending = True
                try:
                    await self._send(outgoing)
                finally:
                    self._sending = False
                return
            if isinstance(outgoing, bytearray | bytes):
                try:
                    sent = os.write(self._fd, outgoing)
                except BlockingIOError:
                    sent = 0
                except OSError as exc:  # the peer is gone
                    raise trio.BrokenResourceError from exc
                if sent == len(outgoing):
                    return
                outgoing = bytes(memoryview(outgoing)[sent:])  # the rest goes through the queue
        while len(self._queue) >= MAX_PENDING_RESPONSES:
            self._room_wanted = True
            await self._room.wait()
        self._queue.append(outgoing)
        self._more.set()

    def close(self) -> None:
        """No more responses: the writer ends once it has sent those queued."""
        self._closed = True
        self._more.set()

    async def run(self) -> None:
        try:
            while True:
                while not self._queue:
                    if self._closed:
                        return
                    await self._more.wait()
                    self._more = trio.Event()
                outgoing = self._queue[0]
                self._sending = True
                try:
                    await self._send(outgoing)
                finally:
                    self._sending = False
                self._queue.popleft()
                if self._room_wanted:
                    self._room_wanted = False
                    self._room.set()
                    self._room = trio.Event()
        except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError, ssl.SSLError):
            self._scope.cancel()
        except Exception:
            log.exception(
                "closing connection %d from %s after an internal error", self._connection_id, self._peer
            )
            self._scope.cancel()

    async def _send(self, outgoing: Outgoing) -> None:
        # On plain TCP a fetch's records go from the segment files to the socket with sendfile (no copy through
        # Python); TLS must encrypt them, so it sends their bytes.
        if isinstance(outgoing, bytearray | bytes | SplicedFrame):
            data, waited = outgoing, False
        else:
            data, waited = await outgoing(), True
        if not isinstance(data, SplicedFrame):
            if self._sock is not None:
                await _write_fully(self._sock, memoryview(data))
                if not waited:
                    # A scheduling point per response, so a queue of answers never holds the loop. A deferred one
                    # (an acks=-1 produce) has had one while it waited: one more would cost a trio task switch
                    # per request for nothing. (If it did not wait, the queue it came from holds at most
                    # MAX_PENDING_RESPONSES, and an empty queue waits for the reader.)
                    await trio.lowlevel.checkpoint()
            else:
                await self._stream.send_all(data)
            return
        try:
            if self._sock is not None:
                await _send_spliced(self._sock, data)
            else:
                await self._stream.send_all(b"".join(_materialized(data)))
        finally:
            data.close()


def _materialized(frame: SplicedFrame) -> list[bytes | memoryview]:
    return [part if isinstance(part, memoryview) else part.materialize() for part in frame.parts]


async def _write_fully(sock: trio.socket.SocketType, data: memoryview) -> None:
    """`os.write` until all of `data` is out; trio's wait only when the socket is full (no checkpoint otherwise)."""
    while data:
        try:
            sent = os.write(sock.fileno(), data)
        except BlockingIOError:
            await trio.lowlevel.wait_writable(sock)
            continue
        except OSError as exc:  # the peer is gone
            raise trio.BrokenResourceError from exc
        data = data[sent:]


async def _send_spliced(sock: trio.socket.SocketType, frame: SplicedFrame) -> None:
    """Send a response's encoded parts with write and its file ranges with sendfile, waiting (trio) only when the
    socket is full, and passing through trio's scheduler once per response. (Not with MSG_MORE on the parts before a
    file range: tried, responses were held back by the kernel's cork timer and consuming ran five times slower.)"""
    fd = sock.fileno()
    for part in frame.parts:
        if isinstance(part, memoryview):
            await _write_fully(sock, part)
            continue
        assert isinstance(part, FileRecords)
        position, remaining = part.position, part.size
        while remaining:
            try:
                sent = os.sendfile(fd, part.fd, position, remaining)
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
