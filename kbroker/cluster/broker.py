"""The cluster-mode Broker: the same object handlers see, with the cluster view taken from etcd and replication.

`kbroker serve --node-id N --metadata etcd://...` runs a `ClusterBroker` (server.py picks it when
`metadata.etcd.endpoints` is set). It overrides the cluster-view methods of `Broker`:

- topics, brokers, controller and partition states come from the metadata snapshot the replica manager last
  applied (`ClusterTopics` gives handlers the `TopicRegistry` interface over it);
- leadership is the replica manager's (`is_leader`), so a node serves produce, consumer fetches and ListOffsets only
  for partitions it leads, at the epoch it leads them; anything else gets NOT_LEADER_OR_FOLLOWER (or
  FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH when the client's epoch is older / newer than ours), as Kafka answers;
- a produce with acks=-1 is refused before it is appended when the ISR is smaller than `min.insync.replicas`
  (NOT_ENOUGH_REPLICAS), and answered once the high watermark has passed it and the leader's copy is fsynced, or
  with REQUEST_TIMED_OUT after the request's timeout;
- the high watermark is the smallest log end offset over the ISR (partition_leader.py), not the leader's log end;
- a follower's fetch (replica id >= 0) reads up to the log end and tells the leader how far that follower is.

Topics are created and deleted in etcd; the controller places partitions and the replica manager creates or deletes
the local logs of the partitions this node replicates. Producer ids come from blocks reserved in etcd with a
compare-and-swap counter, so they are unique across the cluster.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import uuid
from functools import partial

import trio

from kbroker.broker import (
    AppendError,
    Broker,
    BrokerEndpoint,
    FetchResult,
    OffsetLookupError,
    PartitionState,
)
from kbroker.cluster.etcd import EtcdError, Get, Put, RangeResult, key_absent, mod_revision_is
from kbroker.cluster.member import ClusterMember, run_cluster_member
from kbroker.cluster.metadata import MetadataError, TopicRecord
from kbroker.cluster.store import ClusterSnapshot, LeaseExpired, MetadataStore
from kbroker.config import BrokerConfig, ConfigError
from kbroker.coordinator.wiring import OFFSETS_TOPIC
from kbroker.log.config import LogConfig
from kbroker.log.errors import LogError
from kbroker.log.partition_log import AppendInfo, PartitionLog
from kbroker.replication.checkpoint import read_checkpoint, write_checkpoint
from kbroker.replication.manager import ReplicaManager
from kbroker.replication.partition_leader import PartitionLeader
from kbroker.topics import TopicError, TopicMetadata, TopicRegistry, write_file_atomically
from protocol.errors import ErrorCode

log = logging.getLogger(__name__)

PRODUCER_ID_BLOCK_SIZE = 1000
# How long CreateTopics / DeleteTopics wait for the controller and this node's metadata to reflect the change.
TOPIC_CHANGE_WAIT_S = 10.0
REJOIN_BACKOFF_S = 1.0


class ClusterTopics(TopicRegistry):
    """`broker.topics` in cluster mode: the lookups handlers make (`get`, `topics`, `by_id`, `check_new`), over
    the applied metadata snapshot. Topics change only through etcd, never through this object."""

    def __init__(self) -> None:  # no super().__init__: there is no topics.json in cluster mode
        self.topics: dict[str, TopicMetadata] = {}
        self.by_id: dict[uuid.UUID, TopicMetadata] = {}
        self._records: dict[str, TopicRecord] = {}

    def refresh(self, snapshot: ClusterSnapshot) -> None:
        topics: dict[str, TopicMetadata] = {}
        for name, record in snapshot.topics.items():
            existing = self.topics.get(name)
            if existing is not None and self._records.get(name) == record:
                topics[name] = existing
            else:
                topics[name] = TopicMetadata(
                    name, record.topic_id, record.partitions, record.replication_factor, dict(record.configs)
                )
        self.topics = topics
        self.by_id = {t.topic_id: t for t in topics.values()}
        self._records = dict(snapshot.topics)

    def add(self, topic: TopicMetadata) -> None:
        raise TopicError(ErrorCode.UNKNOWN_SERVER_ERROR, "cluster topics are created in etcd")

    def remove(self, name: str) -> TopicMetadata | None:
        raise TopicError(ErrorCode.UNKNOWN_SERVER_ERROR, "cluster topics are deleted in etcd")

    def update(self, topic: TopicMetadata) -> None:
        raise TopicError(ErrorCode.UNKNOWN_SERVER_ERROR, "cluster topics are changed in etcd")

    def save(self) -> None:
        pass


def metadata_url(config: BrokerConfig) -> str:
    """etcd://HOST:PORT[,...][/CLUSTER] from metadata.etcd.endpoints (which --metadata fills), with cluster.name as
    the cluster when it is set explicitly and the URL names none."""
    endpoints = config.get_list("metadata.etcd.endpoints")
    url = "etcd://" + ",".join(endpoints)
    if "/" not in ",".join(endpoints) and "cluster.name" in config.explicit:
        url += "/" + config.get_str("cluster.name")
    return url


class ClusterBroker(Broker):
    def __init__(self, config: BrokerConfig) -> None:
        super().__init__(config)
        self.metadata_url = metadata_url(config)
        # The etcd client (httpx) logs every request at INFO: keepalives alone would drown the broker's log.
        logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.getLogger().level))
        self.session_timeout_s = max(1, -(-config.get_int("broker.session.timeout.ms") // 1000))
        self.topics: ClusterTopics = ClusterTopics()
        self.replicas = ReplicaManager(self)
        self.member: ClusterMember | None = None
        # Woken when a high watermark moves or roles change: acks=-1 waiters re-check.
        self._replication_progress = trio.Event()
        self._producer_id_next = 0
        self._producer_id_end = 0
        self._producer_id_lock = trio.Lock()
        self._nursery: trio.Nursery | None = None
        self._groups_started = False
        self._resigning_offsets: set[int] = set()
        # Start every high watermark at its checkpoint (or the log start): see replication/checkpoint.py.
        checkpoint = read_checkpoint(self.data_dir)
        for topic, partition in self.logs.partitions():
            plog = self.logs.get(topic, partition)
            if plog is not None:
                hw = checkpoint.get((topic, partition), plog.log_start_offset)
                plog.high_watermark = max(plog.log_start_offset, min(hw, plog.log_end_offset))

    # ---- cluster view --------------------------------------------------------------------------------------------

    @property
    def snapshot(self) -> ClusterSnapshot:
        return self.replicas.snapshot

    def live_brokers(self) -> list[BrokerEndpoint]:
        brokers = self.snapshot.brokers
        if not brokers:
            return super().live_brokers()
        return [BrokerEndpoint(b.node_id, b.host, b.port, b.rack) for _, b in sorted(brokers.items())]

    def controller_id(self) -> int:
        controller = self.snapshot.controller
        return controller.node_id if controller is not None else -1

    def metadata_controller_id(self) -> int:
        """Every node can serve admin requests (they go through etcd), so Metadata names the answering node, as
        KRaft brokers name a live broker rather than the controller. Naming the real controller would send admin
        clients to a node that may have just died, and librdkafka waits for its next metadata refresh to move on.
        DescribeCluster still names the real controller."""
        return self.node_id

    def partition_state(self, topic: str, partition: int) -> PartitionState:
        snapshot = self.snapshot
        state = snapshot.partition(topic, partition)
        if state is None:
            return PartitionState(-1, -1, [], [], [])
        # A leader that is not a live broker cannot be reached: report none, so clients wait and ask again
        # (Kafka answers LEADER_NOT_AVAILABLE in that case too).
        leader = state.leader if state.leader in snapshot.brokers else -1
        offline = [r for r in state.replicas if r not in snapshot.brokers]
        return PartitionState(leader, state.leader_epoch, list(state.replicas), list(state.isr), offline)

    def leader_epoch(self, topic: str, partition: int) -> int:
        state = self.snapshot.partition(topic, partition)
        return state.leader_epoch if state is not None else -1

    def is_leader(self, topic: str, partition: int) -> bool:
        return (topic, partition) in self.replicas.leaders

    def partition_log(self, topic: str, partition: int) -> PartitionLog | None:
        """As in a single node, except that a `__consumer_offsets` partition's log is only handed out while we lead
        it: the group coordinator appends to what this returns, and must never write into a follower's log (a
        coordinator write still in flight when leadership moves then fails, and its client retries)."""
        if topic == OFFSETS_TOPIC and not self.is_leader(topic, partition):
            return None
        return self.logs.get(topic, partition)

    def log_config_for(self, record: TopicRecord) -> LogConfig:
        return LogConfig.from_properties(record.configs, self.default_log_config)

    def _not_here(self, topic: str) -> ErrorCode:
        """A partition with no local log: not ours if the topic exists (Kafka's NOT_LEADER_OR_FOLLOWER)."""
        if topic in self.snapshot.topics:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    # ---- topics --------------------------------------------------------------------------------------------------

    async def create_topic_async(
        self, name: str, num_partitions: int, replication_factor: int, configs: dict[str, str]
    ) -> TopicMetadata:
        self.check_new_topic(name, num_partitions, replication_factor, configs)
        store = self._store()
        try:
            record = await store.create_topic(name, num_partitions, replication_factor, configs)
        except MetadataError as exc:
            raise TopicError(exc.error_code, str(exc)) from None
        except EtcdError as exc:
            raise TopicError(ErrorCode.REQUEST_TIMED_OUT, f"cluster metadata unavailable: {exc}") from None
        log.info("created topic %s with %d partitions, replication factor %d", name, num_partitions,
                 replication_factor)  # fmt: skip
        # Answer once the controller has placed the partitions and this node knows it, so that the client's next
        # Metadata request (to any node that has caught up) shows leaders.
        await self.replicas.wait_applied(
            lambda s: s.topic_complete(name) and s.topics[name].topic_id == record.topic_id,
            TOPIC_CHANGE_WAIT_S,
        )
        topic = self.topics.get(name)
        if topic is not None and topic.topic_id == record.topic_id:
            return topic
        return TopicMetadata(name, record.topic_id, num_partitions, replication_factor, dict(configs))

    async def delete_topic_async(self, name: str) -> None:
        store = self._store()
        try:
            await store.delete_topic(name)
        except MetadataError as exc:
            raise TopicError(exc.error_code, str(exc)) from None
        except EtcdError as exc:
            raise TopicError(ErrorCode.REQUEST_TIMED_OUT, f"cluster metadata unavailable: {exc}") from None
        log.info("deleted topic %s", name)
        await self.replicas.wait_applied(lambda s: name not in s.topics, TOPIC_CHANGE_WAIT_S)

    def _store(self) -> MetadataStore:
        member = self.member
        if member is None:
            raise TopicError(
                ErrorCode.REQUEST_TIMED_OUT, "this broker is not connected to the cluster metadata"
            )
        return member.store

    # ---- produce -------------------------------------------------------------------------------------------------

    def append_records(self, topic: str, partition: int, batch: bytearray, acks: int, now: int) -> AppendInfo:
        plog = self.logs.get(topic, partition)
        if plog is None:
            raise AppendError(self._not_here(topic))
        leader = self.replicas.leaders.get((topic, partition))
        if leader is None:
            raise AppendError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        if acks == -1:
            min_isr = self._min_insync_replicas(topic)
            if len(leader.isr) < min_isr:
                raise AppendError(
                    ErrorCode.NOT_ENOUGH_REPLICAS,
                    f"the in-sync replicas of {topic}-{partition} ({len(leader.isr)}) are fewer than "
                    f"min.insync.replicas ({min_isr})",
                )
        info = super().append_records(topic, partition, batch, acks, now)
        if info.duplicate:
            # An idempotent producer's retry of a batch already in the log: for acks=-1 it must still wait until
            # that batch is replicated (its first attempt may have timed out before it was), so it is answered
            # like a fresh append (the produce handler then waits on its offsets).
            return dataclasses.replace(info, duplicate=False)
        return info

    def _min_insync_replicas(self, topic: str) -> int:
        metadata = self.topics.get(topic)
        if metadata is None:
            return self.default_log_config.min_insync_replicas
        return self.topic_log_config(metadata).min_insync_replicas

    def on_appended(self, topic: str, partition: int, plog: PartitionLog) -> None:
        """The high watermark moves only as far as the ISR has the records; the append itself wakes followers'
        long-poll fetches."""
        self.replicas.maybe_advance_high_watermark((topic, partition), plog)
        self.notify_data_arrived()

    async def wait_acks_all(self, topic: str, partition: int, last_offset: int, timeout_ms: int) -> None:
        plog = self.logs.get(topic, partition)
        leader = self.replicas.leaders.get((topic, partition))
        if plog is None or leader is None:
            raise AppendError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        fsync_error: list[AppendError] = []
        fsynced = trio.Event()

        async def fsync() -> None:
            try:
                await Broker.wait_acks_all(self, topic, partition, last_offset, timeout_ms)
            except AppendError as exc:
                fsync_error.append(exc)
            finally:
                fsynced.set()

        async with trio.open_nursery() as nursery:
            # The leader's own fsync (group commit) runs while the followers fetch.
            nursery.start_soon(fsync)
            error = await self._wait_replicated(plog, leader, topic, partition, last_offset, timeout_ms)
            if error is None:
                await fsynced.wait()
            nursery.cancel_scope.cancel()
        if error is not None:
            raise error
        if fsync_error:
            raise fsync_error[0]
        # Kafka's NOT_ENOUGH_REPLICAS_AFTER_APPEND: committed, but by fewer replicas than the topic asks for.
        min_isr = self._min_insync_replicas(topic)
        if len(leader.isr) < min_isr:
            raise AppendError(
                ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                f"written, but the ISR of {topic}-{partition} shrank below min.insync.replicas ({min_isr})",
            )

    async def _wait_replicated(
        self,
        plog: PartitionLog,
        leader: PartitionLeader,
        topic: str,
        partition: int,
        last_offset: int,
        timeout_ms: int,
    ) -> AppendError | None:
        """Wait until the high watermark passes last_offset while we still lead at the same epoch.

        Leadership is checked first: once deposed, this log's high watermark is the new leader's, and the offset it
        passes may hold another record (ours truncated away) by then.
        """
        truncations = plog.truncations
        with trio.move_on_after(max(timeout_ms, 0) / 1000):
            while True:
                if (
                    self.replicas.leaders.get((topic, partition)) is not leader
                    or plog.truncations != truncations
                ):
                    return AppendError(
                        ErrorCode.NOT_LEADER_OR_FOLLOWER,
                        f"leadership of {topic}-{partition} changed before the write was replicated",
                    )
                if plog.high_watermark > last_offset:
                    return None
                await self._replication_progress.wait()
        return AppendError(
            ErrorCode.REQUEST_TIMED_OUT,
            f"not replicated to the in-sync replicas of {topic}-{partition} within {timeout_ms} ms",
        )

    # ---- fetch and offsets -----------------------------------------------------------------------------------------

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
            return FetchResult(self._not_here(topic), -1, -1, b"")
        # Kafka checks the epoch before the role: a client (or follower) with an older epoch is fenced whatever we
        # are now, and one with a newer epoch is ahead of our metadata.
        epoch_error = self.check_leader_epoch(topic, partition, current_leader_epoch)
        if epoch_error:
            return FetchResult(epoch_error, -1, -1, b"")
        if not self.is_leader(topic, partition):
            return FetchResult(ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, -1, b"")
        if plog.offline:
            return FetchResult(ErrorCode.KAFKA_STORAGE_ERROR, -1, -1, b"")
        start = plog.log_start_offset
        if fetch_offset < start or fetch_offset > plog.log_end_offset:
            return FetchResult(ErrorCode.OFFSET_OUT_OF_RANGE, plog.high_watermark, start, b"")
        if replica_id >= 0:
            code = self.replicas.record_follower_fetch(
                (topic, partition), plog, replica_id, fetch_offset, now
            )
            if code:
                return FetchResult(code, -1, -1, b"")
            limit = plog.log_end_offset
        else:
            # Consumers read below the high watermark only. Above it (a new leader's high watermark can lag the
            # old one's) they get nothing yet, not an error, as in Kafka.
            limit = plog.high_watermark
        hw = plog.high_watermark
        if fetch_offset >= limit or (max_bytes <= 0 and not min_one_batch):
            return FetchResult(ErrorCode.NONE, hw, start, b"")
        try:
            records = plog.read(fetch_offset, max_bytes, limit)
        except LogError as exc:
            return FetchResult(exc.code, hw, start, b"")
        return FetchResult(ErrorCode.NONE, hw, start, records)

    def list_offset(
        self, topic: str, partition: int, timestamp: int, current_leader_epoch: int, replica_id: int
    ) -> tuple[int, int, int]:
        if self.logs.get(topic, partition) is None:
            raise OffsetLookupError(self._not_here(topic))
        epoch_error = self.check_leader_epoch(topic, partition, current_leader_epoch)
        if epoch_error:
            raise OffsetLookupError(epoch_error)
        return super().list_offset(topic, partition, timestamp, current_leader_epoch, replica_id)

    # ---- producer ids ----------------------------------------------------------------------------------------------

    async def allocate_producer_id(self) -> int:
        async with self._producer_id_lock:
            if self._producer_id_next >= self._producer_id_end:
                start = await self._reserve_producer_id_block()
                self._producer_id_next, self._producer_id_end = start, start + PRODUCER_ID_BLOCK_SIZE
            pid = self._producer_id_next
            self._producer_id_next += 1
            return pid

    async def _reserve_producer_id_block(self) -> int:
        """Take the next block from the counter in etcd (compare-and-swap, so two nodes never get one block)."""
        store = self._store()
        key = store.keys.root + b"producer_id_block"
        while True:
            kv = await store.client.get(key)
            start = int(kv.value) if kv is not None else 0
            compare = mod_revision_is(key, kv.mod_revision) if kv is not None else key_absent(key)
            result = await store.client.txn(
                [compare], [Put(key, str(start + PRODUCER_ID_BLOCK_SIZE).encode())]
            )
            if result.succeeded:
                log.info("reserved producer ids %d-%d", start, start + PRODUCER_ID_BLOCK_SIZE - 1)
                return start

    # ---- waking waiters --------------------------------------------------------------------------------------------

    def notify_high_watermark(self) -> None:
        """A high watermark moved: consumers' long polls and acks=-1 waiters look again."""
        self.notify_data_arrived()
        self.notify_replication_changed()

    def notify_replication_changed(self) -> None:
        self._replication_progress.set()
        self._replication_progress = trio.Event()

    # ---- lifecycle -------------------------------------------------------------------------------------------------

    async def start_services(self, nursery: trio.Nursery) -> None:
        """Join the cluster before the listener opens, so that the first client already sees this node's metadata
        and roles; the group coordinator starts in the background (see _start_groups)."""
        self._nursery = nursery
        await nursery.start(self._cluster_loop)
        nursery.start_soon(self._start_groups, nursery)

    async def _cluster_loop(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Be a cluster member; when the registration is lost (etcd unreachable for a whole session timeout, or the
        lease lapsed), give up every role at once and join again as a new incarnation."""
        host = self.advertised.host or "127.0.0.1"
        port = self.advertised.port
        if port == 0:
            raise ConfigError(
                "a cluster node needs a fixed listener port: other nodes and clients connect to it"
            )
        started = False
        while True:
            try:
                async with trio.open_nursery() as nursery:
                    member: ClusterMember = await nursery.start(
                        partial(
                            run_cluster_member,
                            self.metadata_url,
                            self.node_id,
                            host,
                            port,
                            session_timeout=self.session_timeout_s,
                        )
                    )
                    member.controller.unclean_leader_election_default = self.config.get_bool(
                        "unclean.leader.election.enable"
                    )
                    await self._adopt_cluster_id(member)
                    self.member = member
                    await nursery.start(self.replicas.run, member)
                    if not started:
                        started = True
                        task_status.started()
            except* (LeaseExpired, EtcdError) as group:
                log.error("lost the cluster registration (%r); joining again", _first_leaf(group))
            finally:
                self.member = None
                self.replicas.stop_all()
            await trio.sleep(REJOIN_BACKOFF_S)

    async def _adopt_cluster_id(self, member: ClusterMember) -> None:
        """One cluster id for every node: the first node to start writes its own to etcd, the others take it."""
        store = member.store
        key = store.keys.root + b"cluster_id"
        result = await store.client.txn([key_absent(key)], [Put(key, self.cluster_id.encode())], [Get(key)])
        if result.succeeded:
            return
        current = result.responses[0]
        assert isinstance(current, RangeResult)
        if current.kvs and current.kvs[0].value.decode() != self.cluster_id:
            self.cluster_id = current.kvs[0].value.decode()
            write_file_atomically(
                self.data_dir / "meta.properties",
                f"version=1\ncluster.id={self.cluster_id}\nnode.id={self.node_id}\n".encode(),
            )
            log.info("cluster id is %s", self.cluster_id)

    # ---- the group coordinator -------------------------------------------------------------------------------------

    async def _start_groups(self, nursery: trio.Nursery) -> None:
        """Start the group coordinator once `__consumer_offsets` exists, or once enough brokers are live to create
        it with offsets.topic.replication.factor replicas: a cluster whose nodes start one by one must not create
        it on the first node alone. Until then FindCoordinator answers COORDINATOR_NOT_AVAILABLE, as in Kafka."""
        wanted = self.config.get_int("offsets.topic.replication.factor")
        while True:
            await self.replicas.wait_applied(
                lambda s: OFFSETS_TOPIC in s.topics or len(s.brokers) >= wanted, math.inf
            )
            try:
                await self.groups.start(nursery)
                break
            except TopicError as exc:
                # Another node created it first and our metadata has not caught up yet, or etcd is unavailable.
                log.info("group coordinator not started yet: %s", exc.message)
                await trio.sleep(REJOIN_BACKOFF_S)
        self._groups_started = True
        self.sync_offsets_leadership()

    def sync_offsets_leadership(self) -> None:
        """Coordinate exactly the `__consumer_offsets` partitions we lead: load a partition as soon as we lead it,
        unload it (asynchronously: parked requests get NOT_COORDINATOR) once we no longer do."""
        if not self._groups_started or self.member is None:
            # Not a cluster member right now (shutting down, or rejoining after the registration lapsed): the
            # next applied snapshot settles ownership.
            return
        topic = self.topics.get(OFFSETS_TOPIC)
        if topic is None:
            return
        for partition in range(topic.num_partitions):
            leads = self.is_leader(OFFSETS_TOPIC, partition)
            owns = self.coordinator_owns(partition)
            if leads and not owns and partition not in self._resigning_offsets:
                self.on_become_offsets_leader(partition)
            elif (
                owns and not leads and partition not in self._resigning_offsets and self._nursery is not None
            ):
                self._resigning_offsets.add(partition)
                self._nursery.start_soon(self._resign_offsets, partition)

    def on_topics_deleted(self, names: list[str]) -> None:
        """Every node learns of a deletion from etcd; the coordinator forgets the topics' committed offsets."""
        if names and self._groups_started:
            self.groups.on_topics_deleted(names)

    async def _resign_offsets(self, partition: int) -> None:
        try:
            await self.on_resign_offsets_leader(partition)
        finally:
            self._resigning_offsets.discard(partition)
            # Leadership may have come back while we unloaded.
            self.sync_offsets_leadership()

    def close(self) -> None:
        try:
            write_checkpoint(self.data_dir, self.replicas.high_watermarks())
        except OSError as exc:
            log.error("cannot write the high watermark checkpoint: %s", exc)
        super().close()


def _first_leaf(exc: BaseException) -> BaseException:
    """The first exception inside (possibly nested) exception groups, for a log line that says what happened."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
