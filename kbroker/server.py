"""The trio edge: accept connections, run the broker, shut down cleanly on SIGTERM/SIGINT."""

from __future__ import annotations

import logging
import signal
from functools import partial

import trio

from kbroker.broker import Broker
from kbroker.config import BrokerConfig, ConfigError
from kbroker.connection import serve_connection

log = logging.getLogger(__name__)


async def serve_listener(
    broker: Broker, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    host = broker.listener.host or None
    listeners = await trio.open_tcp_listeners(broker.listener.port, host=host)
    port: int = listeners[0].socket.getsockname()[1]
    log.info("listening on %s:%d", broker.listener.host, port)
    task_status.started(port)
    # serve_connection catches everything a connection can raise, so one bad peer never stops the listener
    await trio.serve_listeners(partial(serve_connection, broker), listeners)


async def _main(config: BrokerConfig) -> None:
    import kbroker.handlers  # noqa: F401  (registers every API handler)

    if config.get_list("metadata.etcd.endpoints"):
        from kbroker.cluster.broker import ClusterBroker

        broker: Broker = ClusterBroker(config)
    else:
        broker = Broker(config)
    try:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:
                await nursery.start(broker.run)

                async def stop_on_signal() -> None:
                    async for signum in signals:
                        log.info("received %s, shutting down", signal.Signals(signum).name)
                        nursery.cancel_scope.cancel()
                        return

                nursery.start_soon(stop_on_signal)
    finally:
        broker.close()
        log.info("broker stopped")


def run_broker(config: BrokerConfig) -> int:
    try:
        trio.run(_main, config)
    except ConfigError as exc:
        log.error("%s", exc)
        return 2
    return 0
