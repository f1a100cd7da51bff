"""The trio edge: bind every listener, accept connections within the connection limits, hand each to the
connection loop with the dispatcher."""

from __future__ import annotations

import errno
import logging
from dataclasses import dataclass

import trio

from kbroker.common import StartupError
from kbroker.config import Listener
from kbroker.connection import IdleExpiry, ListenerRuntime, serve_connection
from kbroker.dispatch import RequestDispatcher
from kbroker.security.connections import ConnectionQuotas

log = logging.getLogger(__name__)

LISTEN_BACKLOG = 1024


@dataclass
class BoundListener:
    listener: Listener
    sockets: list[trio.socket.SocketType]

    @property
    def port(self) -> int:
        port: int = self.sockets[0].getsockname()[1]
        return port

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


def _where(listener: Listener) -> str:
    return f"{listener.name}://{listener.host or '0.0.0.0'}:{listener.port}"


def _taken(listener: Listener, exc: OSError) -> StartupError:
    if exc.errno == errno.EADDRINUSE:
        return StartupError(f"{_where(listener)} is already in use")
    return StartupError(f"cannot listen on {_where(listener)}: {exc.strerror or exc}")


async def open_listener(listener: Listener) -> BoundListener:
    """Bind the listener's address before anything else starts, so that a taken port is said at once and in one
    line. The sockets listen only when `serve` starts: until the broker is ready, connections are refused rather
    than left waiting in a backlog nobody reads."""
    host = listener.host or None
    sockets: list[trio.socket.SocketType] = []
    port = listener.port
    try:
        addresses = await trio.socket.getaddrinfo(
            host, port, type=trio.socket.SOCK_STREAM, flags=trio.socket.AI_PASSIVE
        )
        for family, kind, proto, _, address in addresses:
            sock = trio.socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_REUSEADDR, 1)
            if family == trio.socket.AF_INET6:
                sock.setsockopt(trio.socket.IPPROTO_IPV6, trio.socket.IPV6_V6ONLY, 1)
            # Port 0 picks a port once: every address of the listener gets the same one.
            await sock.bind((address[0], port, *address[2:]))
            port = sock.getsockname()[1]
    except OSError as exc:
        for sock in sockets:
            sock.close()
        raise _taken(listener, exc) from None
    return BoundListener(listener, sockets)


async def serve(
    bound: list[tuple[BoundListener, ListenerRuntime]],
    dispatcher: RequestDispatcher,
    quotas: ConnectionQuotas,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Listen on every bound listener and accept connections until cancelled. serve_connection catches everything
    a connection can raise, so one bad peer never stops a listener."""
    for listener, _ in bound:
        for sock in listener.sockets:
            try:
                sock.listen(LISTEN_BACKLOG)
            except OSError as exc:
                # SO_REUSEADDR (for a restart beside the last run's TIME_WAIT connections) lets another process
                # bind the same port between our bind and this listen, e.g. a second broker started at the same
                # time on the same port: the first to listen has it, the other says so and stops.
                raise _taken(listener.listener, exc) from None
    async with trio.open_nursery() as nursery:
        for listener, runtime in bound:
            # connections.max.idle.ms, for this listener's connections
            idle = IdleExpiry(runtime.idle_timeout_s)
            nursery.start_soon(idle.run)
            for sock in listener.sockets:
                nursery.start_soon(
                    _accept_loop, trio.SocketListener(sock), runtime, idle, dispatcher, quotas, nursery
                )
            host, port = listener.sockets[0].getsockname()[:2]
            log.info("listening on %s://%s:%d", listener.listener.name, host, port)
        task_status.started()


async def _accept_loop(
    listener: trio.SocketListener,
    runtime: ListenerRuntime,
    idle: IdleExpiry,
    dispatcher: RequestDispatcher,
    quotas: ConnectionQuotas,
    nursery: trio.Nursery,
) -> None:
    name = runtime.listener.name
    while True:
        # At max.connections the listener stops accepting (new clients wait in the backlog), as Kafka's acceptor.
        await quotas.wait_for_slot(name)
        try:
            stream = await listener.accept()
        except OSError as exc:
            # EMFILE and friends: say it, back off, go on (trio's serve_listeners does the same).
            log.error("accept on listener %s failed: %s", name, exc)
            await trio.sleep(0.1)
            continue
        try:
            address = stream.socket.getpeername()
            ip, peer = str(address[0]), f"{address[0]}:{address[1]}"
        except OSError:
            await stream.aclose()
            continue
        if not quotas.try_open(name, ip):
            log.info("closing a connection from %s: max.connections.per.ip reached", ip)
            await stream.aclose()
            continue
        nursery.start_soon(_serve_counted, dispatcher, runtime, idle, stream, peer, quotas, ip)


async def _serve_counted(
    dispatcher: RequestDispatcher,
    runtime: ListenerRuntime,
    idle: IdleExpiry,
    stream: trio.SocketStream,
    peer: str,
    quotas: ConnectionQuotas,
    ip: str,
) -> None:
    try:
        await serve_connection(dispatcher, runtime, idle, stream, peer)
    except Exception:
        # A bug in one connection's handling must not stop the listener (nor the broker): drop that one, say why.
        log.exception("closing the connection from %s after an internal error", peer)
    finally:
        quotas.close(runtime.listener.name, ip)
