"""The dispatcher: one request frame in, one response frame out (or none), through the registered handlers.

It decodes the request header and body with our codec, checks the API and version against the handler registry
(an API or version we do not serve closes the connection, as Kafka does; a too-new ApiVersions gets KIP-511's
UNSUPPORTED_VERSION answer), calls the handler with a `RequestContext` carrying the broker's services, and encodes
the response. No sockets here: kbroker/connection.py moves the bytes.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kbroker.handlers.registry import CloseConnection, Deferred, Handler, RequestContext
from kbroker.handlers.services import BrokerServices
from kbroker.request_log import RequestLog
from kbroker.security import quotas as q
from kbroker.security.session import ConnectionSession
from kbroker.stats import LatencyHistogram, RequestStats
from protocol.codec import decode_from, encode_into
from protocol.errors import ErrorCode
from protocol.headers import (
    encode_response_header,
    read_request_header_prefix,
    response_header_version,
    skip_tagged_fields,
)
from protocol.messages import ApiKey
from protocol.messages.api_versions_response import ApiVersion, ApiVersionsResponse
from protocol.messages.fetch_request import FetchRequest
from protocol.messages.fetch_response import FetchResponse
from protocol.primitives import Reader, Splice, Writer


@dataclass(slots=True)
class SplicedFrame:
    """An encoded response with splices in it (a Fetch answered from segment files): the encoded bytes between the
    splices, and the splices, in order; the size prefix counts them all. kbroker/connection.py sends a splice with
    sendfile on plain TCP, and its bytes (`materialize`) on TLS."""

    parts: list[memoryview | Splice]
    size: int

    def __len__(self) -> int:
        return self.size

    def close(self) -> None:
        for part in self.parts:
            if isinstance(part, Splice):
                part.close()


# What the dispatcher gives the connection: an encoded response, or a coroutine function that produces one later.
Encoded = bytearray | SplicedFrame
Outgoing = bytearray | bytes | SplicedFrame | Callable[[], Awaitable[Encoded]]


class RequestDispatcher:
    def __init__(
        self,
        services: BrokerServices,
        handlers: Mapping[ApiKey, Handler[Any, Any]],
        *,
        request_log: RequestLog | None = None,
    ) -> None:
        self.services = services
        self.handlers = dict(handlers)
        # Per-API latency (Kafka's RequestMetrics), looked up once per request by API key: no allocation per request.
        self.stats = RequestStats()
        self._latency: dict[ApiKey, LatencyHistogram] = {
            key: self.stats.histogram(api_name(h)) for key, h in self.handlers.items()
        }
        self.request_log = request_log or RequestLog()

    async def handle(self, frame: bytearray, session: ConnectionSession) -> Outgoing | None:
        """Decode, dispatch and encode one request; None means no response (acks=0 produce). Raises CloseConnection
        or ProtocolError when the connection must close."""
        r = Reader(frame)
        header = read_request_header_prefix(r)
        version = header.request_api_version
        try:
            api_key = ApiKey(header.request_api_key)
        except ValueError:
            raise CloseConnection(f"API key {header.request_api_key} does not exist") from None
        handler = self.handlers.get(api_key)
        if handler is None:
            raise CloseConnection(f"API {api_key.name} ({int(api_key)}) is not supported")
        if not handler.min_version <= version <= handler.max_version:
            if api_key == ApiKey.API_VERSIONS:
                return self._unsupported_api_versions(header.correlation_id)
            raise CloseConnection(
                f"API {api_key.name} ({int(api_key)}) version {version} is not supported "
                f"(we support {handler.min_version}-{handler.max_version})"
            )
        if session.needs_sasl:
            self._check_session(session, api_key)
        schema = handler.request_schema
        if version in schema.flexible:
            skip_tagged_fields(r)
        request: object = decode_from(schema.struct.cls, version, r)
        started = time.perf_counter()
        ctx = RequestContext(
            services=self.services,
            api_key=api_key,
            api_version=version,
            correlation_id=header.correlation_id,
            client_id=header.client_id,
            client_host=session.peer,
            connection_id=session.connection_id,
            listener=session.listener.name,
            principal=session.principal,
            session=session,
        )
        response = await handler.fn(ctx, request)
        # A long-polling fetch waits inside its handler: only the other requests' time is what Kafka counts.
        seconds = 0.0 if api_key == ApiKey.FETCH else time.perf_counter() - started
        throttle_ms = (
            self._throttle(ctx, request, len(frame), response, seconds) if self.services.quotas.any else 0
        )
        session.mute_ms = throttle_ms
        if response is None:
            self._done(api_key, ctx, 0, started)
            return None
        header_version = response_header_version(schema, version)
        if isinstance(response, Deferred):
            deferred = response

            async def encode_later() -> Encoded:
                answer = await deferred.wait()
                _set_throttle(answer, throttle_ms)
                out = _encode_response(header.correlation_id, header_version, answer, version)
                self._done(api_key, ctx, len(out), started)
                return out

            return encode_later
        _set_throttle(response, throttle_ms)
        out = _encode_response(header.correlation_id, header_version, response, version)
        self._done(api_key, ctx, len(out), started)
        return out

    def _done(self, api_key: ApiKey, ctx: RequestContext, response_bytes: int, started: float) -> None:
        """A request answered: its latency into the API's histogram, and a request log line if it is sampled."""
        seconds = time.perf_counter() - started
        self._latency[api_key].observe(seconds)
        if self.request_log.sampled():
            self.request_log.write(
                api_name(self.handlers[api_key]),
                ctx.api_version,
                ctx.correlation_id,
                ctx.client_id,
                ctx.client_host,
                ctx.connection_id,
                response_bytes,
                seconds,
            )

    async def handle_raw_sasl(self, frame: bytearray, session: ConnectionSession) -> bytes | None:
        """One bare SASL token after a SaslHandshake v0: the answer token, size-prefixed; None (and the connection
        closes) when the login fails, as Kafka answers v0 logins."""
        sasl = self.services.sasl
        assert sasl is not None
        result = await sasl.authenticate(session, bytes(frame), 0)
        if result.error_code != ErrorCode.NONE:
            session.close_reason = session.close_reason or "authentication failed"
            return None
        if session.login is None:
            session.raw_sasl = False  # the login is complete: requests from now on
        return len(result.auth_bytes).to_bytes(4, "big") + result.auth_bytes

    def _check_session(self, session: ConnectionSession, api_key: ApiKey) -> None:
        """On a SASL listener: nothing but the SASL APIs (and ApiVersions) before a login, nothing but a new login
        once the session has ended (KIP-368); Kafka closes the connection in both cases."""
        if not session.authenticated:
            if api_key not in _BEFORE_AUTHENTICATION:
                raise CloseConnection(f"{api_key.name} before SASL authentication")
        elif api_key not in _REAUTHENTICATION and session.expired(self.services.clock.now_ms()):
            raise CloseConnection(f"the SASL session of {session.principal} has expired ({api_key.name})")

    def _throttle(
        self, ctx: RequestContext, request: object, request_bytes: int, response: object, seconds: float
    ) -> int:
        """KIP-219: record the request against the client's quotas; the throttle time it earned (the connection is
        muted that long, and the response says so)."""
        quotas = self.services.quotas
        user, client_id, now = ctx.principal.name, ctx.client_id or "", self.services.clock.now_ms()
        throttle = quotas.record(user, client_id, q.REQUEST_PERCENTAGE, seconds * 100, now)
        if ctx.api_key == ApiKey.PRODUCE:
            throttle = max(throttle, quotas.record(user, client_id, q.PRODUCER_BYTE_RATE, request_bytes, now))
        elif (
            ctx.api_key == ApiKey.FETCH
            and isinstance(response, FetchResponse)
            and not _from_follower(request)
        ):
            size = sum(len(p.records or b"") for t in response.responses for p in t.partitions)
            fetch_throttle = quotas.record(user, client_id, q.CONSUMER_BYTE_RATE, size, now)
            if fetch_throttle:
                # As Kafka: a throttled fetch is answered without data (and not counted), the client comes back later.
                quotas.unrecord(user, client_id, q.CONSUMER_BYTE_RATE, size)
                response.responses = []
            throttle = max(throttle, fetch_throttle)
        return throttle

    def _unsupported_api_versions(self, correlation_id: int) -> bytes:
        """KIP-511: a too-new ApiVersions request gets UNSUPPORTED_VERSION in the v0 schema, listing only key 18."""
        h = self.handlers[ApiKey.API_VERSIONS]
        response = ApiVersionsResponse(
            error_code=ErrorCode.UNSUPPORTED_VERSION,
            api_keys=[
                ApiVersion(api_key=ApiKey.API_VERSIONS, min_version=h.min_version, max_version=h.max_version)
            ],
        )
        out = _encode_response(correlation_id, 0, response, 0)
        assert isinstance(out, bytearray)  # no records in it
        return bytes(out)


_BEFORE_AUTHENTICATION = frozenset({ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE})
_REAUTHENTICATION = frozenset({ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE})


def _from_follower(request: object) -> bool:
    """Replication is not subject to client quotas."""
    return (
        isinstance(request, FetchRequest) and max(request.replica_id, request.replica_state.replica_id) >= 0
    )


def _set_throttle(response: object, throttle_ms: int) -> None:
    if throttle_ms and hasattr(response, "throttle_time_ms"):
        response.throttle_time_ms = max(response.throttle_time_ms, throttle_ms)


def api_name(handler: Handler[Any, Any]) -> str:
    """Kafka's name of the API (`Produce`, `FindCoordinator`), as its request metrics are labelled."""
    return handler.request_schema.struct.cls.__name__.removesuffix("Request")


def _encode_response(correlation_id: int, header_version: int, response: object, version: int) -> Encoded:
    w = Writer()
    w.int32(0)  # size, patched below
    encode_response_header(w, correlation_id, header_version)
    encode_into(w, response, version)
    size = len(w.out) + sum(len(splice) for _, splice in w.splices)
    w.out[0:4] = (size - 4).to_bytes(4, "big")
    if w.splices:
        return SplicedFrame(w.parts(), size)
    return w.out  # no copy: a fetch response can be megabytes
