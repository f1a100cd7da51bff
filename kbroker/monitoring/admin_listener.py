"""The admin HTTP listener: Prometheus metrics, health checks and the web console, apart from the Kafka listeners.

Off by default; `--override admin.listener=http://127.0.0.1:9404` turns it on. It serves

    /metrics         Prometheus' text format (kbroker/monitoring/collector.py, plus process CPU and memory)
    /health/live     200 while the broker process runs its event loop
    /health/ready    200 once the broker serves clients, is registered in its cluster and every partition it
                     follows has it in the ISR (caught up); 503 with the reasons otherwise
    /                the web console (kbroker/monitoring/console/, static files) and its JSON API under /api/

The server is hypercorn running a small ASGI app under trio (the broker's own event loop): it is a maintained HTTP
server that runs on trio, and the app needs no framework. Its socket is bound when the broker opens, before recovery,
so a taken port is said at once, like the Kafka listener's. It is plain HTTP with no authentication: bind it to an
address only operators reach (docs/operations.md).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.config import Sockets as Sockets
from hypercorn.trio.run import worker_serve
from hypercorn.utils import wrap_app
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, ProcessCollector, generate_latest

from kbroker.common import ConfigError, StartupError
from kbroker.monitoring.collector import BrokerCollector, BrokerState
from kbroker.monitoring.console_api import ApiError, ConsoleApi

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/console.js": ("console.js", "text/javascript; charset=utf-8"),
    "/console.css": ("console.css", "text/css; charset=utf-8"),
}
MAX_BODY = 1 << 20


def parse_admin_listener(text: str) -> tuple[str, int]:
    """http://HOST:PORT (HOST may be [v6]) as (host, port)."""
    parts = urlsplit(text)
    if parts.scheme != "http" or parts.hostname is None or parts.port is None:
        raise ConfigError(f"admin.listener {text!r} is not http://HOST:PORT")
    if parts.path not in ("", "/"):
        raise ConfigError(f"admin.listener {text!r}: no path, the console is served at /")
    return parts.hostname, parts.port


def bind_admin_listener(text: str) -> Sockets:
    host, port = parse_admin_listener(text)
    config = HypercornConfig()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    try:
        return config.create_sockets()
    except OSError as exc:
        raise StartupError(f"admin listener {text}: {exc.strerror or exc}") from None


def admin_port(sockets: Sockets) -> int:
    port: int = sockets.insecure_sockets[0].getsockname()[1]
    return port


def close_admin_listener(sockets: Sockets) -> None:
    for sock in sockets.insecure_sockets:
        sock.close()


@dataclass
class Readiness:
    """Set by the composition root: whether the Kafka listener accepts connections yet."""

    serving: bool = False
    reasons: list[str] = field(default_factory=list)


def ready_reasons(state: BrokerState, readiness: Readiness) -> list[str]:
    """Why this broker is not ready (nothing: it is). Ready = serving, a registered member of its cluster, and in
    the ISR of every partition it follows whose leader is live (caught up)."""
    if not readiness.serving:
        return ["the Kafka listener is not accepting connections yet"]
    image = state.metadata.image()
    if state.node_id not in image.brokers or image.broker_epoch < 0:
        return [f"broker {state.node_id} is not registered in the cluster"]
    behind = []
    for tp, partition in state.replicas.partitions.items():
        current = image.partition(tp.topic, tp.partition)
        if partition.is_leader or current is None or current.leader not in image.brokers:
            continue
        if state.node_id not in current.isr:
            behind.append(str(tp))
    if behind:
        shown = ", ".join(sorted(behind)[:10]) + (f" and {len(behind) - 10} more" if len(behind) > 10 else "")
        return [f"not in the ISR of {len(behind)} partitions it follows: {shown}"]
    return []


class AdminApp:
    """The ASGI application."""

    def __init__(self, state: BrokerState, readiness: Readiness, console: ConsoleApi) -> None:
        self.state = state
        self.readiness = readiness
        self.console = console
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(BrokerCollector(state))
        ProcessCollector(registry=self.registry)
        self._static = {
            path: ((resources.files("kbroker.monitoring") / "console" / name).read_bytes(), kind)
            for path, (name, kind) in STATIC.items()
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        method: str = scope["method"]
        path: str = scope["path"]
        try:
            if path == "/metrics" and method in ("GET", "HEAD"):
                # On the trio thread: the collector reads the broker's state while nothing changes it.
                await _respond(send, 200, generate_latest(self.registry), CONTENT_TYPE_LATEST)
            elif path == "/health/live":
                await _json(send, 200, {"status": "live"})
            elif path == "/health/ready":
                reasons = ready_reasons(self.state, self.readiness)
                await _json(
                    send,
                    503 if reasons else 200,
                    {"status": "not ready" if reasons else "ready", "reasons": reasons},
                )
            elif path in self._static and method in ("GET", "HEAD"):
                body, kind = self._static[path]
                await _respond(send, 200, body, kind, cache=False)
            elif path.startswith("/api/"):
                if method not in ("GET", "HEAD"):
                    _check_same_origin(scope)
                body = await _read_body(receive)
                query = {k: v[-1] for k, v in parse_qs(scope.get("query_string", b"").decode()).items()}
                status, result = await self.console.handle(method, path, query, body)
                await _json(send, status, result)
            else:
                await _json(send, 404, {"error": f"no such page: {path}"})
        except ApiError as exc:
            await _json(send, exc.status, {"error": str(exc)})
        except Exception:
            log.exception("admin request %s %s failed", method, path)
            await _json(send, 500, {"error": "internal error (see the broker's log)"})


def _check_same_origin(scope: Scope) -> None:
    """A change (create, delete, produce) must come from the console itself: a JSON body (which a page of another
    site cannot send without a CORS preflight, never granted here) and, when the browser names it, the same origin."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise ApiError(415, "changes need a JSON body (content-type: application/json)")
    origin = headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != headers.get("host"):
        raise ApiError(403, f"a change from another site ({origin}) is refused")


async def _read_body(receive: Receive) -> bytes:
    body = bytearray()
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > MAX_BODY:
            raise ApiError(413, "request body too large")
        if not message.get("more_body"):
            return bytes(body)


async def _respond(send: Send, status: int, body: bytes, kind: str, *, cache: bool = False) -> None:
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode())]
    if not cache:
        headers.append((b"cache-control", b"no-store"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _json(send: Send, status: int, obj: object) -> None:
    await _respond(send, status, json.dumps(obj).encode(), "application/json")


async def serve_admin(
    sockets: Sockets, app: AdminApp, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve until cancelled; started once the socket listens."""
    config = HypercornConfig()
    config.errorlog = logging.getLogger("kbroker.admin.http")
    config.accesslog = None
    config.graceful_timeout = 1.0
    for sock in sockets.insecure_sockets:
        try:
            sock.listen(config.backlog)
        except OSError as exc:
            # Bound with SO_REUSEADDR, the port can be bound by another process too until one listens (as the
            # broker's listeners: kbroker.server.serve).
            host, port = sock.getsockname()[:2]
            where = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
            raise StartupError(f"admin listener {where}: {exc.strerror or exc}") from None
    async with trio.open_nursery() as nursery:
        await nursery.start(
            # hypercorn types an ASGI app with its own TypedDicts; ours reads the same messages as plain mappings
            partial(
                worker_serve,
                wrap_app(app, config.wsgi_max_body_size, "asgi"),  # type: ignore[arg-type]
                config,
                sockets=sockets,
            )
        )
        host, port = sockets.insecure_sockets[0].getsockname()[:2]
        log.info("admin listener (metrics, health, console) on http://%s:%d", host, port)
        task_status.started()
