"""The composition root: build every service of a broker, wire each to the narrow interfaces it needs, run them.

    log manager ── recovers the data directory           metadata ── LocalMetadata (single node: topics.json)
    group committer ── fsyncs, wakes the purgatory                 └─ EtcdMetadata (cluster: etcd)
    replica manager ── partitions, roles, fetchers, purgatory      (publishes images to the replica manager, then
    group service ── __consumer_offsets, the coordinator            to the group service)
    dispatcher ── handlers with BrokerServices ── server ── connections

What differs between a single node and a cluster is which metadata object is built here, nothing else. The codec's
plans are compiled first, then the data directory is locked (a second broker on it refuses to start), then the
listener is bound (a taken port is said at once), then recovery, then the services start in dependency order and the
listener accepts connections last.
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import trio

import kbroker.handlers  # noqa: F401  (registers every API handler)
from kbroker.clock import Clock, SystemClock
from kbroker.cluster.etcd_metadata import EtcdMetadata
from kbroker.common import ConfigError, StartupError
from kbroker.config import BrokerConfig, DynamicBrokerConfigs
from kbroker.connection import ListenerRuntime
from kbroker.coordinator.coordinator import CoordinatorConfig
from kbroker.coordinator.group import GroupConfig
from kbroker.coordinator.wiring import GroupService, OffsetsTopicSettings
from kbroker.dispatch import RequestDispatcher
from kbroker.handlers.registry import HANDLERS, prepare_codecs
from kbroker.handlers.services import BrokerServices
from kbroker.log.cleaner import LogCleaner
from kbroker.log.flusher import GroupCommitter
from kbroker.log.log_manager import LogManager
from kbroker.log.partition_log import PartitionLog
from kbroker.metadata.api import MetadataService
from kbroker.metadata.local import LocalMetadata
from kbroker.metadata.meta_properties import META_PROPERTIES, read_or_create_cluster_id
from kbroker.monitoring.admin_listener import (
    AdminApp,
    Readiness,
    Sockets,
    bind_admin_listener,
    close_admin_listener,
    serve_admin,
)
from kbroker.monitoring.collector import BrokerState
from kbroker.monitoring.console_api import ConsoleApi
from kbroker.replication.client import Connector, plaintext_connector
from kbroker.replication.fetch_session import FetchManager, FetchSessionCache
from kbroker.replication.purgatory import Purgatory
from kbroker.replication.replica_manager import DynamicSettings, ReplicaManager, ReplicationSettings
from kbroker.request_log import RequestLog
from kbroker.security.authorizer import AclAuthorizer, build_authorizer
from kbroker.security.client import inter_broker_connector
from kbroker.security.connections import ConnectionQuotas
from kbroker.security.image import SecurityChange
from kbroker.security.quotas import ClientQuotas
from kbroker.security.sasl import SaslAuthenticator
from kbroker.security.scram import AddScram, ScramCredential
from kbroker.security.settings import ListenerSecurity, listener_security
from kbroker.security.tls import ReloadingContext
from kbroker.server import BoundListener, open_listener, serve
from kbroker.transaction.coordinator import TransactionConfig
from kbroker.transaction.markers import TxnMarkerWriter
from kbroker.transaction.service import TransactionService, TransactionSettings

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
    transactions: TransactionService
    services: BrokerServices
    dispatcher: RequestDispatcher
    listeners: list[tuple[BoundListener, ListenerRuntime]]
    connection_quotas: ConnectionQuotas
    add_scram: tuple[AddScram, ...] = ()

    def port_of(self, listener: str) -> int:
        """The port a listener (by name) is bound to."""
        return next(b.port for b, _ in self.listeners if b.listener.name == listener.upper())

    admin_sockets: Sockets | None = None
    """The admin HTTP listener's (admin.listener: metrics, health, console), bound; None when it is off."""
    readiness: Readiness = field(default_factory=Readiness)

    def admin_app(self) -> AdminApp:
        """The admin listener's application, reading this broker's state through `BrokerState`."""
        state = BrokerState(
            node_id=self.config.node_id,
            cluster_mode=self.config.cluster_mode,
            metadata=self.metadata,
            replicas=self.replicas,
            groups=self.groups,
            committer=self.committer,
            requests=self.dispatcher.stats,
            fetch_sessions=self.services.fetch_sessions,
        )
        # The console's own Kafka client connects to this broker without credentials: through a PLAINTEXT
        # listener if there is one, else the inter-broker one (whose secured requests then fail with a message).
        advertised = next(
            (a for a in self.config.advertised_listeners if a.security_protocol == "PLAINTEXT"),
            self.config.advertised_inter_broker_listener,
        )
        port = advertised.port or self.port_of(advertised.name)
        bootstrap = f"{advertised.host or '127.0.0.1'}:{port}"
        return AdminApp(state, self.readiness, ConsoleApi(state, self.config, lambda: bootstrap))

    async def run(
        self,
        *,
        before_listening: Callable[[], None] | None = None,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Start every service in dependency order, the listener last; started with the port it listens on. Runs
        until cancelled. `before_listening` runs once every service has started and before the first connection is
        accepted (the process's collection of start-up garbage: a client's first request must not wait for it)."""
        config = self.config
        async with trio.open_nursery() as nursery:
            await nursery.start(self.committer.run)
            await nursery.start(self.logs.deleter.run)
            if self.admin_sockets is not None:
                # Early, so that /health/live answers while the broker waits for its cluster.
                await nursery.start(serve_admin, self.admin_sockets, self.admin_app())
            await nursery.start(self.replicas.run)
            await nursery.start(self.metadata.run)
            if self.add_scram:
                # A first credential of each user named at start (kafka-storage format --add-scram), kept if the
                # user already has one: a restart with the same arguments does not undo a password change.
                await self.metadata.alter_security(
                    SecurityChange(
                        scram_upserts={(a.user, a.mechanism): a.credential for a in self.add_scram},
                        scram_only_if_absent=True,
                    )
                )
            await nursery.start(self.groups.run)
            await nursery.start(self.transactions.run)
            if config.log_cleaner_enable:
                cleaner = LogCleaner(
                    self.logs, backoff_ms=config.log_cleaner_backoff_ms, clock=self.clock.now_ms
                )
                nursery.start_soon(cleaner.run)
            if before_listening is not None:
                before_listening()
            await nursery.start(serve, self.listeners, self.dispatcher, self.connection_quotas)
            self.readiness.serving = True
            log.info(
                "broker %d started (%s, data in %s)",
                config.node_id,
                "cluster member" if config.cluster_mode else "single node",
                config.data_dir,
            )
            task_status.started(self.port)

    async def controlled_shutdown(self) -> None:
        """Before stopping (SIGTERM): with controlled.shutdown.enable, a cluster node has the controller move its
        leaderships to other in-sync replicas and take it out of the ISRs, so that clients switch leaders before it
        goes instead of waiting for requests to it to fail (KRaft's controlled shutdown). A single node has nothing
        to hand over."""
        config = self.config
        if not (config.cluster_mode and config.controlled_shutdown_enable):
            return
        timeout_s = (
            config.controlled_shutdown_max_retries * config.controlled_shutdown_retry_backoff_ms / 1000
        )
        await self.metadata.controlled_shutdown(max(timeout_s, 0.0))


@asynccontextmanager
async def open_broker(
    config: BrokerConfig,
    *,
    clock: Clock | None = None,
    metadata: MetadataService | None = None,
    add_scram: tuple[AddScram, ...] = (),
    log_requests: int = 0,
) -> AsyncIterator[Broker]:
    """Check the security settings, prepare the codec, lock the data directory, bind the listeners, recover the logs
    and build every service; closes the logs on exit. `metadata` defaults to what the config asks for (etcd with
    --metadata, else the single node's files); tests may pass another implementation of the same interfaces.
    `add_scram` are the credentials of `kbroker serve --add-scram`."""
    clock = clock or SystemClock()
    security = [listener_security(config, listener) for listener in config.listeners]
    runtimes = [_listener_runtime(config, s) for s in security]
    # First: compiled on first use, the plans would make the first request of each kind slower than the next.
    prepare_codecs()
    with locked_data_dir(config.data_dir):
        bound: list[BoundListener] = []
        admin_listener = config.raw("admin.listener")
        admin_sockets: Sockets | None = None
        try:
            for listener in config.listeners:
                bound.append(await open_listener(listener))
            if admin_listener:
                admin_sockets = bind_admin_listener(admin_listener)
            ports = {b.listener.name: b.port for b in bound}
            port = ports[config.inter_broker_listener_name]
            if metadata is None:
                inter_broker = next(
                    s for s in security if s.listener.name == config.inter_broker_listener_name
                )
                # A single node never connects to another: its inter-broker listener may lack a client login.
                connect = (
                    inter_broker_connector(config, inter_broker)
                    if config.cluster_mode
                    else plaintext_connector
                )
                metadata = _metadata_for(config, ports, connect)

            # Recovery. Logs of topics the metadata does not name yet (a cluster node before its first image) open
            # with the default settings for recovery only: retention and the cleaner leave them alone until their
            # topic's configs are applied.
            topic_configs = {
                name: config.topic_log_config(t.configs) for name, t in metadata.image().topics.items()
            }
            logs = LogManager(config.data_dir, config.log_defaults, topic_configs, now_ms=clock.now_ms())
            try:
                broker = _assemble(config, clock, port, logs, metadata, list(zip(bound, runtimes, strict=True)),
                                   security, RequestLog(log_requests))  # fmt: skip
                broker.add_scram = add_scram
                broker.admin_sockets = admin_sockets
                yield broker
            finally:
                logs.close_all()
        finally:
            for b in bound:
                b.close()
            if admin_sockets is not None:
                close_admin_listener(admin_sockets)


async def run_broker(
    config: BrokerConfig,
    *,
    add_scram: tuple[AddScram, ...] = (),
    log_requests: int = 0,
    stop: trio.Event | None = None,
    before_listening: Callable[[], None] | None = None,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run a broker until cancelled, or until `stop` is set: then it shuts down in a controlled way (a cluster node
    has its leaderships moved away first) and returns. Started with the port it listens on. `log_requests`: log
    every N-th request (kbroker/request_log.py); `before_listening`: see `Broker.run`."""
    async with (
        open_broker(config, add_scram=add_scram, log_requests=log_requests) as broker,
        trio.open_nursery() as nursery,
    ):
        port: int = await nursery.start(functools.partial(broker.run, before_listening=before_listening))
        task_status.started(port)
        if stop is None:
            return  # (the nursery runs the broker until cancelled)
        await stop.wait()
        await broker.controlled_shutdown()
        nursery.cancel_scope.cancel()


def _listener_runtime(config: BrokerConfig, security: ListenerSecurity) -> ListenerRuntime:
    return ListenerRuntime(
        listener=security.listener,
        max_request_bytes=config.socket_request_max_bytes,
        tls=ReloadingContext(security.tls) if security.tls is not None else None,
        sasl_max_receive_size=security.sasl.max_receive_size if security.sasl is not None else 524288,
        idle_timeout_s=config.connections_max_idle_ms / 1000
        if config.connections_max_idle_ms > 0
        else float("inf"),
    )


def _metadata_for(config: BrokerConfig, ports: dict[str, int], connect: Connector) -> MetadataService:
    """What differs between a single node and a cluster. The node registers every advertised listener; host and
    port are the inter-broker listener's (what followers connect to). `connect` reaches other brokers' inter-broker
    listeners (the cluster's failure detector watches them)."""
    endpoints = {
        a.name: (a.host or "127.0.0.1", a.port or ports[a.name]) for a in config.advertised_listeners
    }
    host, advertised_port = endpoints[config.inter_broker_listener_name]
    new_log_dir = not (config.data_dir / META_PROPERTIES).exists()
    cluster_id = read_or_create_cluster_id(config.data_dir, config.node_id)
    if not config.cluster_mode:
        return LocalMetadata(config, cluster_id, host, advertised_port, endpoints)
    if any(a.port == 0 for a in config.advertised_listeners):
        raise ConfigError(
            "a cluster node needs fixed listener ports: other nodes and clients connect to them"
        )
    return EtcdMetadata(
        config, cluster_id, host, advertised_port, endpoints, connect=connect, new_log_dir=new_log_dir
    )


def _assemble(
    config: BrokerConfig,
    clock: Clock,
    port: int,
    logs: LogManager,
    metadata: MetadataService,
    listeners: list[tuple[BoundListener, ListenerRuntime]],
    security: list[ListenerSecurity],
    request_log: RequestLog,
) -> Broker:
    purgatory = Purgatory()
    inter_broker = next(s for s in security if s.listener.name == config.inter_broker_listener_name)

    def on_flushed(plog: PartitionLog) -> None:
        if plog.topic_partition is not None:
            purgatory.wake(plog.topic_partition)

    committer = GroupCommitter(on_flushed=on_flushed, linger_ms=config.log_flush_linger_ms)

    def dynamic_settings(dynamic: Mapping[str, str]) -> DynamicSettings:
        """What this node's dynamic broker configs (the cluster-wide defaults under its own) make of the settings
        replication reads at run time."""
        current = config.with_dynamic(DynamicBrokerConfigs(node=dynamic))
        return DynamicSettings(
            log_defaults=current.log_defaults,
            leader_throttled_rate=current.leader_replication_throttled_rate,
            follower_throttled_rate=current.follower_replication_throttled_rate,
        )

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
            transaction_partition_verification_enable=config.transaction_partition_verification_enable,
            log_flush_interval_ms=config.log_flush_interval_ms,
            log_flush_acks_all_enable=config.log_flush_acks_all_enable,
        ),
        purgatory=purgatory,
        # A single node never fetches from another: its inter-broker listener may lack a client login.
        connect=inter_broker_connector(config, inter_broker) if config.cluster_mode else plaintext_connector,
        dynamic_settings=dynamic_settings,
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
    transactions = TransactionService(
        TransactionConfig(
            transaction_state_log_num_partitions=config.transaction_state_log_num_partitions,
            transaction_max_timeout_ms=config.transaction_max_timeout_ms,
            transactional_id_expiration_ms=config.transactional_id_expiration_ms,
        ),
        TransactionSettings(
            # A single node cannot hold more than one replica (Kafka's default of 3 would never be met).
            replication_factor=config.transaction_state_log_replication_factor if config.cluster_mode else 1,
            min_isr=config.transaction_state_log_min_isr,
            segment_bytes=config.transaction_state_log_segment_bytes,
            abort_timed_out_transaction_cleanup_interval_ms=(
                config.transaction_abort_timed_out_transaction_cleanup_interval_ms
            ),
            remove_expired_transaction_cleanup_interval_ms=(
                config.transaction_remove_expired_transaction_cleanup_interval_ms
            ),
        ),
        node_id=config.node_id,
        replicas=replicas,
        metadata=metadata,
        topic_admin=metadata,
        producer_ids=metadata,
        markers=TxnMarkerWriter(replicas, groups, clock_ms=clock.now_ms),
        offsets_partition_for=groups.coordinator.partition_for,
        clock=clock,
        connect=inter_broker_connector(config, inter_broker) if config.cluster_mode else plaintext_connector,
    )
    groups.set_transaction_verifier(transactions.verify_for_produce)
    # Roles first, then the coordinators' ownership, which follows them.
    metadata.subscribe(replicas.apply_metadata)
    metadata.subscribe(groups.on_metadata)
    metadata.subscribe(transactions.on_metadata)
    authorizer = build_authorizer(
        config.authorizer_class_name, config.super_users, config.allow_everyone_if_no_acl_found
    )
    if isinstance(authorizer, AclAuthorizer):
        metadata.subscribe(authorizer.on_metadata)
    quotas = ClientQuotas(config.quota_window_num, config.quota_window_size_seconds)
    metadata.subscribe(quotas.on_metadata)

    def scram_lookup(user: str, mechanism: str) -> ScramCredential | None:
        return metadata.image().security.scram.get((user, mechanism))

    sasl_listeners = {s.listener.name: s.sasl for s in security if s.sasl is not None}
    sasl = (
        SaslAuthenticator(
            sasl_listeners, scram_lookup, clock, config.connection_failed_authentication_delay_ms
        )
        if sasl_listeners
        else None
    )
    services = BrokerServices(
        config=config,
        clock=clock,
        metadata=metadata,
        topic_admin=metadata,
        cluster_admin=metadata,
        producer_ids=metadata,
        replicas=replicas,
        groups=groups.runtime,
        coordinators=groups,
        security_admin=metadata,
        sasl=sasl,
        authorizer=authorizer,
        quotas=quotas,
        transactions=transactions,
        fetch_sessions=FetchManager(
            FetchSessionCache(
                config.max_incremental_fetch_session_cache_slots,
                config.min_incremental_fetch_session_eviction_ms,
                purgatory,
            ),
            clock,
        ),
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
        transactions=transactions,
        services=services,
        dispatcher=RequestDispatcher(services, HANDLERS, request_log=request_log),
        listeners=listeners,
        connection_quotas=ConnectionQuotas(
            max_connections=int(config.raw("max.connections") or 2**31 - 1),
            max_per_ip=config.max_connections_per_ip,
            per_ip_overrides=config.max_connections_per_ip_overrides,
            per_listener={s.listener.name: s.max_connections for s in security},
        ),
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
