"""The replica manager: turns each metadata snapshot into this node's roles, and runs what the roles need.

For every partition whose replicas include this node it keeps a local log and one role:
- **leader**, when the snapshot says so *and* the state was written after this incarnation registered (a restarted
  node does not resume an old leadership: the controller elects it again, with a new epoch). Becoming leader
  records the new epoch in the leader-epoch cache at our log end and starts a fresh `PartitionLeader`;
- **follower** of the snapshot's leader at its epoch, when that leader is a live broker: the partition goes to the
  fetcher of that leader, which truncates (OffsetForLeaderEpoch) before it fetches;
- **none** otherwise (no leader, or a stale leadership of ours): the partition is neither served nor fetched.

Applying a snapshot is one synchronous function, so a request handler sees either the roles before it or after it,
never half of each. Roles are the only state handlers consult for leadership (`is_leader`), so a leader only
appends, and a follower only truncates, in an epoch it has fully set up.

The trio parts: a task per leader broker fetching (fetcher.py), a task proposing ISR changes (AlterPartition through
etcd), and a task checkpointing high watermarks.
"""

from __future__ import annotations

import base64
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from kbroker.cluster.etcd import EtcdError
from kbroker.cluster.metadata import NO_LEADER, MetadataError, PartitionState, TopicRecord
from kbroker.cluster.store import ClusterSnapshot, MetadataStore
from kbroker.log.errors import LogError
from kbroker.log.partition_log import PartitionLog
from kbroker.replication.checkpoint import write_checkpoint
from kbroker.replication.fetcher import FollowState, ReplicaFetcher
from kbroker.replication.partition_leader import PartitionLeader
from kbroker.topics import write_file_atomically
from protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kbroker.cluster.broker import ClusterBroker
    from kbroker.cluster.member import ClusterMember

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]

PARTITION_METADATA_FILE = "partition.metadata"
CHECKPOINT_INTERVAL_S = 5.0  # Kafka's replica.high.watermark.checkpoint.interval.ms
ISR_RETRY_MS = 1000
ALTER_PARTITION_CONCURRENCY = 16

EMPTY_SNAPSHOT = ClusterSnapshot(
    revision=0,
    brokers={},
    controller=None,
    topics={},
    topic_revisions={},
    partitions={},
    partition_revisions={},
)


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class _FetcherTask:
    fetcher: ReplicaFetcher
    scope: trio.CancelScope


class ReplicaManager:
    def __init__(self, broker: ClusterBroker) -> None:
        self.broker = broker
        self.node_id = broker.node_id
        config = broker.config
        self.lag_time_max_ms = config.get_int("replica.lag.time.max.ms")
        self.fetch_wait_max_ms = config.get_int("replica.fetch.wait.max.ms")
        self.fetch_max_bytes = config.get_int("replica.fetch.max.bytes")
        self.snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        """The snapshot the current roles were computed from: what every handler reports."""
        self.broker_epoch = -1
        self.store: MetadataStore | None = None
        self.leaders: dict[TopicPartition, PartitionLeader] = {}
        self.follows: dict[TopicPartition, FollowState] = {}
        self._fetchers: dict[int, _FetcherTask] = {}
        self._nursery: trio.Nursery | None = None
        self._isr_wakeup = trio.Event()
        self._isr_retry_at: dict[TopicPartition, int] = {}
        self._applied = trio.Event()
        self._topic_ids: dict[TopicPartition, uuid.UUID] = {}
        self._stray_reported: set[TopicPartition] = set()

    # ---- the task -------------------------------------------------------------------------------------------

    async def run(
        self, member: ClusterMember, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Apply the current snapshot (started once it is applied), then every change, until cancelled."""
        self.store = member.store
        self.broker_epoch = member.registration.broker_epoch
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                snapshot = member.store.snapshot()
                self.apply(snapshot)
                nursery.start_soon(self._isr_loop)
                nursery.start_soon(self._checkpoint_loop)
                task_status.started()
                while True:
                    snapshot = await member.store.wait_for_change(snapshot.revision)
                    self.apply(snapshot)
        finally:
            self._nursery = None

    def stop_all(self) -> None:
        """This incarnation is over (its registration lapsed, or the broker stops): give up every role."""
        for task in self._fetchers.values():
            task.scope.cancel()
        self._fetchers.clear()
        if self.leaders or self.follows:
            log.info("giving up %d leaderships and %d followerships", len(self.leaders), len(self.follows))
        self.leaders.clear()
        self.follows.clear()
        self.broker_epoch = -1
        self.store = None
        self.broker.notify_replication_changed()

    async def wait_applied(self, predicate: Callable[[ClusterSnapshot], bool], within_s: float) -> bool:
        """Wait until an applied snapshot satisfies predicate; False after within_s seconds."""
        with trio.move_on_after(within_s):
            while not predicate(self.snapshot):
                await self._applied.wait()
            return True
        return False

    # ---- applying a snapshot (synchronous) ------------------------------------------------------------------

    def apply(self, snapshot: ClusterSnapshot) -> None:
        previous, self.snapshot = self.snapshot, snapshot
        now = _now_ms()
        broker = self.broker
        broker.topics.refresh(snapshot)
        for topic, partition in broker.logs.partitions():
            tp = (topic, partition)
            record = snapshot.topics.get(topic)
            if record is None:
                if topic in previous.topics:
                    self._delete_log(tp, "its topic was deleted")
                elif tp not in self._stray_reported:
                    # Present before we saw any metadata naming it: keep it (etcd may have been wiped by mistake).
                    log.warning("keeping %s-%d, a log of a topic the cluster does not have", topic, partition)
                    self._stray_reported.add(tp)
            elif previous.topics.get(topic) != record or not previous.topics:
                plog = broker.logs.get(topic, partition)
                if plog is not None:
                    plog.config = broker.log_config_for(record)
        for name, record in snapshot.topics.items():
            for p, state in snapshot.partitions.get(name, {}).items():
                tp = (name, p)
                if self.node_id not in state.replicas:
                    self._stop(tp)
                    continue
                plog = self._ensure_log(record, p)
                if plog is None:
                    self._stop(tp)
                elif snapshot.is_leader(name, p, self.node_id, self.broker_epoch):
                    self._lead(tp, plog, state, now)
                elif state.leader not in (NO_LEADER, self.node_id) and state.leader in snapshot.brokers:
                    self._follow(tp, state)
                else:
                    self._stop(tp)
        for tp in [*self.leaders, *self.follows]:
            if snapshot.partition(*tp) is None:
                self._stop(tp)
        self._sync_fetchers()
        deleted = [
            name
            for name, record in previous.topics.items()
            if name not in snapshot.topics or snapshot.topics[name].topic_id != record.topic_id
        ]
        broker.on_topics_deleted(deleted)
        broker.sync_offsets_leadership()
        broker.notify_replication_changed()
        self._applied.set()
        self._applied = trio.Event()

    def _lead(self, tp: TopicPartition, plog: PartitionLog, state: PartitionState, now: int) -> None:
        current = self.leaders.get(tp)
        if current is not None and current.leader_epoch == state.leader_epoch:
            if current.update_partition_state(state.isr, state.replicas, state.partition_epoch, now):
                self.maybe_advance_high_watermark(tp, plog)
            return
        self.follows.pop(tp, None)
        try:
            # Every record we append from now on carries this epoch; followers find where their logs diverge
            # from ours through this entry.
            plog.leader_epoch_cache.assign(state.leader_epoch, plog.log_end_offset)
        except OSError as exc:
            log.error("cannot record leader epoch %d of %s: %s", state.leader_epoch, plog.name, exc)
            self.leaders.pop(tp, None)
            return
        self.leaders[tp] = PartitionLeader(
            node_id=self.node_id,
            leader_epoch=state.leader_epoch,
            epoch_start_offset=plog.log_end_offset,
            isr=state.isr,
            replicas=state.replicas,
            partition_epoch=state.partition_epoch,
            now_ms=now,
        )
        self._isr_retry_at.pop(tp, None)
        log.info(
            "leading %s at epoch %d (log end %d, high watermark %d, ISR %s)",
            plog.name,
            state.leader_epoch,
            plog.log_end_offset,
            plog.high_watermark,
            list(state.isr),
        )
        self.maybe_advance_high_watermark(tp, plog)

    def _follow(self, tp: TopicPartition, state: PartitionState) -> None:
        if self.leaders.pop(tp, None) is not None:
            log.info("%s-%d: no longer leader", *tp)
        current = self.follows.get(tp)
        if (
            current is not None
            and current.leader_id == state.leader
            and current.leader_epoch == state.leader_epoch
        ):
            return
        self.follows[tp] = FollowState(tp[0], tp[1], state.leader, state.leader_epoch)
        log.info("following %s-%d from broker %d at epoch %d", tp[0], tp[1], state.leader, state.leader_epoch)

    def _stop(self, tp: TopicPartition) -> None:
        if self.leaders.pop(tp, None) is not None:
            log.info("%s-%d: no longer leader", *tp)
        self.follows.pop(tp, None)

    def _ensure_log(self, record: TopicRecord, partition: int) -> PartitionLog | None:
        """The local log of a partition we replicate, created if missing. A log left from an earlier topic of the
        same name (deleted and re-created while we were away) is deleted first: partition.metadata names the topic
        id each log belongs to, as in Kafka."""
        logs = self.broker.logs
        tp = (record.name, partition)
        try:
            plog = logs.get(record.name, partition)
            if plog is not None:
                known = self._topic_ids.get(tp)
                if known is None:
                    known = _read_partition_metadata(plog.directory)
                    if known is None:
                        _write_partition_metadata(plog.directory, record.topic_id)
                        known = record.topic_id
                    self._topic_ids[tp] = known
                if known == record.topic_id:
                    return plog
                self._delete_log(tp, "it belongs to an earlier topic of the same name")
            plog = logs.create(record.name, partition, self.broker.log_config_for(record))
            _write_partition_metadata(plog.directory, record.topic_id)
            self._topic_ids[tp] = record.topic_id
            return plog
        except (OSError, LogError) as exc:
            log.error("cannot open the log of %s-%d: %s", record.name, partition, exc)
            return None

    def _delete_log(self, tp: TopicPartition, why: str) -> None:
        self._stop(tp)
        self._topic_ids.pop(tp, None)
        try:
            if self.broker.logs.delete(*tp):
                log.info("deleted the log of %s-%d: %s", tp[0], tp[1], why)
        except OSError as exc:
            log.error("cannot delete the log of %s-%d: %s", tp[0], tp[1], exc)

    def _sync_fetchers(self) -> None:
        """One fetcher per leader broker incarnation, holding exactly the partitions we follow from it."""
        wanted: dict[int, dict[TopicPartition, FollowState]] = {}
        for tp, state in self.follows.items():
            wanted.setdefault(state.leader_id, {})[tp] = state
        for leader_id, running in list(self._fetchers.items()):
            registration = self.snapshot.brokers.get(leader_id)
            if leader_id not in wanted or registration != running.fetcher.leader:
                running.scope.cancel()
                del self._fetchers[leader_id]
        if self._nursery is None:
            return
        for leader_id, partitions in wanted.items():
            task = self._fetchers.get(leader_id)
            if task is None:
                fetcher = ReplicaFetcher(
                    node_id=self.node_id,
                    leader=self.snapshot.brokers[leader_id],
                    logs=self.broker.logs.get,
                    committer=self.broker.committer,
                    fetch_wait_max_ms=self.fetch_wait_max_ms,
                    fetch_max_bytes=self.fetch_max_bytes,
                    now_ms=_now_ms,
                )
                task = _FetcherTask(fetcher, trio.CancelScope())
                self._fetchers[leader_id] = task
                self._nursery.start_soon(_run_in_scope, task)
            fetcher = task.fetcher
            for tp in list(fetcher.partitions):
                if partitions.get(tp) is not fetcher.partitions[tp]:
                    fetcher.remove(tp)
            for tp, state in partitions.items():
                if fetcher.partitions.get(tp) is not state:
                    fetcher.add(state)

    # ---- leader bookkeeping (synchronous, called by the broker) ---------------------------------------------

    def maybe_advance_high_watermark(self, tp: TopicPartition, plog: PartitionLog) -> None:
        leader = self.leaders.get(tp)
        if leader is None:
            return
        hw = leader.high_watermark(plog.log_end_offset)
        if hw >= 0 and plog.advance_high_watermark(hw):
            self.broker.notify_high_watermark()

    def record_follower_fetch(
        self, tp: TopicPartition, plog: PartitionLog, replica_id: int, fetch_offset: int, now: int
    ) -> ErrorCode:
        """A follower fetched from `fetch_offset`: it has everything below. Advances the high watermark and wakes
        the ISR task when the follower may join the ISR."""
        leader = self.leaders[tp]
        if not leader.is_replica(replica_id):
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        leader.record_fetch(replica_id, fetch_offset, plog.log_end_offset, now)
        self.maybe_advance_high_watermark(tp, plog)
        if (
            replica_id not in leader.isr
            and leader.pending_isr is None
            and fetch_offset >= plog.high_watermark
            and fetch_offset >= leader.epoch_start_offset
        ):
            self._isr_wakeup.set()
        return ErrorCode.NONE

    # ---- ISR changes ----------------------------------------------------------------------------------------

    async def _isr_loop(self) -> None:
        """Kafka's ISR rules: shrink checks every replica.lag.time.max.ms / 2, expansion as soon as a fetch shows
        a follower has caught up. One AlterPartition per partition at a time."""
        interval = max(self.lag_time_max_ms / 2000, 0.05)
        limiter = trio.CapacityLimiter(ALTER_PARTITION_CONCURRENCY)
        while True:
            with trio.move_on_after(interval):
                await self._isr_wakeup.wait()
            self._isr_wakeup = trio.Event()
            now = _now_ms()
            proposals: list[tuple[TopicPartition, PartitionLeader, tuple[int, ...]]] = []
            for tp, leader in self.leaders.items():
                if self._isr_retry_at.get(tp, 0) > now:
                    continue
                plog = self.broker.logs.get(*tp)
                if plog is None or plog.offline:
                    continue
                new_isr = leader.isr_proposal(
                    plog.log_end_offset, plog.high_watermark, now, self.lag_time_max_ms
                )
                if new_isr is not None:
                    leader.pending_isr = new_isr
                    proposals.append((tp, leader, new_isr))
            if proposals:
                async with trio.open_nursery() as nursery:
                    for tp, leader, new_isr in proposals:
                        nursery.start_soon(self._alter_isr, tp, leader, new_isr, limiter)

    async def _alter_isr(
        self,
        tp: TopicPartition,
        leader: PartitionLeader,
        new_isr: tuple[int, ...],
        limiter: trio.CapacityLimiter,
    ) -> None:
        store = self.store
        if store is None:
            return
        old_isr = leader.isr
        try:
            async with limiter:
                state = await store.alter_partition(
                    tp[0],
                    tp[1],
                    leader_id=self.node_id,
                    broker_epoch=self.broker_epoch,
                    leader_epoch=leader.leader_epoch,
                    partition_epoch=leader.partition_epoch,
                    new_isr=new_isr,
                )
        except (MetadataError, EtcdError) as exc:
            # Stale state (a newer snapshot fixes it), a follower that is not live, or etcd trouble: try again later.
            log.info("ISR change of %s-%d to %s not made: %r", tp[0], tp[1], list(new_isr), exc)
            self._isr_retry_at[tp] = _now_ms() + ISR_RETRY_MS
            return
        finally:
            if leader.pending_isr is new_isr:
                leader.pending_isr = None
        log.info("ISR of %s-%d: %s -> %s", tp[0], tp[1], list(old_isr), list(state.isr))
        if self.leaders.get(tp) is not leader:
            return
        # The metadata watch may have delivered this state already; then this changes nothing.
        leader.update_partition_state(state.isr, state.replicas, state.partition_epoch, _now_ms())
        plog = self.broker.logs.get(*tp)
        if plog is not None:
            self.maybe_advance_high_watermark(tp, plog)
        self.broker.notify_replication_changed()

    # ---- high watermark checkpoints -------------------------------------------------------------------------

    def high_watermarks(self) -> dict[TopicPartition, int]:
        out: dict[TopicPartition, int] = {}
        for tp in self.broker.logs.partitions():
            plog = self.broker.logs.get(*tp)
            if plog is not None and not plog.closed:
                out[tp] = plog.high_watermark
        return out

    async def _checkpoint_loop(self) -> None:
        written: dict[TopicPartition, int] = {}
        data_dir = self.broker.data_dir
        while True:
            await trio.sleep(CHECKPOINT_INTERVAL_S)
            current = self.high_watermarks()
            if current == written:
                continue
            try:
                await trio.to_thread.run_sync(write_checkpoint, data_dir, current)
                written = current
            except OSError as exc:
                log.error("cannot write the high watermark checkpoint: %s", exc)


async def _run_in_scope(task: _FetcherTask) -> None:
    with task.scope:
        await task.fetcher.run()


def _read_partition_metadata(directory: Path) -> uuid.UUID | None:
    try:
        text = (directory / PARTITION_METADATA_FILE).read_text()
    except FileNotFoundError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "topic_id":
            value = value.strip()
            try:
                return uuid.UUID(bytes=base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
            except ValueError:
                break
    log.warning("unreadable %s in %s", PARTITION_METADATA_FILE, directory)
    return None


def _write_partition_metadata(directory: Path, topic_id: uuid.UUID) -> None:
    """Kafka's partition.metadata: the id of the topic this log belongs to (base64 as Kafka prints ids)."""
    encoded = base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")
    write_file_atomically(directory / PARTITION_METADATA_FILE, f"version: 0\ntopic_id: {encoded}\n".encode())
