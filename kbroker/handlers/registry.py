"""The handler registry: each API module registers the versions it implements; ApiVersions is built from this.

Advertised ranges follow issue 2: Kafka 3.9's maximum and Kafka 4.0's minimum (KIP-896), except where a stock client
needs older versions (the group APIs keep 0 for kcat). Because the advertised set is read from here, it can never
drift from what is implemented.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocol.messages import REQUESTS, RESPONSES, SCHEMAS
from protocol.schema import MessageSchema

if TYPE_CHECKING:
    from kbroker.broker import Broker

HandlerFn = Callable[["RequestContext", Any], Awaitable[Any]]


class CloseConnection(Exception):
    """Stop serving this connection (after logging why): Kafka's answer to requests it will not parse."""


@dataclass(frozen=True, slots=True)
class Deferred:
    """A response that is ready only later (a produce with acks=-1 waits for fsync and replication).

    The connection goes on reading and handling the requests behind it meanwhile, so that many acks=-1 batches
    pipelined on one connection share one fsync and one replication round; responses still go out in request
    order. `wait()` returns the response message.
    """

    wait: Callable[[], Awaitable[Any]]


@dataclass(slots=True)
class RequestContext:
    broker: Broker
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    client_host: str
    connection_id: int


@dataclass(frozen=True, slots=True)
class Handler:
    api_key: int
    min_version: int
    max_version: int
    fn: HandlerFn
    request_schema: MessageSchema
    response_cls: type


HANDLERS: dict[int, Handler] = {}


def handles(api_key: int, min_version: int, max_version: int) -> Callable[[HandlerFn], HandlerFn]:
    """Register `fn` as the handler of `api_key` for versions min..max (inclusive)."""

    def register(fn: HandlerFn) -> HandlerFn:
        if api_key in HANDLERS:
            raise RuntimeError(f"API {api_key} registered twice")
        req_cls = REQUESTS[api_key]
        schema = SCHEMAS[req_cls]
        if min_version not in schema.valid or max_version not in schema.valid:
            raise RuntimeError(f"API {api_key}: {min_version}-{max_version} outside the spec's versions")
        HANDLERS[api_key] = Handler(api_key, min_version, max_version, fn, schema, RESPONSES[api_key])
        return fn

    return register
