"""The composition root: build every service of a broker, wire each to the narrow interfaces it needs, run them.

    log manager ── recovers the data directory           metadata ── LocalMetadata (single node: topics.json)
    group committer ── fsyncs, wakes the purgatory                 └─ EtcdMetadata (cluster: etcd)
    replica manager ── partitions, roles, fetchers, purgatory      (publishes images to the replica manager, then
    group service ── __consumer_offsets, the coordinator            to the group service)
    dispatcher ── handlers with BrokerServices ── server ── connections

What differs between a single node and a cluster is which metadata object is built here, nothing else. The data
directory is locked first (a second broker on it refuses to start), then the listener is bound (a taken port is said
at once), then recovery, then the services start in dependency order and the listener accepts connections last.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import trio

import kbroker.handlers  # noqa: F401  (registers every API handler)
from kbroker.clock import Clock, SystemClock
from kbroker.cluster.etcd_metadata import EtcdMetadata
from kbroker.common import ConfigError, StartupError
from kbroker.config import BrokerConfig
from kbroker.coordinator.coordinator import CoordinatorConfig
from kbroker.coordinator.group import GroupConfig
from kbroker.coordinator.wiring import GroupService, OffsetsTopicSettings
from kbroker.dispatch import RequestDispatcher
from kbroker.handlers.registry import HANDLERS
from kbroker.handlers.services import BrokerServices
from kbroker.log.cleaner import LogCleaner
from kbroker.log.flusher import GroupCommitter
from kbroker.log.log_manager import LogManager
from kbroker.log.partition_log import PartitionLog
from kbroker.metadata.api import MetadataService
from kbroker.metadata.local import LocalMetadata
from kbroker.metadata.meta_properties import read_or_create_cluster_id
from kbroker.replication.purgatory import Purgatory
from kbroker.replication.replica_manager import ReplicaManager, ReplicationSettings
from kbroker.server import open_listener, serve

log = logging.getLogger(__name__)

LOCK_FILE = ".lock"


@contextmanager
def locked_data_dir(data_dir: Path) -> Iterator[None]:
    """An exclusive lock on the data directory for the life of the broker (Kafka's `.lock`): two brokers writing one
    directory would lose acknowledged writes. The kernel drops the lock when the process dies, kill -9 included."""
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise StartupError(
                f"data directory {data_dir} is in use by another broker (pid {holder})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


@dataclass
class Broker:
    """A broker assembled by `open_broker`: its services, and `run` to start them. Nothing is handed this object:
    each service got the narrow interfaces it needs when it was built."""

    config: BrokerConfig
    clock: Clock
    port: int
    logs: LogManager
    committer: GroupCommitter
    metadata: MetadataService
    replicas: ReplicaManager
    groups: GroupService
    services: BrokerServices
    dispatcher: RequestDispatcher
    listeners: list[trio.socket.SocketType]

    async def run(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """Start every service in dependency order, the listener last; started with the port it listens on. Runs
        until cancelled."""
        config = self.config
        async with trio.open_nursery() as nursery:
            await nursery.start(self.committer.run)
            await nursery.start(self.replicas.run)
            await nursery.start(self.metadata.run)
            await nursery.start(self.groups.run)
            if config.log_cleaner_enable:
                cleaner = LogCleaner(
                    self.logs, backoff_ms=config.log_cleaner_backoff_ms, clock=self.clock.now_ms
                )
                nursery.start_soon(cleaner.run)
            await nursery.start(serve, self.listeners, self.dispatcher, config.socket_request_max_bytes)
            log.info(
                "broker %d started (%s, data in %s)",
                config.node_id,
                "cluster member" if config.cluster_mode else "single node",
                config.data_dir,
            )
            task_status.started(self.port)


@asynccontextmanager
async def open_broker(
    config: BrokerConfig, *, clock: Clock | None = None, metadata: MetadataService | None = None
) -> AsyncIterator[Broker]:
    """Lock the data directory, bind the listener, recover the logs and build every service; closes the logs on
    exit. `metadata` defaults to what the config asks for (etcd with --metadata, else the single node's files); tests
    may pass another implementation of the same interfaces."""
    clock = clock or SystemClock()
    with locked_data_dir(config.data_dir):
        listeners = await open_listener(config.listener)
        try:
            port: int = listeners[0].getsockname()[1]
            if metadata is None:
                metadata = _metadata_for(config, port)

            # Recovery. Logs of topics the metadata does not name yet (a cluster node before its first image) open
            # with the default settings for recovery only: retention and the cleaner leave them alone until their
            # topic's configs are applied.
            topic_configs = {
                name: config.topic_log_config(t.configs) for name, t in metadata.image().topics.items()
            }
            logs = LogManager(config.data_dir, config.log_defaults, topic_configs, now_ms=clock.now_ms())
            try:
                yield _assemble(config, clock, port, logs, metadata, listeners)
            finally:
                logs.close_all()
        finally:
            for sock in listeners:
                sock.close()


async def run_broker(
    config: BrokerConfig, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
) -> None:
    """Run a broker until cancelled; started with the port it listens on."""
    async with open_broker(config) as broker:
        await broker.run(task_status=task_status)


def _metadata_for(config: BrokerConfig, port: int) -> MetadataService:
    """What differs between a single node and a cluster."""
    advertised = config.advertised_listener
    host, advertised_port = advertised.host or "127.0.0.1", advertised.port or port
    cluster_id = read_or_create_cluster_id(config.data_dir, config.node_id)
    if not config.cluster_mode:
        return LocalMetadata(config, cluster_id, host, advertised_port)
    if advertised.port == 0:
        raise ConfigError("a cluster node needs a fixed listener port: other nodes and clients connect to it")
    return EtcdMetadata(config, cluster_id, host, advertised_port)


def _assemble(
    config: BrokerConfig,
    clock: Clock,
    port: int,
    logs: LogManager,
    metadata: MetadataService,
    listeners: list[trio.socket.SocketType],
) -> Broker:
    purgatory = Purgatory()

    def on_flushed(plog: PartitionLog) -> None:
        if plog.topic_partition is not None:
            purgatory.wake(plog.topic_partition)

    committer = GroupCommitter(on_flushed=on_flushed)
    replicas = ReplicaManager(
        node_id=config.node_id,
        logs=logs,
        committer=committer,
        metadata=metadata,
        clock=clock,
        default_log_config=config.log_defaults,
        settings=ReplicationSettings(
            replica_lag_time_max_ms=config.replica_lag_time_max_ms,
            replica_fetch_wait_max_ms=config.replica_fetch_wait_max_ms,
            replica_fetch_max_bytes=config.replica_fetch_max_bytes,
            log_retention_check_interval_ms=config.log_retention_check_interval_ms,
        ),
        purgatory=purgatory,
    )
    groups = GroupService(
        _coordinator_config(config),
        OffsetsTopicSettings(
            num_partitions=config.offsets_topic_num_partitions,
            # A single node cannot hold more than one replica (Kafka's default of 3 would never be met).
            replication_factor=config.offsets_topic_replication_factor if config.cluster_mode else 1,
            segment_bytes=config.offsets_topic_segment_bytes,
        ),
        node_id=config.node_id,
        replicas=replicas,
        metadata=metadata,
        topic_admin=metadata,
        clock=clock,
    )
    # Roles first, then the coordinator's ownership, which follows them.
    metadata.subscribe(replicas.apply_metadata)
    metadata.subscribe(groups.on_metadata)
    services = BrokerServices(
        config=config,
        clock=clock,
        metadata=metadata,
        topic_admin=metadata,
        producer_ids=metadata,
        replicas=replicas,
        groups=groups.runtime,
        coordinators=groups,
    )
    return Broker(
        config=config,
        clock=clock,
        port=port,
        logs=logs,
        committer=committer,
        metadata=metadata,
        replicas=replicas,
        groups=groups,
        services=services,
        dispatcher=RequestDispatcher(services, HANDLERS),
        listeners=listeners,
    )


def _coordinator_config(config: BrokerConfig) -> CoordinatorConfig:
    return CoordinatorConfig(
        group=GroupConfig(
            group_min_session_timeout_ms=config.group_min_session_timeout_ms,
            group_max_session_timeout_ms=config.group_max_session_timeout_ms,
            group_initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
            group_max_size=config.group_max_size,
        ),
        offset_metadata_max_bytes=config.offset_metadata_max_bytes,
        offsets_retention_minutes=config.offsets_retention_minutes,
        offsets_retention_check_interval_ms=config.offsets_retention_check_interval_ms,
        offsets_topic_num_partitions=config.offsets_topic_num_partitions,
    )
