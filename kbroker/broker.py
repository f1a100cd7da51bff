"""The Broker: everything a request handler can reach, and the task tree that runs it.

State changes (creating a topic, appending to a log, advancing a high watermark) are plain synchronous methods, so no
other task can interleave with one and broker state needs no locks. trio appears only where we wait: the listener,
fsync group commit, long-poll fetches, retention and the coordinator's timers.
"""

from __future__ import annotations

import base64
import logging
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import trio

from kbroker.config import (
    KNOWN_TOPIC_CONFIGS,
    TOPIC_CONFIG_SYNONYMS,
    BrokerConfig,
    ConfigError,
    Listener,
    parse_listener,
)
from kbroker.coordinator.wiring import GroupService
from kbroker.log.cleaner import LogCleaner
from kbroker.log.config import ConfigError as LogConfigError
from kbroker.log.config import LogConfig
from kbroker.log.errors import LogError
from kbroker.log.flusher import GroupCommitter
from kbroker.log.log_manager import LogManager
from kbroker.log.partition_log import AppendInfo, PartitionLog
from kbroker.producer_ids import ProducerIdBlock
from kbroker.topics import TopicError, TopicMetadata, TopicRegistry, write_file_atomically
from protocol.errors import ErrorCode

log = logging.getLogger(__name__)


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    node_id: int
    host: str
    port: int
    rack: str | None = None


class AppendError(Exception):
    """A produce to one partition failed with `code`."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message


class OffsetLookupError(Exception):
    def __init__(self, code: ErrorCode) -> None:
        super().__init__(code.name)
        self.code = code


@dataclass(slots=True)
class FetchResult:
    error_code: ErrorCode
    high_watermark: int
    log_start_offset: int
    records: bytes | memoryview
    # (epoch, end offset) when a follower's log diverges from ours (KIP-320)
    diverging_epoch: tuple[int, int] | None = None


LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5


def _load_cluster_id(data_dir: Path, node_id: int) -> str:
    """Kafka keeps cluster.id in meta.properties; we do the same so the id survives restarts."""
    path = data_dir / "meta.properties"
    if path.exists():
        for line in path.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "cluster.id":
                return value.strip()
    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    write_file_atomically(path, f"version=1\ncluster.id={cluster_id}\nnode.id={node_id}\n".encode())
    return cluster_id


class Broker:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.node_id = config.node_id
        self.data_dir = config.data_dir
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.cluster_id = _load_cluster_id(self.data_dir, self.node_id)
        listeners = config.get_list("listeners")
        if len(listeners) != 1:
            raise ConfigError("kbroker serves exactly one listener")
        self.listener: Listener = parse_listener(listeners[0])
        advertised = config.get_list("advertised.listeners")
        adv = parse_listener(advertised[0]) if advertised else self.listener
        self.advertised = adv
        self.topics = TopicRegistry(self.data_dir)
        self.log_defaults = config.topic_defaults()
        self.default_log_config = LogConfig.from_properties({}, self.log_defaults)
        self.logs = LogManager(
            self.data_dir,
            self.default_log_config,
            {
                t.name: LogConfig.from_properties(t.configs, self.log_defaults)
                for t in self.topics.topics.values()
            },
        )
        self.committer = GroupCommitter()
        self.producer_ids = ProducerIdBlock(self.data_dir / "producer-ids")
        self.connections = 0
        # Woken whenever any partition's high watermark moves, for long-poll fetches.
        self._data_arrived = trio.Event()
        self.bound_port: int | None = None
        # The group coordinator and __consumer_offsets (kbroker/coordinator/wiring.py); started by run().
        self.groups = GroupService(self)

    # ---- cluster view --------------------------------------------------------------------------------------------

    def live_brokers(self) -> list[BrokerEndpoint]:
        port = self.advertised.port or (self.bound_port or 0)
        return [BrokerEndpoint(self.node_id, self.advertised.host or "127.0.0.1", port)]

    def controller_id(self) -> int:
        return self.node_id

    def metadata_controller_id(self) -> int:
        """The controller id Metadata reports: where admin clients send CreateTopics/DeleteTopics."""
        return self.controller_id()

    def partition_state(self, topic: str, partition: int) -> PartitionState:
        """Single node: we lead every partition at epoch 0 and are its only replica."""
        return PartitionState(self.node_id, 0, [self.node_id], [self.node_id], [])

    def leader_epoch(self, topic: str, partition: int) -> int:
        return self.partition_state(topic, partition).leader_epoch

    # ---- topics --------------------------------------------------------------------------------------------------

    def topic_log_config(self, topic: TopicMetadata) -> LogConfig:
        return LogConfig.from_properties(topic.configs, self.default_log_config)

    def validate_topic_configs(self, configs: dict[str, str]) -> None:
        for key in configs:
            if key not in KNOWN_TOPIC_CONFIGS:
                raise TopicError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {key}")
        try:
            LogConfig.from_properties(configs, self.log_defaults)
        except (ConfigError, LogConfigError) as exc:
            raise TopicError(ErrorCode.INVALID_CONFIG, str(exc)) from None

    def check_new_topic(
        self, name: str, num_partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> None:
        """Raise TopicError unless CreateTopics would succeed (also used for validate_only)."""
        self.topics.check_new(name)
        if num_partitions <= 0:
            raise TopicError(ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0.")
        if replication_factor <= 0:
            raise TopicError(
                ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0."
            )
        live = len(self.live_brokers())
        if replication_factor > live:
            raise TopicError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"Replication factor: {replication_factor} larger than available brokers: {live}.",
            )
        self.validate_topic_configs(configs)

    def create_topic(
        self, name: str, num_partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> TopicMetadata:
        self.check_new_topic(name, num_partitions, replication_factor, configs)
        topic = TopicMetadata(name, uuid.uuid4(), num_partitions, replication_factor, dict(configs))
        log_config = self.topic_log_config(topic)
        for p in range(num_partitions):
            self.logs.create(name, p, log_config)
        self.topics.add(topic)
        log.info("created topic %s with %d partitions", name, num_partitions)
        return topic

    def delete_topic(self, name: str) -> None:
        topic = self.topics.get(name)
        if topic is None:
            raise TopicError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."
            )
        self.topics.remove(name)
        for p in range(topic.num_partitions):
            self.logs.delete(name, p)
        log.info("deleted topic %s", name)
        self.groups.on_topics_deleted([name])

    def default_partitions(self) -> int:
        return self.config.get_int("num.partitions")

    def default_replication_factor(self) -> int:
        return self.config.get_int("default.replication.factor")

    def partition_log(self, topic: str, partition: int) -> PartitionLog | None:
        return self.logs.get(topic, partition)

    def check_leader_epoch(self, topic: str, partition: int, current_leader_epoch: int) -> ErrorCode:
        """KIP-320: a client's epoch older than ours is fenced; a newer one means our metadata is behind."""
        if current_leader_epoch < 0:
            return ErrorCode.NONE
        ours = self.leader_epoch(topic, partition)
        if current_leader_epoch < ours:
            return ErrorCode.FENCED_LEADER_EPOCH
        if current_leader_epoch > ours:
            return ErrorCode.UNKNOWN_LEADER_EPOCH
        return ErrorCode.NONE

    def is_leader(self, topic: str, partition: int) -> bool:
        return self.partition_state(topic, partition).leader == self.node_id

    # ---- group coordinator ownership (which __consumer_offsets partitions this broker coordinates) -----------------

    def coordinator_owns(self, partition: int) -> bool:
        return self.groups.owns(partition)

    def on_become_offsets_leader(self, partition: int) -> None:
        """Load the partition's groups; a single node does this for every partition at startup."""
        self.groups.on_become_leader(partition)

    async def on_resign_offsets_leader(self, partition: int) -> None:
        await self.groups.on_resign_leader(partition)

    # ---- produce, fetch, offsets -----------------------------------------------------------------------------------

    def append_records(self, topic: str, partition: int, batch: bytearray, acks: int, now: int) -> AppendInfo:
        plog = self.logs.get(topic, partition)
        if plog is None:
            raise AppendError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if not self.is_leader(topic, partition):
            raise AppendError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        if plog.offline:
            raise AppendError(
                ErrorCode.KAFKA_STORAGE_ERROR, f"partition {topic}-{partition} is offline after a disk error"
            )
        try:
            info = plog.append_as_leader(batch, self.leader_epoch(topic, partition), now)
        except LogError as exc:
            raise AppendError(exc.code, exc.message) from None
        if not info.duplicate:
            self.on_appended(topic, partition, plog)
        return info

    def on_appended(self, topic: str, partition: int, plog: PartitionLog) -> None:
        """Single node: we are the whole ISR, so the high watermark follows the log end at once."""
        plog.advance_high_watermark(plog.log_end_offset)
        self.notify_data_arrived()

    async def wait_acks_all(self, topic: str, partition: int, last_offset: int, timeout_ms: int) -> None:
        plog = self.logs.get(topic, partition)
        if plog is None:
            raise AppendError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        try:
            await self.committer.wait_durable(plog, last_offset + 1)
        except LogError as exc:
            raise AppendError(exc.code, exc.message) from None

    def read_partition(
        self,
        topic: str,
        partition: int,
        *,
        fetch_offset: int,
        max_bytes: int,
        current_leader_epoch: int,
        replica_id: int,
        follower_log_start_offset: int,
        now: int,
        min_one_batch: bool,
    ) -> FetchResult:
        plog = self.logs.get(topic, partition)
        if plog is None:
            return FetchResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, b"")
        if not self.is_leader(topic, partition):
            return FetchResult(ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1, b"")
        epoch_error = self.check_leader_epoch(topic, partition, current_leader_epoch)
        if epoch_error:
            return FetchResult(epoch_error, -1, -1, b"")
        if plog.offline:
            return FetchResult(ErrorCode.KAFKA_STORAGE_ERROR, -1, -1, b"")
        hw = plog.high_watermark
        limit = plog.log_end_offset if replica_id >= 0 else hw
        if fetch_offset < plog.log_start_offset or fetch_offset > limit:
            return FetchResult(ErrorCode.OFFSET_OUT_OF_RANGE, hw, plog.log_start_offset, b"")
        if max_bytes <= 0 and not min_one_batch:
            return FetchResult(ErrorCode.NONE, hw, plog.log_start_offset, b"")
        try:
            records = plog.read(fetch_offset, max_bytes, limit)
        except LogError as exc:
            return FetchResult(exc.code, hw, plog.log_start_offset, b"")
        return FetchResult(ErrorCode.NONE, hw, plog.log_start_offset, records)

    def on_follower_fetch_done(self, replica_id: int, req: object) -> None:
        """Replication hook; a single node has no followers."""

    def list_offset(
        self, topic: str, partition: int, timestamp: int, current_leader_epoch: int, replica_id: int
    ) -> tuple[int, int, int]:
        """(offset, timestamp, leader epoch) for ListOffsets."""
        plog = self.logs.get(topic, partition)
        if plog is None:
            raise OffsetLookupError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if not self.is_leader(topic, partition):
            raise OffsetLookupError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        epoch_error = self.check_leader_epoch(topic, partition, current_leader_epoch)
        if epoch_error:
            raise OffsetLookupError(epoch_error)
        epoch = self.leader_epoch(topic, partition)
        try:
            return self._list_offset(plog, timestamp, replica_id, epoch)
        except LogError as exc:
            raise OffsetLookupError(exc.code) from None

    def _list_offset(
        self, plog: PartitionLog, timestamp: int, replica_id: int, epoch: int
    ) -> tuple[int, int, int]:
        if timestamp == LATEST_TIMESTAMP:
            end = plog.log_end_offset if replica_id >= 0 else plog.high_watermark
            return end, -1, plog.leader_epoch_cache.epoch_for_offset(end)
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP, LATEST_TIERED_TIMESTAMP):
            start = plog.log_start_offset
            return start, -1, plog.leader_epoch_cache.epoch_for_offset(start)
        if timestamp == MAX_TIMESTAMP:
            found = plog.max_timestamp_offset()
            if found is None:
                return -1, -1, -1
            return found[0], found[1], plog.leader_epoch_cache.epoch_for_offset(found[0])
        found = plog.offset_for_timestamp(timestamp, plog.high_watermark)
        if found is None:
            return -1, -1, epoch
        return found[0], found[1], plog.leader_epoch_cache.epoch_for_offset(found[0])

    async def allocate_producer_id(self) -> int:
        return self.producer_ids.next_id()

    async def create_topic_async(
        self, name: str, num_partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> TopicMetadata:
        return self.create_topic(name, num_partitions, replication_factor, configs)

    async def delete_topic_async(self, name: str) -> None:
        self.delete_topic(name)

    def describe_topic_configs(self, explicit: dict[str, str]) -> list[tuple[str, str | None, int]]:
        """(name, value, source) of every topic config: 1 explicit topic config, 4 broker setting, 5 default."""
        out: list[tuple[str, str | None, int]] = []
        for name in sorted(TOPIC_CONFIG_SYNONYMS):
            if name in explicit:
                out.append((name, explicit[name], 1))
                continue
            broker_name = TOPIC_CONFIG_SYNONYMS[name]
            value = self.log_defaults.get(name)
            out.append((name, value, 4 if broker_name in self.config.explicit else 5))
        for name in sorted(set(explicit) - set(TOPIC_CONFIG_SYNONYMS)):
            out.append((name, explicit[name], 1))
        return out

    # ---- data arrival ---------------------------------------------------------------------------------------------

    def notify_data_arrived(self) -> None:
        self._data_arrived.set()
        self._data_arrived = trio.Event()

    async def wait_data_arrived(self) -> None:
        await self._data_arrived.wait()

    # ---- lifecycle --------------------------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        from kbroker.server import serve_listener

        async with trio.open_nursery() as nursery:
            await nursery.start(self.committer.run)
            nursery.start_soon(self._retention_loop)
            self.start_log_cleaner(nursery)
            await self.start_services(nursery)
            port = await nursery.start(serve_listener, self)
            self.bound_port = port
            task_status.started(port)

    def start_log_cleaner(self, nursery: trio.Nursery) -> None:
        """Compaction of cleanup.policy=compact topics (kbroker/log/cleaner.py), unless log.cleaner.enable=false."""
        if self.config.get_bool("log.cleaner.enable"):
            cleaner = LogCleaner(self.logs, backoff_ms=self.config.get_int("log.cleaner.backoff.ms"))
            nursery.start_soon(cleaner.run)

    async def start_services(self, nursery: trio.Nursery) -> None:
        """What must be running before the listener opens. A cluster node (kbroker/cluster/broker.py) joins the
        cluster here instead."""
        # Before the listener: groups are loaded before any client can ask about them.
        await self.groups.start(nursery)

    async def _retention_loop(self) -> None:
        interval = self.config.get_int("log.retention.check.interval.ms") / 1000
        while True:
            await trio.sleep(interval)
            try:
                self.logs.retention_pass(now_ms())
            except OSError:
                log.exception("retention pass failed")

    def close(self) -> None:
        self.logs.close_all()


@dataclass(frozen=True, slots=True)
class PartitionState:
    """Who leads a partition and who replicates it, as Metadata reports it."""

    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]
    offline_replicas: list[int]
