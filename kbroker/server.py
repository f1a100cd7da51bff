"""The trio edge: bind the listener, accept connections, hand each to the connection loop with the dispatcher."""

from __future__ import annotations

import errno
import logging
from functools import partial

import trio

from kbroker.common import StartupError
from kbroker.config import Listener
from kbroker.connection import serve_connection
from kbroker.dispatch import RequestDispatcher

log = logging.getLogger(__name__)

LISTEN_BACKLOG = 1024


async def open_listener(listener: Listener) -> list[trio.socket.SocketType]:
    """Bind the listener's address before anything else starts, so that a taken port is said at once and in one
    line. The sockets listen only when `serve` starts: until the broker is ready, connections are refused rather
    than left waiting in a backlog nobody reads."""
    where = f"{listener.host or '0.0.0.0'}:{listener.port}"
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
        if exc.errno == errno.EADDRINUSE:
            raise StartupError(f"{where} is already in use") from None
        raise StartupError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    return sockets


async def serve(
    sockets: list[trio.socket.SocketType],
    dispatcher: RequestDispatcher,
    max_request_bytes: int,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Listen on the bound sockets and accept connections until cancelled. serve_connection catches everything a
    connection can raise, so one bad peer never stops the listener."""
    for sock in sockets:
        sock.listen(LISTEN_BACKLOG)
    listeners = [trio.SocketListener(sock) for sock in sockets]
    host, port = sockets[0].getsockname()[:2]
    log.info("listening on %s:%d", host, port)
    task_status.started()
    await trio.serve_listeners(partial(serve_connection, dispatcher, max_request_bytes), listeners)
