"""A real broker in the test's own trio run: `kbroker.app.open_broker` on a temporary data directory, listening on a
free loopback port, its handlers callable directly.

Tests that need to see what the wire does not show (a log's recovery point, a partition whose leadership moved, the
purgatory) use this; tests of behaviour through stock clients start broker processes (tests/broker_process.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import trio

from kbroker.app import Broker, open_broker
from kbroker.clock import Clock
from kbroker.config import BrokerConfig
from kbroker.handlers.registry import HANDLERS, Deferred, RequestContext
from kbroker.metadata.api import MetadataService
from kbroker.security.session import ConnectionSession
from protocol.messages import SCHEMAS, ApiKey

T = TypeVar("T")

# Overrides that make an in-process broker quick to start and predictable.
QUICK: dict[str, str] = {
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "5",
    "transaction.state.log.num.partitions": "5",
}


def broker_config(data_dir: Path, overrides: Mapping[str, str] | None = None) -> BrokerConfig:
    return BrokerConfig.from_properties({"log.dirs": str(data_dir), **QUICK, **(overrides or {})})


@asynccontextmanager
async def running_broker(
    data_dir: Path,
    overrides: Mapping[str, str] | None = None,
    *,
    metadata: Callable[[BrokerConfig], MetadataService] | None = None,
    clock: Clock | None = None,
) -> AsyncIterator[Broker]:
    """A started broker; stopped (and its logs closed) on exit."""
    config = broker_config(data_dir, overrides)
    service = metadata(config) if metadata else None
    async with open_broker(config, clock=clock, metadata=service) as broker, trio.open_nursery() as nursery:
        await nursery.start(broker.run)
        yield broker
        nursery.cancel_scope.cancel()


def context(
    broker: Broker,
    api_key: ApiKey,
    version: int,
    client_id: str = "in-process-test",
    session: ConnectionSession | None = None,
) -> RequestContext:
    """A request's context; with `session`, as that connection's (its listener, its principal)."""
    if session is None:
        return RequestContext(
            services=broker.services,
            api_key=api_key,
            api_version=version,
            correlation_id=1,
            client_id=client_id,
            client_host="127.0.0.1:5555",
            connection_id=1,
        )
    return RequestContext(
        services=broker.services,
        api_key=api_key,
        api_version=version,
        correlation_id=1,
        client_id=client_id,
        client_host=session.peer,
        connection_id=session.connection_id,
        listener=session.listener.name,
        principal=session.principal,
        session=session,
    )


async def call(broker: Broker, request: Any, version: int, session: ConnectionSession | None = None) -> Any:
    """Call the registered handler of `request`'s API at `version`, as the dispatcher would (a deferred response is
    awaited). The version must be one the handler serves."""
    api_key = ApiKey(SCHEMAS[type(request)].api_key)
    handler = HANDLERS[api_key]
    assert handler.min_version <= version <= handler.max_version, f"{api_key.name} v{version} is not served"
    response = await handler.fn(context(broker, api_key, version, session=session), request)
    if isinstance(response, Deferred):
        return await response.wait()
    return response


async def wait_until(predicate: Callable[[], bool], timeout_s: float = 10.0, poll_s: float = 0.005) -> None:
    """Wait for something a background task does; fail after timeout_s."""
    with trio.fail_after(timeout_s):
        while True:
            if predicate():
                return
            await trio.sleep(poll_s)
