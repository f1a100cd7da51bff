"""The replica manager: every partition this node holds, its role in each, and the requests that read or write them.

The same class for a single node and a cluster (Kafka's ReplicaManager). It owns one `Partition` per topic-partition
this node replicates and applies each metadata image (`apply_metadata`, a publisher of the metadata view):

- **leader**, when the image says so *and* the state was written after this incarnation registered (a restarted
  node does not resume an old leadership: the controller elects it again, with a new epoch). A single node's image
  makes it the leader of everything, alone in the ISR;
- **follower** of the image's leader at its epoch, when that leader is a live broker: the partition goes to the
  fetcher of that leader (kbroker/replication/fetcher.py), which truncates (OffsetForLeaderEpoch) before it fetches;
- **idle** otherwise (no live leader, a stale leadership of ours, or this node is not a registered member right now).

Applying an image is one synchronous function, so a request sees the roles before it or after it, never half of
each. Requests (produce, fetch, list offsets, offset for leader epoch) find their Partition here ("exists": else
UNKNOWN_TOPIC_OR_PARTITION, or NOT_LEADER_OR_FOLLOWER when the topic exists but this node holds no replica), then
the partition's one check chain decides. Produces with acks=-1 and fetches waiting for data park in the purgatory,
keyed by partition.

Dynamic broker configs (in the image) change the topic config defaults of every log and the replication throttles
(kbroker/replication/throttle.py) as each image is applied. A replica this node no longer holds (a reassignment
moved it away) has its log deleted, as Kafka's StopReplica does. DeleteRecords moves a leader's log start offset and
waits until every live replica has moved its own (the low watermark), as Kafka's delayed DeleteRecords does.

The trio parts: a fetcher task per leader broker, a task proposing ISR changes (AlterPartition through the metadata
view), a task checkpointing high watermarks, and the retention task.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import trio

from kbroker.clock import Clock, SteadyClock
from kbroker.common import KafkaError, TopicPartition
from kbroker.log.config import LogConfig
from kbroker.log.flusher import GroupCommitter
from kbroker.log.log_manager import LogManager
from kbroker.log.partition_log import AppendInfo, InvalidRecords, PartitionLog
from kbroker.log.partition_metadata import write_partition_metadata
from kbroker.log.producer_state import ProducerStateEntry, VerificationGuard
from kbroker.log.segment import record_count
from kbroker.metadata.api import MetadataView
from kbroker.metadata.image import EMPTY_IMAGE, NO_LEADER, MetadataImage, PartitionState, TopicMetadata
from kbroker.replication.checkpoint import read_checkpoint, write_checkpoint
from kbroker.replication.client import Connector, plaintext_connector
from kbroker.replication.fetcher import FollowState, ReplicaFetcher
from kbroker.replication.partition import READ_UNCOMMITTED, Partition, PartitionRead
from kbroker.replication.purgatory import Purgatory
from kbroker.replication.throttle import (
    FOLLOWER_THROTTLED_REPLICAS,
    LEADER_THROTTLED_REPLICAS,
    UNLIMITED,
    ReplicationQuota,
    throttled,
)
from kbroker.stats import ReplicationStats
from protocol.errors import ErrorCode

log = logging.getLogger(__name__)

CHECKPOINT_INTERVAL_S = 5.0  # Kafka's replica.high.watermark.checkpoint.interval.ms
ISR_RETRY_MS = 1000
ALTER_PARTITION_CONCURRENCY = 16


@dataclass(frozen=True, slots=True)
class ReplicationSettings:
    """The broker settings replication reads (Kafka's names, dots as underscores)."""

    replica_lag_time_max_ms: int = 30_000
    replica_fetch_wait_max_ms: int = 500
    replica_fetch_max_bytes: int = 8 * 1024 * 1024
    log_retention_check_interval_ms: int = 300_000
    transaction_partition_verification_enable: bool = True
    log_flush_interval_ms: int = 1000
    log_flush_acks_all_enable: bool = True
    """acks=-1 is answered only once every in-sync replica has fsynced the batch (false: once they have written it,
    as Kafka does by default; the flush loop fsyncs it later)."""


@dataclass(frozen=True, slots=True)
class DynamicSettings:
    """What the dynamic broker configs of this node change in replication: the defaults of every topic config and
    the replication throttle rates (bytes per second)."""

    log_defaults: LogConfig
    leader_throttled_rate: int = UNLIMITED
    follower_throttled_rate: int = UNLIMITED


@dataclass(frozen=True, slots=True)
class LogDirPartition:
    """One partition log in DescribeLogDirs."""

    tp: TopicPartition
    size: int
    offset_lag: int


@dataclass(slots=True)
class ProduceResult:
    """One partition of a produce: appended (`info`) or refused (`error`); `error` is also where an acks=-1 wait
    puts its verdict."""

    tp: TopicPartition
    info: AppendInfo | None = None
    error: KafkaError | None = None
    partition: Partition | None = None
    leader_epoch: int = -1
    truncations: int = 0
    log_start_offset: int = -1
    """Set with InvalidRecords, as Kafka reports it then (KIP-467)."""

    @property
    def invalid_records(self) -> bool:
        return isinstance(self.error, InvalidRecords)


@dataclass(frozen=True, slots=True)
class FetchPartition:
    tp: TopicPartition
    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1
    log_start_offset: int = -1
    """A follower's own log start offset (DeleteRecords waits for every replica's)."""


@dataclass(frozen=True, slots=True)
class FetchParams:
    replica_id: int
    """A follower's node id, or -1 for a consumer."""
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    partitions: Sequence[FetchPartition] = field(default_factory=tuple)
    isolation_level: int = READ_UNCOMMITTED
    """read_committed (1): consumers read up to the last stable offset."""


class FetchPlan(Protocol):
    """What an incremental fetch reads at one moment (its caller keeps what else it needs alongside)."""

    @property
    def params(self) -> FetchParams: ...


PlanT = TypeVar("PlanT", bound=FetchPlan)


class SessionChanges(Protocol):
    """A fetch session as its long poll sees it (kbroker/replication/fetch_session.py FetchSession)."""

    @property
    def changes(self) -> int:
        """Wakes of the session's partitions so far."""
        ...

    async def wait_changed(self) -> None: ...


@dataclass
class _FetcherTask:
    fetcher: ReplicaFetcher
    scope: trio.CancelScope


class ReplicaManager:
    def __init__(
        self,
        *,
        node_id: int,
        logs: LogManager,
        committer: GroupCommitter,
        metadata: MetadataView,
        clock: Clock,
        default_log_config: LogConfig,
        settings: ReplicationSettings,
        purgatory: Purgatory | None = None,
        connect: Connector = plaintext_connector,
        dynamic_settings: Callable[[Mapping[str, str]], DynamicSettings] | None = None,
    ) -> None:
        self.node_id = node_id
        self._connect = connect
        self.logs = logs
        self.committer = committer
        self.metadata = metadata
        self.clock = clock
        self.lag_clock = SteadyClock(clock)
        """For ISR lag and follower fetch times (durations): a step of the system clock must not move them."""
        self.default_log_config = default_log_config
        self.settings = settings
        self.purgatory = purgatory or Purgatory()
        self.follower_fetch_ms: dict[int, int] = {}
        """Each follower node's latest fetch (lag_clock): a partition its fetch session has settled is not recorded
        per fetch, and its leader needs this time when it appends (PartitionLeader.record_append)."""
        self.stats = ReplicationStats()
        """Traffic per topic, ISR changes and parked requests, for metrics (bumped per batch, never per record)."""
        self._dynamic_settings = dynamic_settings or (lambda _: DynamicSettings(default_log_config))
        self._dynamic: Mapping[str, str] = {}
        self.leader_quota = ReplicationQuota()
        """Bytes this node sends, as a leader, to followers of throttled replicas."""
        self.follower_quota = ReplicationQuota()
        """Bytes this node fetches, as a follower, for throttled replicas."""
        self.image: MetadataImage = EMPTY_IMAGE
        """The image the current roles were computed from."""
        self.partitions: dict[TopicPartition, Partition] = {}
        self._follows: dict[TopicPartition, FollowState] = {}
        self._changed_follows: set[TopicPartition] = set()
        """Partitions whose entry in `_follows` changed since the fetchers were last given theirs."""
        self._retry_roles: set[TopicPartition] = set()
        self._unflushed: set[PartitionLog] = set()
        """Logs appended to with acks 0 or 1 since the flush loop last looked (log.flush.interval.ms)."""
        """Partitions whose role the last image could not give them (their log did not open, their leader epoch
        was not recorded): the next image tries again."""
        self._fetchers: dict[int, _FetcherTask] = {}
        self._nursery: trio.Nursery | None = None
        self._isr_wakeup = trio.Event()
        self._isr_retry_at: dict[TopicPartition, int] = {}
        self._isr_refused: dict[TopicPartition, tuple[int, ...]] = {}
        self._stray_reported: set[TopicPartition] = set()
        # The partitions this node leads that have followers: the only ones the ISR task looks at, so partitions
        # without followers (every partition of a single node) cost it nothing.
        self._replicated_leaders: dict[TopicPartition, Partition] = {}
        # Every high watermark starts at its checkpoint (or the log start): see replication/checkpoint.py.
        checkpoint = read_checkpoint(logs.data_dir)
        for tp in logs.partitions():
            plog = logs.get(tp)
            if plog is not None:
                hw = checkpoint.get(tp, plog.log_start_offset)
                plog.high_watermark = max(plog.log_start_offset, min(hw, plog.log_end_offset))

    # ---- the tasks -------------------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The purgatory's expiration reaper, the fetchers, the ISR task, the high watermark checkpoints and
        retention, until cancelled; then every role is given up and the high watermarks are checkpointed."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self.purgatory.run_expiration_reaper)
                nursery.start_soon(self._isr_loop)
                nursery.start_soon(self._checkpoint_loop)
                nursery.start_soon(self._retention_loop)
                nursery.start_soon(self._flush_loop)
                self._sync_fetchers()
                task_status.started()
        finally:
            self._nursery = None
            self._stop_fetchers()
            self.checkpoint_high_watermarks()

    # ---- applying metadata (synchronous) ---------------------------------------------------------------------

    def apply_metadata(self, image: MetadataImage) -> None:
        """Take the roles `image` gives this node. The work is proportional to what changed since the last image:
        images share the partition states of what did not change (kbroker/cluster/store.py), and one that leaves
        the brokers and the config defaults alone is applied to the changed partitions only (a rolling restart of
        a 10,000-partition cluster publishes thousands of images, each moving one ISR)."""
        previous, self.image = self.image, image
        now = self.lag_clock.now_ms()
        self._drop_deleted_topics(previous, image)
        changes: list[str] = []
        defaults_changed = self._apply_dynamic_configs(image)
        member = image.broker_epoch >= 0 and self.node_id in image.brokers
        everything = (
            defaults_changed
            or previous is EMPTY_IMAGE
            or image.broker_epoch != previous.broker_epoch
            or image.brokers != previous.brokers
        )
        # Partitions whose role could not be taken (a log that did not open, a leader epoch not recorded): every
        # image tries them again.
        retry, self._retry_roles = self._retry_roles, set()
        retry_topics = {tp.topic for tp in retry}
        for name, topic in image.topics.items():
            states = image.partitions.get(name, {})
            previous_states = previous.partitions.get(name)
            topic_changed = defaults_changed or previous.topics.get(name) != topic
            if (
                not everything
                and not topic_changed
                and previous_states is states
                and name not in retry_topics
            ):
                continue  # nothing of this topic changed
            config = self._log_config(topic) if topic_changed else None
            unchanged = {} if everything or topic_changed or previous_states is None else previous_states
            for index, state in states.items():
                if unchanged.get(index) is state and (not retry or TopicPartition(name, index) not in retry):
                    continue
                tp = TopicPartition(name, index)
                if self.node_id not in state.replicas:
                    self._make_idle(tp, None, changes)
                    if tp in self.partitions or self.logs.get(tp) is not None:
                        # A reassignment moved this replica away (or did so while this node was down).
                        self._delete_log(tp, "this broker is no longer one of its replicas")
                    continue
                partition = self.partitions.get(tp)
                if partition is None or partition.topic_id != topic.topic_id:
                    partition = self._open_partition(tp, topic, config)
                    if partition is None:
                        self._retry_roles.add(tp)
                        continue
                elif config is not None:
                    partition.log.config = config
                    partition.log.configured = True
                if member and image.is_leader(name, index, self.node_id, image.broker_epoch):
                    self._make_leader(partition, state, now, changes)
                elif (
                    member and state.leader not in (NO_LEADER, self.node_id) and state.leader in image.brokers
                ):
                    self._make_follower(partition, state, changes)
                    self._set_throttled(
                        self._follows[tp],
                        self.node_id not in state.isr
                        and throttled(topic.configs, FOLLOWER_THROTTLED_REPLICAS, index, self.node_id),
                    )
                else:
                    self._make_idle(tp, state, changes)
        if everything:
            held: Iterable[TopicPartition] = list(self.partitions)
        else:
            # (Partitions only come and go with their topic's states: look at the topics whose states changed.)
            held = [
                TopicPartition(name, index)
                for name, states in previous.partitions.items()
                if image.partitions.get(name) is not states
                for index in states
            ]
        for tp in held:
            if tp in self.partitions and image.partition(tp.topic, tp.partition) is None:
                self._make_idle(tp, None, changes)
        self._report_stray_logs(image)
        changed_follows, self._changed_follows = self._changed_follows, set()
        self._sync_fetchers(None if everything else changed_follows)
        if changes:
            log.info("applied metadata revision %d: %s", image.revision, "; ".join(_summarize(changes)))

    def _apply_dynamic_configs(self, image: MetadataImage) -> bool:
        """Take this node's dynamic broker configs from the image; whether the topic config defaults changed."""
        dynamic = image.dynamic_broker_configs(self.node_id)
        if dynamic == self._dynamic:
            return False
        try:
            settings = self._dynamic_settings(dynamic)
        except KafkaError as exc:
            # Checked before they were stored; one that slipped through must not stop the broker applying images.
            log.error("ignoring dynamic broker configs %s: %s", dynamic, exc)
            return False
        self._dynamic = dynamic
        self.leader_quota.set_rate(settings.leader_throttled_rate)
        self.follower_quota.set_rate(settings.follower_throttled_rate)
        if settings.log_defaults == self.default_log_config:
            return False
        self.default_log_config = settings.log_defaults
        log.info("topic config defaults changed by dynamic broker configs %s", dynamic)
        return True

    def _unfollow(self, tp: TopicPartition) -> None:
        if self._follows.pop(tp, None) is not None:
            self._changed_follows.add(tp)

    def _make_leader(self, partition: Partition, state: PartitionState, now: int, changes: list[str]) -> None:
        self._unfollow(partition.tp)
        if len(state.replicas) > 1:
            self._replicated_leaders[partition.tp] = partition
        else:
            self._replicated_leaders.pop(partition.tp, None)
        # An ISR change within this leadership (the controller dropping a dead follower), counted for metrics.
        before = partition.isr if partition.leader_epoch == state.leader_epoch else None
        try:
            if partition.make_leader(state, now):
                changes.append(f"leading {partition.tp} at epoch {state.leader_epoch}")
                self._isr_retry_at.pop(partition.tp, None)
                log.debug(
                    "leading %s at epoch %d (log end %d, high watermark %d, ISR %s)",
                    partition.tp,
                    state.leader_epoch,
                    partition.log.log_end_offset,
                    partition.high_watermark,
                    list(state.isr),
                )
            elif before is not None:
                self._count_isr_change(before, partition.isr)
        except OSError as exc:
            log.error("cannot record leader epoch %d of %s: %s", state.leader_epoch, partition.tp, exc)
            partition.make_idle(state)
            self._replicated_leaders.pop(partition.tp, None)
            self._retry_roles.add(partition.tp)

    def _count_isr_change(self, before: tuple[int, ...], after: tuple[int, ...]) -> None:
        """Kafka's IsrShrinks / IsrExpands of the partitions this node leads."""
        if set(after) < set(before):
            self.stats.isr_shrinks += 1
        elif set(after) > set(before):
            self.stats.isr_expands += 1

    def _make_follower(self, partition: Partition, state: PartitionState, changes: list[str]) -> None:
        tp = partition.tp
        self._replicated_leaders.pop(tp, None)
        if partition.make_follower(state):
            changes.append(f"following {tp} from broker {state.leader} at epoch {state.leader_epoch}")
        current = self._follows.get(tp)
        if current is None or (current.leader_id, current.leader_epoch) != (state.leader, state.leader_epoch):
            self._follows[tp] = FollowState(tp, state.leader, state.leader_epoch)
            self._changed_follows.add(tp)

    def _set_throttled(self, state: FollowState, value: bool) -> None:
        if state.throttled == value:
            return
        task = self._fetchers.get(state.leader_id)
        if task is not None:
            task.fetcher.set_throttled(state, value)  # its fetch size is computed again
        else:
            state.throttled = value

    def _make_idle(self, tp: TopicPartition, state: PartitionState | None, changes: list[str]) -> None:
        self._unfollow(tp)
        self._replicated_leaders.pop(tp, None)
        partition = self.partitions.get(tp)
        if partition is not None and partition.make_idle(state):
            changes.append(f"no longer leading {tp}")

    def _drop_deleted_topics(self, previous: MetadataImage, image: MetadataImage) -> None:
        """Delete the logs of topics the new image no longer has (or has re-created with another id)."""
        gone = {
            name
            for name, topic in previous.topics.items()
            if name not in image.topics or image.topics[name].topic_id != topic.topic_id
        }
        if not gone:
            return
        for tp in [tp for tp in self.logs.partitions() if tp.topic in gone]:
            self._delete_log(tp, "its topic was deleted")

    def _report_stray_logs(self, image: MetadataImage) -> None:
        """Logs of topics the metadata never named: kept (etcd may have been wiped by mistake), reported once."""
        if len(self.partitions) == len(self.logs):
            return
        for tp in self.logs.partitions():
            if tp not in self.partitions and tp.topic not in image.topics and tp not in self._stray_reported:
                log.warning("keeping %s, a log of a topic the cluster does not have", tp)
                self._stray_reported.add(tp)

    def _log_config(self, topic: TopicMetadata) -> LogConfig:
        return LogConfig.from_properties(topic.configs, self.default_log_config)

    def _open_partition(
        self, tp: TopicPartition, topic: TopicMetadata, config: LogConfig | None = None
    ) -> Partition | None:
        """The Partition of a topic-partition we replicate, its log opened or created. A log left from an earlier
        topic of the same name (deleted and re-created while we were away) is deleted first: partition.metadata
        names the topic id each log belongs to, as in Kafka. `config`: the topic's log config, if the caller has it
        (parsed once per topic, not per partition)."""
        if config is None:
            config = self._log_config(topic)
        try:
            plog = self.logs.get(tp)
            if plog is not None:
                known = plog.topic_id
                if known is None:
                    write_partition_metadata(plog.directory, topic.topic_id)
                    plog.topic_id = topic.topic_id
                elif known != topic.topic_id:
                    self._delete_log(tp, "it belongs to an earlier topic of the same name")
                    plog = None
                if plog is not None:
                    plog.config = config
                    plog.configured = True
            if plog is None:
                plog = self.logs.create(tp, config, self.clock.now_ms())
                write_partition_metadata(plog.directory, topic.topic_id)
                plog.topic_id = topic.topic_id
        except (OSError, KafkaError) as exc:
            log.error("cannot open the log of %s: %s", tp, exc)
            return None
        partition = Partition(
            tp,
            topic.topic_id,
            plog,
            node_id=self.node_id,
            on_progress=self.purgatory.wake,
            on_append=self.purgatory.wake_appended,
            follower_fetch_ms=self.follower_fetch_ms,
            fsync_before_acks=self.settings.log_flush_acks_all_enable,
        )
        self.partitions[tp] = partition
        return partition

    def _delete_log(self, tp: TopicPartition, why: str) -> None:
        self._unfollow(tp)
        self._replicated_leaders.pop(tp, None)
        partition = self.partitions.pop(tp, None)
        if partition is not None:
            partition.make_idle(None)
            self.purgatory.wake(tp)  # its fetches now answer UNKNOWN_TOPIC_OR_PARTITION
        try:
            if self.logs.delete(tp):
                log.info("deleted the log of %s: %s", tp, why)
        except OSError as exc:
            log.error("cannot delete the log of %s: %s", tp, exc)

    def _sync_fetchers(self, changed: Iterable[TopicPartition] | None = None) -> None:
        """One fetcher per leader broker incarnation, holding exactly the partitions we follow from it. With
        `changed`, only those partitions' follow states changed (and no leader restarted): each goes to its fetcher,
        without a look at every partition."""
        if changed is not None and self._nursery is not None and self._leaders_unchanged():
            self._move_follows(changed)
            return
        self._changed_follows.clear()
        wanted: dict[int, dict[TopicPartition, FollowState]] = {}
        for tp, state in self._follows.items():
            wanted.setdefault(state.leader_id, {})[tp] = state
        for leader_id, running in list(self._fetchers.items()):
            registration = self.image.brokers.get(leader_id)
            # (a registration that only announces a controlled shutdown is the same leader)
            if (
                leader_id not in wanted
                or registration is None
                or registration.incarnation != running.fetcher.leader.incarnation
            ):
                running.scope.cancel()
                del self._fetchers[leader_id]
        if self._nursery is None:
            return
        for leader_id, partitions in wanted.items():
            task = self._fetchers.get(leader_id)
            if task is None:
                task = self._start_fetcher(leader_id)
            fetcher = task.fetcher
            for tp in list(fetcher.partitions):
                if partitions.get(tp) is not fetcher.partitions[tp]:
                    fetcher.remove(tp)
            for tp, state in partitions.items():
                if fetcher.partitions.get(tp) is not state:
                    fetcher.add(state)

    def _start_fetcher(self, leader_id: int) -> _FetcherTask:
        assert self._nursery is not None
        fetcher = ReplicaFetcher(
            node_id=self.node_id,
            leader=self.image.brokers[leader_id],
            partitions=self.partitions.get,
            fetch_wait_max_ms=self.settings.replica_fetch_wait_max_ms,
            fetch_max_bytes=self.settings.replica_fetch_max_bytes,
            clock=self.clock,
            connect=self._connect,
            quota=self.follower_quota,
            execute_plans=self.committer.execute_plans,
            listeners=self.purgatory,
            defer_flush=None if self.settings.log_flush_acks_all_enable else self._defer_flush,
        )
        task = _FetcherTask(fetcher, trio.CancelScope())
        self._fetchers[leader_id] = task
        self._nursery.start_soon(_run_in_scope, task)
        return task

    def _leaders_unchanged(self) -> bool:
        """Whether every running fetcher's leader is still registered as the same incarnation."""
        for leader_id, running in self._fetchers.items():
            registration = self.image.brokers.get(leader_id)
            if registration is None or registration.incarnation != running.fetcher.leader.incarnation:
                return False
        return True

    def _move_follows(self, changed: Iterable[TopicPartition]) -> None:
        emptied: set[int] = set()
        for tp in changed:
            state = self._follows.get(tp)
            for leader_id, running in self._fetchers.items():
                held = running.fetcher.partitions.get(tp)
                if held is not None and held is not state:
                    running.fetcher.remove(tp)
                    if not running.fetcher.partitions:
                        emptied.add(leader_id)
            if state is None:
                continue
            task = self._fetchers.get(state.leader_id) or self._start_fetcher(state.leader_id)
            if task.fetcher.partitions.get(tp) is not state:
                task.fetcher.add(state)
            emptied.discard(state.leader_id)
        for leader_id in emptied:
            running = self._fetchers[leader_id]
            if not running.fetcher.partitions:
                running.scope.cancel()
                del self._fetchers[leader_id]

    def _stop_fetchers(self) -> None:
        for task in self._fetchers.values():
            task.scope.cancel()
        self._fetchers.clear()

    # ---- finding a partition ---------------------------------------------------------------------------------

    def get_partition(self, tp: TopicPartition) -> Partition:
        """The "exists" step: the Partition, or KafkaError UNKNOWN_TOPIC_OR_PARTITION (no such partition) or
        NOT_LEADER_OR_FOLLOWER (it exists, but this node holds no replica of it)."""
        partition = self.partitions.get(tp)
        if partition is None:
            raise KafkaError(self._missing(tp))
        return partition

    def _missing(self, tp: TopicPartition) -> ErrorCode:
        """The error for a topic-partition with no Partition here (Kafka's getPartitionOrError)."""
        if self.image.has_partition(tp.topic, tp.partition):
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    def leader_log(self, tp: TopicPartition) -> PartitionLog | None:
        """The log of a partition this node leads now (the group coordinator loads `__consumer_offsets` from it)."""
        partition = self.partitions.get(tp)
        return partition.log if partition is not None and partition.is_leader else None

    def is_leader(self, tp: TopicPartition) -> bool:
        partition = self.partitions.get(tp)
        return partition is not None and partition.is_leader

    # ---- produce ---------------------------------------------------------------------------------------------

    def append_records(
        self,
        entries: Iterable[tuple[TopicPartition, bytes | bytearray | memoryview]],
        *,
        required_acks: int,
        now_ms: int,
        internal_topics_allowed: bool = False,
        from_client: bool = True,
        verification_guards: Mapping[TopicPartition, VerificationGuard] | None = None,
    ) -> list[ProduceResult]:
        """Append one batch to each partition as its leader, in order (synchronous: no other request interleaves).
        Each result holds the append's offsets or its error. For acks=-1 the fsync of each log is requested here;
        then `wait_for_acks`. A transactional batch that begins a transaction on its partition needs the guard
        `begin_transaction_verification` gave for it once the coordinator confirmed the partition is in the
        transaction (KIP-890; unless transaction.partition.verification.enable is false). `from_client` is False
        for the coordinators' own batches."""
        verify = self.settings.transaction_partition_verification_enable
        guards = verification_guards or {}
        results = []
        stats = self.stats
        flushes_requested = False
        for tp, records in entries:
            result = ProduceResult(tp)
            results.append(result)
            traffic = stats.topic(tp.topic)
            traffic.produce_requests += 1
            found: Partition | None = None
            try:
                topic = self.image.topics.get(tp.topic)
                if topic is not None and topic.is_internal and not internal_topics_allowed:
                    raise KafkaError(
                        ErrorCode.INVALID_TOPIC_EXCEPTION, f"cannot produce to the internal topic {tp.topic}"
                    )
                partition = found = self.get_partition(tp)
                result.info = partition.append_records_as_leader(
                    records,
                    required_acks,
                    now_ms,
                    from_client=from_client,
                    verification_required=verify,
                    verification_guard=guards.get(tp),
                )
            except KafkaError as exc:
                result.error = exc
                traffic.failed_produce_requests += 1
                if found is not None and isinstance(exc, InvalidRecords):
                    result.log_start_offset = found.log.log_start_offset
                continue
            if not result.info.duplicate:
                traffic.messages_in += result.info.last_offset - result.info.base_offset + 1
                traffic.bytes_in += len(records)
            self._appended(result, partition, required_acks)
            flushes_requested = required_acks == -1 and self.settings.log_flush_acks_all_enable
        if flushes_requested:
            self.committer.request_arrived()
        return results

    def _appended(self, result: ProduceResult, partition: Partition, required_acks: int) -> None:
        assert result.info is not None
        result.partition = partition
        result.leader_epoch = partition.leader_epoch
        result.truncations = partition.log.truncations
        if required_acks == -1 and self.settings.log_flush_acks_all_enable:
            # A duplicate (an idempotent producer's retry) waits too: its first attempt may not be durable yet.
            self.committer.request_flush(partition.log, result.info.last_offset + 1)
        else:
            self._unflushed.add(partition.log)  # fsynced by the flush loop (log.flush.interval.ms)

    def begin_transaction_verification(
        self, producer_id: int, partitions: Iterable[TopicPartition], now_ms: int
    ) -> dict[TopicPartition, VerificationGuard]:
        """KIP-890: the partitions (led here) where a transactional batch of this producer would begin a
        transaction, each with the guard to append it with once the coordinator confirms the partition is in the
        producer's transaction. Empty when verification is disabled."""
        if not self.settings.transaction_partition_verification_enable:
            return {}
        guards = {}
        for tp in partitions:
            partition = self.partitions.get(tp)
            guard = partition.begin_verification(producer_id, now_ms) if partition is not None else None
            if guard is not None:
                guards[tp] = guard
        return guards

    def append_end_txn_markers(
        self,
        partitions: Iterable[TopicPartition],
        *,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        commit: bool,
        now_ms: int,
    ) -> list[ProduceResult]:
        """WriteTxnMarkers: a COMMIT or ABORT marker for the producer on each partition, as its leader (acks=-1:
        then `wait_for_acks`)."""
        results = []
        for tp in partitions:
            result = ProduceResult(tp)
            results.append(result)
            try:
                partition = self.get_partition(tp)
                result.info = partition.append_end_txn_marker(
                    producer_id, producer_epoch, coordinator_epoch, commit, now_ms
                )
            except KafkaError as exc:
                result.error = exc
                continue
            self._appended(result, partition, -1)
        return results

    async def wait_for_acks(self, results: Sequence[ProduceResult], timeout_ms: int) -> None:
        """acks=-1: park until every appended batch is fsynced here and below the high watermark (on every in-sync
        replica), or its partition can never get there; fill in each result's error. REQUEST_TIMED_OUT for what is
        still pending after `timeout_ms`, as Kafka answers."""
        pending = [r for r in results if r.error is None and r.info is not None and r.partition is not None]
        if not pending:
            return

        def decided(r: ProduceResult) -> bool:
            assert r.partition is not None
            assert r.info is not None
            return self.partitions.get(r.tp) is not r.partition or r.partition.acks_reached(
                r.info.last_offset, r.leader_epoch, r.truncations
            )

        deadline = trio.current_time() + max(timeout_ms, 0) / 1000
        self.stats.parked_produces += 1
        try:
            completed = await self.purgatory.wait_until(
                [r.tp for r in pending], lambda: all(map(decided, pending)), deadline, woken_by_appends=False
            )
        finally:
            self.stats.parked_produces -= 1
        for r in pending:
            assert r.partition is not None
            assert r.info is not None
            if self.partitions.get(r.tp) is not r.partition:
                r.error = KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"{r.tp} is no longer on this node")
            elif not completed and not decided(r):  # (completed: all were decided, with no await since)
                r.error = KafkaError(
                    ErrorCode.REQUEST_TIMED_OUT,
                    f"not replicated to the in-sync replicas of {r.tp} within {timeout_ms} ms",
                )
            else:
                r.error = r.partition.acks_error(r.info.last_offset, r.leader_epoch, r.truncations)

    # ---- fetch -----------------------------------------------------------------------------------------------

    async def fetch_messages(self, params: FetchParams) -> list[PartitionRead]:
        """Read every requested partition; if that gives fewer than min_bytes (and no error), park until the
        partitions have enough or max_wait_ms passes, then read again."""
        reads, total = self._read(params)
        if total >= max(params.min_bytes, 1) or params.max_wait_ms <= 0 or any(r.error for r in reads):
            return reads
        deadline = trio.current_time() + params.max_wait_ms / 1000
        follower = 1 if params.replica_id >= 0 and params.partitions else 0
        self.stats.parked_fetches += 1
        self.stats.parked_follower_fetches += follower
        try:
            _, moved = await self.purgatory.park(
                [p.tp for p in params.partitions], lambda: self._fetch_ready(params), deadline
            )
        finally:
            self.stats.parked_fetches -= 1
            self.stats.parked_follower_fetches -= follower
        if not moved and (params.replica_id < 0 or self.leader_quota.unlimited):
            # Nothing it asks for moved while it waited (every change wakes the purgatory): the first read is the
            # answer. An idle follower's long poll then reads its partitions once per round, not twice. (A throttled
            # follower reads again: the quota may have room now.)
            return reads
        return self._read(params)[0]

    async def fetch_in_session(
        self, session: SessionChanges, plan: Callable[[], PlanT]
    ) -> tuple[PlanT, list[PartitionRead]]:
        """`fetch_messages` for an incremental fetch: `plan()` names the session's partitions that may have
        something to answer now (the others, settled, are not read). The long poll waits on the session, which
        every wake of any of its partitions wakes (one wait, whatever the session's size); after a wake the plan is
        made again (a settled partition woken is read too). Returns the plan read last and its reads."""
        seen = session.changes
        first = plan()
        params = first.params
        reads, total = self._read(params)
        if total >= max(params.min_bytes, 1) or params.max_wait_ms <= 0 or any(r.error for r in reads):
            return first, reads
        deadline = trio.current_time() + params.max_wait_ms / 1000
        follower = 1 if params.replica_id >= 0 else 0
        self.stats.parked_fetches += 1
        self.stats.parked_follower_fetches += follower
        try:
            with trio.move_on_at(deadline):
                last = seen
                while True:
                    if session.changes == last:
                        await session.wait_changed()
                    last = session.changes
                    if self._fetch_ready(plan().params):
                        break
        finally:
            self.stats.parked_fetches -= 1
            self.stats.parked_follower_fetches -= follower
        if session.changes == seen and (params.replica_id < 0 or self.leader_quota.unlimited):
            # No wake of the session since the first read (as in fetch_messages): that read is the answer.
            return first, reads
        final = plan()
        return final, self._read(final.params)[0]

    def _read(self, params: FetchParams) -> tuple[list[PartitionRead], int]:
        """One read of every partition, within Kafka's size limits (KIP-74): each partition gets at most its
        partition_max_bytes and the response at most max_bytes, except that the first batch of the first partition
        with data comes whole even if it is larger than both, so a consumer can always make progress."""
        now = self.lag_clock.now_ms()
        budget = params.max_bytes
        min_one_batch = True
        total = 0
        reads = []
        follower = params.replica_id >= 0
        if follower:
            self.follower_fetch_ms[params.replica_id] = now
        followed: list[tuple[Partition, PartitionRead, int]] = []
        for request in params.partitions:
            partition = self.partitions.get(request.tp)
            if partition is None:
                reads.append(PartitionRead(self._missing(request.tp)))
                continue
            max_bytes, first_batch = min(request.partition_max_bytes, budget), min_one_batch
            throttle = params.replica_id >= 0 and self._leader_throttled(partition, params.replica_id)
            if throttle:
                allowed = self.leader_quota.available(now)
                max_bytes, first_batch = min(max_bytes, allowed), first_batch and allowed > 0
            read = partition.read(
                fetch_offset=request.fetch_offset,
                max_bytes=max_bytes,
                min_one_batch=first_batch,
                current_leader_epoch=request.current_leader_epoch,
                replica_id=params.replica_id,
                now_ms=now,
                isolation_level=params.isolation_level,
                follower_log_start_offset=request.log_start_offset,
                advance_high_watermark=not follower,
            )
            if follower and read.error == ErrorCode.NONE:
                followed.append((partition, read, request.fetch_offset))
            size = len(read.records)
            if throttle:
                self.leader_quota.record(size, now)
            if size:
                min_one_batch = False
                budget = max(budget - size, 0)
                total += size
                traffic = self.stats.topic(request.tp.topic)
                if params.replica_id >= 0:
                    traffic.replication_bytes_out += size
                else:
                    traffic.bytes_out += size
                    # Batch headers only (one per batch, never per record).
                    traffic.messages_out += record_count(read.records)
            reads.append(read)
        # A follower's fetch moves the high watermark of its partitions once per fetch round, after all of them are
        # recorded: the parked acks=-1 produces they wake look once, at the round's outcome.
        for partition, read, fetch_offset in followed:
            if partition.maybe_advance_high_watermark():
                read.high_watermark = partition.high_watermark
            if partition.may_join_isr(params.replica_id, fetch_offset):
                self._isr_wakeup.set()
        return reads, total

    def _fetch_ready(self, params: FetchParams) -> bool:
        """Whether a parked fetch should be answered now: min_bytes are available, or a partition changed so that
        its answer is now an error. Reads no data (sizes come from the segments' indexes)."""
        available = 0
        now = self.lag_clock.now_ms()  # the leader quota's time, as in _read
        for request in params.partitions:
            partition = self.partitions.get(request.tp)
            if partition is None:
                return True
            size = partition.bytes_available(
                request.fetch_offset, params.replica_id, request.current_leader_epoch, params.isolation_level
            )
            if size is None:
                return True
            if (
                params.replica_id >= 0
                and self._leader_throttled(partition, params.replica_id)
                and not self.leader_quota.available(now)
            ):
                continue  # as Kafka: a throttled replica's data does not end a follower's long poll

            available += min(size, request.partition_max_bytes)
            if available >= max(params.min_bytes, 1):
                return True
        return False

    def _leader_throttled(self, partition: Partition, replica_id: int) -> bool:
        """Whether this leader throttles what it sends `replica_id` for the partition (kbroker/replication/throttle.py):
        the topic names the partition on this broker and the follower is not in the ISR."""
        if self.leader_quota.unlimited or replica_id in partition.isr:
            return False
        topic = self.image.topics.get(partition.tp.topic)
        return topic is not None and throttled(
            topic.configs, LEADER_THROTTLED_REPLICAS, partition.tp.partition, self.node_id
        )

    # ---- DeleteRecords and DescribeLogDirs -------------------------------------------------------------------

    async def delete_records(self, tp: TopicPartition, offset: int, timeout_ms: int) -> int:
        """DeleteRecords of one partition this node leads: move the log start offset to `offset` (-1: the high
        watermark), then wait until every live replica has moved its own there; the low watermark, or KafkaError
        (OFFSET_OUT_OF_RANGE beyond the high watermark, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT)."""
        partition = self.get_partition(tp)
        partition.check()
        high_watermark = partition.high_watermark
        target = high_watermark if offset == -1 else offset
        if target < 0 or target > high_watermark:
            raise KafkaError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"Cannot increment the log start offset to {offset} of partition {tp} since it is larger than the "
                f"high watermark {high_watermark}"
                if target >= 0
                else f"Cannot delete records of partition {tp} before offset {offset}",
            )
        partition.log.delete_records_before(target)
        self.purgatory.wake(tp)

        def done() -> bool:
            return (
                self.partitions.get(tp) is not partition
                or not partition.is_leader
                or (partition.low_watermark(self.image.live_brokers()) >= target)
            )

        deadline = trio.current_time() + max(timeout_ms, 0) / 1000
        await self.purgatory.wait_until([tp], done, deadline)
        if self.partitions.get(tp) is not partition or not partition.is_leader:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, f"{tp} is no longer led by this broker")
        low_watermark = partition.low_watermark(self.image.live_brokers())
        if low_watermark < target:
            raise KafkaError(
                ErrorCode.REQUEST_TIMED_OUT,
                f"the replicas of {tp} did not move their log start offset to {target} within {timeout_ms} ms",
            )
        return low_watermark

    def log_dir_partitions(self, topics: Mapping[str, Collection[int]] | None) -> list[LogDirPartition]:
        """DescribeLogDirs: every partition log of this node (or those of `topics`), its size and how far its log end
        is below the high watermark."""
        out = []
        for plog in self.logs:
            tp = plog.topic_partition
            if tp is None or plog.closed:
                continue
            if topics is not None and tp.partition not in topics.get(tp.topic, ()):
                continue
            lag = max(plog.high_watermark - plog.log_end_offset, 0)
            out.append(LogDirPartition(tp, plog.size_in_bytes, lag))
        return out

    # ---- offsets ---------------------------------------------------------------------------------------------

    def list_offset(
        self,
        tp: TopicPartition,
        timestamp: int,
        current_leader_epoch: int,
        replica_id: int,
        isolation_level: int = READ_UNCOMMITTED,
    ) -> tuple[int, int, int]:
        """ListOffsets: (offset, timestamp, leader epoch), or KafkaError."""
        return self.get_partition(tp).offset_for_timestamp(
            timestamp, current_leader_epoch, replica_id, isolation_level
        )

    def leader_epoch(self, tp: TopicPartition) -> int:
        """The epoch of our leadership of `tp`, or -1 if we do not lead it (the coordinators' epochs)."""
        partition = self.partitions.get(tp)
        return partition.leader_epoch if partition is not None and partition.is_leader else -1

    def last_offset_for_leader_epoch(
        self, tp: TopicPartition, current_leader_epoch: int, leader_epoch: int
    ) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (epoch, end offset), or KafkaError."""
        return self.get_partition(tp).last_offset_for_leader_epoch(current_leader_epoch, leader_epoch)

    def active_producers(self, tp: TopicPartition) -> list[ProducerStateEntry]:
        """DescribeProducers: the producers the partition's log tracks, or KafkaError. Any replica answers from its
        own log, a follower too, as Kafka does; a log kept after this node left the replicas does not count."""
        partition = self.get_partition(tp)
        state = self.image.partition(tp.topic, tp.partition)
        if state is None or self.node_id not in state.replicas:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        partition.check(require_leader=False)
        # (A producer known only from a leader's KIP-890 verification has no epoch yet: Kafka keeps those apart.)
        return [e for e in partition.log.producer_state.producers.values() if e.producer_epoch >= 0]

    # ---- ISR changes -----------------------------------------------------------------------------------------

    async def _isr_loop(self) -> None:
        """Kafka's ISR rules: shrink checks every replica.lag.time.max.ms / 2, expansion as soon as a fetch shows a
        follower has caught up. One AlterPartition per partition at a time. Partitions without followers (every
        partition of a single node) cost nothing here."""
        lag_time_max_ms = self.settings.replica_lag_time_max_ms
        interval = max(lag_time_max_ms / 2000, 0.05)
        limiter = trio.CapacityLimiter(ALTER_PARTITION_CONCURRENCY)
        while True:
            with trio.move_on_after(interval):
                await self._isr_wakeup.wait()
            self._isr_wakeup = trio.Event()
            now = self.lag_clock.now_ms()
            # KIP-841: only brokers that are live and not shutting down may join an ISR.
            live = self.image.eligible_brokers()
            proposals: list[tuple[Partition, tuple[int, ...]]] = []
            for tp, partition in self._replicated_leaders.items():
                if not partition.is_leader or self._isr_retry_at.get(tp, 0) > now:
                    continue
                new_isr = partition.isr_proposal(now, lag_time_max_ms, live)
                if new_isr is not None:
                    assert partition.replication is not None
                    partition.replication.pending_isr = new_isr
                    proposals.append((partition, new_isr))
            if proposals:
                async with trio.open_nursery() as nursery:
                    for partition, new_isr in proposals:
                        nursery.start_soon(self._alter_isr, partition, new_isr, limiter)

    async def _alter_isr(
        self, partition: Partition, new_isr: tuple[int, ...], limiter: trio.CapacityLimiter
    ) -> None:
        leader = partition.replication
        if leader is None:
            return
        tp, old_isr = partition.tp, leader.isr
        try:
            async with limiter:
                state = await self.metadata.alter_partition(
                    tp,
                    leader_id=self.node_id,
                    broker_epoch=self.image.broker_epoch,
                    leader_epoch=leader.leader_epoch,
                    partition_epoch=leader.partition_epoch,
                    new_isr=new_isr,
                )
        except KafkaError as exc:
            # Stale state (a newer image fixes it), a follower that is not live, or the store is unreachable: try
            # again later. Said once per proposal, not at every retry.
            if self._isr_refused.get(tp) != new_isr:
                log.info("ISR change of %s to %s not made: %s", tp, list(new_isr), exc)
                self._isr_refused[tp] = new_isr
            self._isr_retry_at[tp] = self.lag_clock.now_ms() + ISR_RETRY_MS
            # A fetch session may have settled the partition for a follower this expansion was adding (as if in
            # the ISR: Partition.read): it must be read, and the follower's fetches recorded, again.
            self.purgatory.wake(tp)
            return
        finally:
            if leader.pending_isr is new_isr:
                leader.pending_isr = None
        self._isr_refused.pop(tp, None)
        if state.isr != old_isr:
            log.info("ISR of %s: %s -> %s", tp, list(old_isr), list(state.isr))
        if partition.replication is not leader:
            return
        # The metadata may have delivered this state already; then this changes nothing.
        before = leader.isr
        if leader.update_partition_state(
            state.isr, state.replicas, state.partition_epoch, self.lag_clock.now_ms()
        ):
            partition.partition_epoch = state.partition_epoch
        self._count_isr_change(before, leader.isr)
        partition.maybe_advance_high_watermark()
        self.purgatory.wake(tp)

    # ---- high watermark checkpoints and retention ------------------------------------------------------------

    def high_watermarks(self) -> dict[TopicPartition, int]:
        return {
            plog.topic_partition: plog.high_watermark
            for plog in self.logs
            if plog.topic_partition is not None and not plog.closed
        }

    def checkpoint_high_watermarks(self) -> None:
        try:
            write_checkpoint(self.logs.data_dir, self.high_watermarks())
        except OSError as exc:
            log.error("cannot write the high watermark checkpoint: %s", exc)

    async def _checkpoint_loop(self) -> None:
        written: dict[TopicPartition, int] = {}
        data_dir = self.logs.data_dir
        moves = self.logs.high_watermark_moves
        seen = -1
        while True:
            await trio.sleep(CHECKPOINT_INTERVAL_S)
            if moves.value == seen:
                continue  # no high watermark moved, no log came or went: a pass over every log would find that
            now_seen = moves.value
            current = self.high_watermarks()
            if current != written:
                try:
                    await trio.to_thread.run_sync(write_checkpoint, data_dir, current)
                    written = current
                except OSError as exc:
                    log.error("cannot write the high watermark checkpoint: %s", exc)
                    continue  # tried again at the next pass
            seen = now_seen

    async def _flush_loop(self) -> None:
        """log.flush.interval.ms: fsync every log that has unsynced data at least this often. acks=all never needs it
        (it waits for its own fsync); it bounds what acks=1 and acks=0 writes can lose when every replica loses power
        at once: the leader, re-elected after the restart, would otherwise come back without them, however long ago
        they were written, and its followers would truncate theirs."""
        interval = self.settings.log_flush_interval_ms / 1000
        if interval <= 0:
            return
        # The first pass looks at every log (a restart after kill -9 finds unsynced tails); later ones only at the
        # logs appended to without an fsync asked for (`_appended`: acks 0 and 1). A follower fsyncs each of its
        # fetch rounds itself, and everything else written to a log asks for its fsync.
        candidates: Iterable[PartitionLog] = list(self.logs)
        while True:
            await trio.sleep(interval)
            for plog in candidates:
                if not plog.closed and not plog.offline and plog.recovery_point < plog.log_end_offset:
                    self.committer.request_flush(plog, plog.log_end_offset)
            candidates, self._unflushed = self._unflushed, set()

    def _defer_flush(self, logs: Iterable[PartitionLog]) -> None:
        """log.flush.acks.all.enable=false: a follower's round leaves its fsyncs to the flush loop."""
        self._unflushed.update(logs)

    def _log_moved(self, plog: PartitionLog) -> None:
        if plog.topic_partition is not None:
            self.purgatory.wake(plog.topic_partition)

    async def _retention_loop(self) -> None:
        """Delete segments past retention.ms / retention.bytes (log.retention.check.interval.ms), by the clock."""
        interval = self.settings.log_retention_check_interval_ms / 1000
        while True:
            await trio.sleep(interval)
            try:
                deleted = self.logs.retention_pass(self.clock.now_ms(), self._log_moved)
            except OSError:
                log.exception("retention pass failed")
                continue
            if deleted:
                log.info("retention deleted %d segments", deleted)


async def _run_in_scope(task: _FetcherTask) -> None:
    with task.scope:
        await task.fetcher.run()


def _summarize(changes: list[str], limit: int = 5) -> list[str]:
    """At most `limit` changes spelled out, then a count: a metadata change can move hundreds of partitions."""
    if len(changes) <= limit:
        return changes
    return [*changes[:limit], f"and {len(changes) - limit} more"]
