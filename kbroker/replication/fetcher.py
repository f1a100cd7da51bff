"""The follower side: one fetcher task per leader broker copies every partition this node follows from it.

Replication uses the Kafka protocol itself. For each partition the fetcher first makes its log a prefix of the
leader's (KIP-101, KIP-279): it sends OffsetForLeaderEpoch with the latest leader epoch in its own log, and
truncates to where that epoch ends on the leader, asking again with an older epoch when the leader never had ours.
Then it sends Fetch requests with its replica id from its log end offset, appends what it gets with the leader's
offsets and leader epochs, fsyncs every log the round appended to (one batch of asynchronous fsyncs per round,
log/fsyncer.py), and only then asks for more: the next fetch offset is what tells the leader that the records are on
this replica, so a record counted towards the high watermark is on disk on every in-sync replica, not just written
(unless log.flush.acks.all.enable=false: then, as in Kafka, the round's logs are left to the broker's flush loop).
The follower's high watermark is the leader's, capped at its own log end. The fetches form a fetch session with the
leader (KIP-227, fetch_session_handler.py): after the first, a request lists only the partitions whose fetch
position or fields changed.

A partition the leader refuses (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH: our metadata is behind, or the leader's
is) is retried after a short pause; a metadata change meanwhile replaces its state (see manager.py), which restarts
it at the new leader epoch with a fresh truncation.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

import trio

from kbroker.clock import Clock
from kbroker.common import KafkaError, TopicPartition
from kbroker.log.leader_epoch import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochCache
from kbroker.log.partition_log import FlushPlan, PartitionLog
from kbroker.metadata.image import BrokerRegistration
from kbroker.replication.client import (
    FETCH_VERSION,
    OFFSET_FOR_LEADER_EPOCH_VERSION,
    BrokerClient,
    BrokerClientError,
    Connector,
    plaintext_connector,
)
from kbroker.replication.fetch_session_handler import FetchSessionHandler
from kbroker.replication.partition import Partition
from kbroker.replication.purgatory import PartitionListener
from kbroker.replication.throttle import ReplicationQuota
from protocol.errors import ErrorCode
from protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic, ForgottenTopic
from protocol.messages.fetch_response import FetchResponse, PartitionData
from protocol.messages.offset_for_leader_epoch_request import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from protocol.messages.offset_for_leader_epoch_response import OffsetForLeaderEpochResponse

log = logging.getLogger(__name__)

# Kafka's replica.fetch.response.max.bytes and replica.socket.timeout.ms defaults.
FETCH_RESPONSE_MAX_BYTES = 10 * 1024 * 1024
REQUEST_TIMEOUT_S = 30.0
# How long a partition the leader refused waits before it is tried again (a metadata change restarts it sooner).
REFUSED_BACKOFF_S = 0.5
LEADER_BEHIND_BACKOFF_S = 0.1
# A throttled partition whose follower quota is spent waits this long before it is looked at again.
THROTTLED_BACKOFF_S = 0.1
ERROR_BACKOFF_S = 1.0
# Logs fsynced per worker-thread call when a round appended to many (each plan holds a duplicated descriptor).
FLUSH_CHUNK = 128


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


PlanExecutor = Callable[[list[FlushPlan]], Awaitable[list[BaseException | None]]]
"""Runs flush plans, each one's error or None (GroupCommitter.execute_plans)."""


# ---- the truncation rule (pure) ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TruncationStep:
    offset: int
    """Truncate the log to this offset (nothing to do if it is at or above the log end)."""
    done: bool
    """False: the log still has epochs the leader may not share; ask again with the new latest epoch."""


def truncation_step(
    leader_epoch: int,
    leader_end_offset: int,
    cache: LeaderEpochCache,
    log_end_offset: int,
    high_watermark: int,
) -> TruncationStep:
    """Where to cut the follower's log, given the leader's answer to OffsetForLeaderEpoch for our latest epoch:
    `leader_epoch` is the largest epoch the leader has at or below ours and `leader_end_offset` where it ends there.

    Both logs hold the same records up to the end of the largest epoch they share, because each epoch's records
    were written by that epoch's one leader: cut at the smaller of the two ends of that epoch. If our log lacks the
    leader's epoch, cut where our largest epoch below it ends and ask again (KIP-279).
    """
    if leader_epoch == UNDEFINED_EPOCH or leader_end_offset == UNDEFINED_EPOCH_OFFSET:
        # The leader knows no epoch as old as ours: only the high watermark is known to be on it.
        return TruncationStep(min(high_watermark, log_end_offset), True)
    own_epoch, own_end = cache.end_offset_for(leader_epoch, log_end_offset)
    if own_epoch == UNDEFINED_EPOCH:
        return TruncationStep(min(leader_end_offset, log_end_offset), True)
    if own_epoch != leader_epoch:
        return TruncationStep(min(own_end, log_end_offset), False)
    return TruncationStep(min(leader_end_offset, own_end, log_end_offset), True)


# ---- per-partition follower state -----------------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class FollowState:
    """This node follows `topic`-`partition` from `leader_id` at `leader_epoch`. A new object per leader epoch:
    fetchers compare identity to notice that the partition changed while a request was in flight."""

    tp: TopicPartition
    leader_id: int
    leader_epoch: int
    truncated: bool = False
    retry_at: float = 0.0  # trio clock
    fetch_offset: int = field(default=-1)
    """The fetch offset of the request in flight (to notice a log that changed meanwhile)."""
    throttled: bool = False
    """A throttled replica (kbroker/replication/throttle.py) not in the ISR: its fetches count against the
    follower quota."""


PartitionLookup = Callable[[TopicPartition], Partition | None]


class PartitionListeners(Protocol):
    """Where the fetcher hears of changes to its partitions that it did not make itself: a log start moved by
    retention, a log gone offline (the purgatory, kbroker/replication/purgatory.py, through which every such change
    already passes)."""

    def listen(self, tp: TopicPartition, listener: PartitionListener) -> None: ...

    def unlisten(self, tp: TopicPartition, listener: PartitionListener) -> None: ...


class ReplicaFetcher:
    """Fetches every partition in `partitions` from one leader broker (one incarnation of it).

    A round costs what changed, not how many partitions are followed: each partition's request fields are kept
    (`_fetchable`) and recomputed only when something may have moved them (`_dirty`): the leader's answer for it
    (records appended, an error, a truncation), a new state from the manager, a backoff ending, or a change made
    elsewhere that the purgatory reports (`partition_changed`). With the fetch session, a follower of thousands of
    idle partitions sends its long polls without looking at them.
    """

    def __init__(
        self,
        *,
        node_id: int,
        leader: BrokerRegistration,
        partitions: PartitionLookup,
        fetch_wait_max_ms: int,
        fetch_max_bytes: int,
        clock: Clock,
        execute_plans: PlanExecutor,
        connect: Connector = plaintext_connector,
        quota: ReplicationQuota | None = None,
        listeners: PartitionListeners | None = None,
        defer_flush: Callable[[list[PartitionLog]], None] | None = None,
    ) -> None:
        self.node_id = node_id
        self._defer_flush = defer_flush
        """log.flush.acks.all.enable=false: where a round's logs go to be fsynced later instead of before the next
        fetch (the broker's flush loop): its next fetch offset then tells the leader they are written, not synced."""
        self._connect = connect
        self.leader = leader
        self.partitions: dict[TopicPartition, FollowState] = {}
        self._partitions = partitions
        self._fetch_wait_max_ms = fetch_wait_max_ms
        self._fetch_max_bytes = fetch_max_bytes
        self._clock = clock
        self._quota = quota or ReplicationQuota()
        self._execute_plans = execute_plans
        self._listeners = listeners
        self._changed = trio.Event()
        self._session: FetchSessionHandler[TopicPartition] = FetchSessionHandler()
        self._fetchable: dict[TopicPartition, FetchPartition] = {}
        """The request fields of every partition to fetch now (truncated, not backing off, its log online)."""
        self._fetching: dict[TopicPartition, FollowState] = {}
        """The state each entry of `_fetchable` was computed from (an answer for a replaced state is ignored)."""
        self._dirty: set[TopicPartition] = set()
        """Partitions whose fields must be computed again before the next request."""
        self._unsent: set[TopicPartition] = set()
        """Partitions whose entry in `_fetchable` changed since the last request was built (for the session)."""
        self._backoff: dict[TopicPartition, float] = {}
        """Partitions waiting (trio clock) after a refusal or an error; out of `_fetchable` meanwhile."""
        self._untruncated: set[TopicPartition] = set()
        """Partitions that must go through OffsetForLeaderEpoch before they fetch."""
        self._throttled: set[TopicPartition] = set()
        """Throttled partitions: their fetch size depends on the quota left, so they are computed every round."""

    # ---- called by the manager (synchronously) ------------------------------------------------------------

    def add(self, state: FollowState) -> None:
        tp = state.tp
        if tp not in self.partitions and self._listeners is not None:
            self._listeners.listen(tp, self)
        self.partitions[tp] = state
        self._backoff.pop(tp, None)
        if state.truncated:
            self._untruncated.discard(tp)
        else:
            self._untruncated.add(tp)
        self.set_throttled(state, state.throttled)
        self._dirty.add(tp)
        self._wake()

    def remove(self, tp: TopicPartition) -> None:
        if self.partitions.pop(tp, None) is not None:
            if self._listeners is not None:
                self._listeners.unlisten(tp, self)
            self._backoff.pop(tp, None)
            self._untruncated.discard(tp)
            self._throttled.discard(tp)
            self._dirty.add(tp)
            self._wake()

    def set_throttled(self, state: FollowState, throttled: bool) -> None:
        """A replica throttle (kbroker/replication/throttle.py) was set or lifted for this partition."""
        state.throttled = throttled
        if self.partitions.get(state.tp) is not state:
            return
        if throttled:
            self._throttled.add(state.tp)
        else:
            self._throttled.discard(state.tp)
        self._dirty.add(state.tp)

    def partition_changed(self, tp: TopicPartition) -> None:
        """The purgatory's report of a change to one of our partitions (PartitionListener)."""
        self._dirty.add(tp)
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def _log_of(self, state: FollowState) -> PartitionLog | None:
        partition = self._partitions(state.tp)
        return partition.log if partition is not None else None

    def _retry_later(self, state: FollowState, delay: float) -> None:
        state.retry_at = trio.current_time() + delay
        self._backoff[state.tp] = state.retry_at
        self._dirty.add(state.tp)

    # ---- the task -------------------------------------------------------------------------------------------

    async def run(self) -> None:
        backoff = 0.05
        leader = self.leader
        try:
            while True:
                if not self.partitions:
                    await self._changed.wait()
                    continue
                try:
                    client = await self._connect(leader.host, leader.port, f"kbroker-replica-{self.node_id}")
                    async with client:
                        backoff = 0.05
                        self._session.reset()  # a new connection starts with a full fetch
                        await self._serve(client)
                except BrokerClientError as exc:
                    log.info("fetcher from broker %d: %s; retrying in %.2fs", leader.node_id, exc, backoff)
                with trio.move_on_after(backoff):
                    await self._changed.wait()
                backoff = min(backoff * 2, 1.0)
        finally:
            if self._listeners is not None:
                for tp in self.partitions:
                    self._listeners.unlisten(tp, self)

    async def _serve(self, client: BrokerClient) -> None:
        while True:
            now = trio.current_time()
            for tp, retry_at in list(self._backoff.items()):
                if retry_at <= now:
                    del self._backoff[tp]
                    self._dirty.add(tp)
            untruncated = [self.partitions[tp] for tp in self._untruncated if tp not in self._backoff]
            if untruncated:
                await self._truncate(client, untruncated)
                continue
            self._refresh()
            if not self._fetchable:
                next_try = min(self._backoff.values(), default=math.inf)
                with trio.move_on_at(next_try):
                    await self._changed.wait()
                continue
            await self._fetch(client)

    def _refresh(self) -> None:
        """Compute again the fields of every partition that may have changed (and of the throttled ones)."""
        if not self._dirty and not self._throttled:
            return
        allowed = self._quota.available(self._clock.now_ms()) if self._throttled else 0
        todo = self._dirty | self._throttled
        self._dirty = set()
        for tp in todo:
            fields: FetchPartition | None = None
            state = self.partitions.get(tp)
            if state is not None and state.truncated and tp not in self._backoff:
                fields = self._fields(state, allowed)
            if fields is None:
                if self._fetchable.pop(tp, None) is not None:
                    del self._fetching[tp]
                    self._unsent.add(tp)
            elif self._fetchable.get(tp) != fields or self._fetching.get(tp) is not state:
                assert state is not None
                self._fetchable[tp] = fields
                self._fetching[tp] = state
                self._unsent.add(tp)

    def _fields(self, state: FollowState, allowed: int) -> FetchPartition | None:
        """The request fields of one partition now, or None if it cannot be fetched now (then it backs off)."""
        plog = self._log_of(state)
        if plog is None or plog.offline:
            self._retry_later(state, ERROR_BACKOFF_S)
            return None
        max_bytes = self._fetch_max_bytes
        if state.throttled:
            if allowed <= 0:
                self._retry_later(state, THROTTLED_BACKOFF_S)
                return None
            max_bytes = min(max_bytes, allowed)
        state.fetch_offset = plog.log_end_offset
        return FetchPartition(
            partition=state.tp.partition,
            current_leader_epoch=state.leader_epoch,
            fetch_offset=state.fetch_offset,
            last_fetched_epoch=plog.leader_epoch_cache.latest_epoch,
            log_start_offset=plog.log_start_offset,
            partition_max_bytes=max_bytes,
        )

    # ---- truncation -----------------------------------------------------------------------------------------

    async def _truncate(self, client: BrokerClient, states: list[FollowState]) -> None:
        topics: dict[str, OffsetForLeaderTopic] = {}
        asked: list[tuple[FollowState, int]] = []
        for state in states:
            plog = self._log_of(state)
            if plog is None:
                self._retry_later(state, ERROR_BACKOFF_S)
                continue
            latest = plog.leader_epoch_cache.latest_epoch
            if latest == UNDEFINED_EPOCH:
                # No epoch in our log: it holds nothing any leader wrote (empty, or emptied), so nothing can diverge.
                self._truncated(state)
                continue
            topics.setdefault(state.tp.topic, OffsetForLeaderTopic(topic=state.tp.topic)).partitions.append(
                OffsetForLeaderPartition(
                    partition=state.tp.partition, current_leader_epoch=state.leader_epoch, leader_epoch=latest
                )
            )
            asked.append((state, latest))
        if not asked:
            return
        request = OffsetForLeaderEpochRequest(replica_id=self.node_id, topics=list(topics.values()))
        response: OffsetForLeaderEpochResponse = await client.request(
            request, OFFSET_FOR_LEADER_EPOCH_VERSION, timeout_s=REQUEST_TIMEOUT_S
        )
        answers = {TopicPartition(t.topic, p.partition): p for t in response.topics for p in t.partitions}
        for state, _asked_epoch in asked:
            answer = answers.get(state.tp)
            if self.partitions.get(state.tp) is not state:
                continue  # replaced while we waited: the new state truncates afresh
            if answer is None:
                self._retry_later(state, ERROR_BACKOFF_S)
                continue
            if answer.error_code != ErrorCode.NONE:
                self._refused(state, answer.error_code, "OffsetForLeaderEpoch")
                continue
            plog = self._log_of(state)
            if plog is None:
                continue
            step = truncation_step(
                answer.leader_epoch,
                answer.end_offset,
                plog.leader_epoch_cache,
                plog.log_end_offset,
                plog.high_watermark,
            )
            if step.offset < plog.log_end_offset:
                log.info(
                    "truncating %s from %d to %d (leader %d has epoch %d up to %d)",
                    plog.name,
                    plog.log_end_offset,
                    step.offset,
                    state.leader_id,
                    answer.leader_epoch,
                    answer.end_offset,
                )
                try:
                    plog.truncate_to(step.offset)
                except KafkaError as exc:
                    log.error("cannot truncate %s: %s", plog.name, exc)
                    self._retry_later(state, ERROR_BACKOFF_S)
                    continue
            if step.done:
                self._truncated(state)

    def _truncated(self, state: FollowState) -> None:
        state.truncated = True
        self._untruncated.discard(state.tp)
        self._dirty.add(state.tp)

    def _diverged(self, state: FollowState) -> None:
        """The leader saw our log diverge from its own: go through OffsetForLeaderEpoch again."""
        state.truncated = False
        self._untruncated.add(state.tp)
        self._dirty.add(state.tp)

    # ---- fetching -------------------------------------------------------------------------------------------

    async def _fetch(self, client: BrokerClient) -> None:
        # A fetch session (KIP-227): after the first request, only the partitions whose fields changed are listed.
        listed, forgotten = self._session.build(self._fetchable, self._unsent)
        self._unsent = set()
        topics: dict[str, FetchTopic] = {}
        for tp in listed:
            topics.setdefault(tp.topic, FetchTopic(topic=tp.topic)).partitions.append(self._fetchable[tp])
        forget: dict[str, ForgottenTopic] = {}
        for tp in forgotten:
            forget.setdefault(tp.topic, ForgottenTopic(topic=tp.topic)).partitions.append(tp.partition)
        request = FetchRequest(
            replica_id=self.node_id,
            max_wait_ms=self._fetch_wait_max_ms,
            min_bytes=1,
            max_bytes=FETCH_RESPONSE_MAX_BYTES,
            isolation_level=0,
            session_id=self._session.session_id,
            session_epoch=self._session.epoch,
            topics=list(topics.values()),
            forgotten_topics_data=list(forget.values()),
        )
        try:
            response: FetchResponse = await client.request(
                request, FETCH_VERSION, timeout_s=self._fetch_wait_max_ms / 1000 + REQUEST_TIMEOUT_S
            )
        except BaseException:
            self._session.reset()
            raise
        self._session.handle_response(response.error_code, response.session_id)
        if response.error_code != ErrorCode.NONE:
            log.info("fetch session with broker %d: %s", self.leader.node_id, error_name(response.error_code))
            return
        appended: list[PartitionLog] = []
        now = self._clock.now_ms()
        # Only the partitions the leader answered: in a session it leaves out those with nothing new.
        for topic in response.responses:
            for data in topic.partitions:
                tp = TopicPartition(topic.topic, data.partition_index)
                state = self._fetching.get(tp)
                if state is None or self.partitions.get(tp) is not state:
                    continue
                self._dirty.add(tp)  # whatever happens next, its fields are looked at again
                plog = self._appended_to(state, data, now)
                if plog is not None:
                    appended.append(plog)
        if appended and self._defer_flush is not None:
            self._defer_flush(appended)
        elif appended:
            await self._make_durable(appended)

    def _appended_to(self, state: FollowState, data: PartitionData, now: int) -> PartitionLog | None:
        """Apply the leader's answer for one partition; the log if records were appended to it."""
        plog = self._log_of(state)
        if plog is None or plog.log_end_offset != state.fetch_offset:
            return None  # the log changed while the request was in flight; the next fetch starts from where it is
        if data.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
            self._out_of_range(state, plog, data.log_start_offset, data.high_watermark)
            return None
        if data.error_code != ErrorCode.NONE:
            self._refused(state, data.error_code, "Fetch")
            return None
        if data.diverging_epoch.epoch >= 0:
            self._diverged(state)
            return None
        partition = self._partitions(state.tp)
        assert partition is not None
        assert partition.log is plog
        if state.throttled and data.records:
            self._quota.record(len(data.records), now)
        appended = None
        if data.records:
            try:
                if partition.append_as_follower(data.records, now) is not None:
                    appended = plog
            except KafkaError as exc:
                # A full disk (the log stays online and says so once itself) is retried quietly.
                level = (
                    logging.DEBUG
                    if not plog.offline and exc.code == ErrorCode.KAFKA_STORAGE_ERROR
                    else logging.ERROR
                )
                log.log(level, "cannot append to %s from leader %d: %s", plog.name, state.leader_id, exc)
                self._retry_later(state, ERROR_BACKOFF_S)
                return None
        partition.follow_high_watermark(data.high_watermark)
        if plog.log_start_offset < data.log_start_offset <= plog.high_watermark:
            try:
                plog.delete_records_before(data.log_start_offset)
            except KafkaError as exc:
                log.warning("cannot move the log start of %s: %s", plog.name, exc)
        return appended

    async def _make_durable(self, logs: list[PartitionLog]) -> None:
        """fsync every log this round appended to before the next fetch tells the leader they have it: all at once,
        through the broker's group committer's machinery (`execute_plans`: Linux asynchronous fsyncs), but not in
        its rounds: its round in flight (the fsyncs of the produces this node leads) would make the whole
        replication round wait for it and then for one more round; two flushes of one log at once are safe
        (FlushPlan). A disk error takes the log offline, as in the committer: the next fetch reports whatever the
        log holds then. A plan holds duplicated descriptors until it has run, so a round that touched thousands of
        partitions (a node catching up on every partition) is flushed FLUSH_CHUNK logs at a time rather than
        duplicating a descriptor per log at once."""
        for start in range(0, len(logs), FLUSH_CHUNK):
            plans: list[tuple[PartitionLog, FlushPlan]] = []
            for plog in logs[start : start + FLUSH_CHUNK]:
                try:
                    plans.append((plog, plog.begin_flush()))
                except KafkaError as exc:
                    log.info("fsync of %s: %s", plog.name, exc)
            if not plans:
                continue
            # Not cancellable: the plans' descriptors are closed once they ran, and the outcome must be known.
            errors = await self._execute_plans([plan for _, plan in plans])
            for (plog, plan), error in zip(plans, errors, strict=True):
                if error is None:
                    plog.end_flush(plan)
                else:
                    log.error("fsync of %s failed: %s", plog.name, plog.fail_flush(error))

    def _out_of_range(
        self, state: FollowState, plog: PartitionLog, leader_log_start: int, leader_high_watermark: int
    ) -> None:
        try:
            if plog.log_end_offset < leader_log_start:
                # The leader deleted what we would need next (retention): start over where its log starts.
                log.info("%s: log end %d is below the leader's log start %d; restarting the log there",
                         plog.name, plog.log_end_offset, leader_log_start)  # fmt: skip
                plog.truncate_fully_and_start_at(leader_log_start)
                return
            if 0 <= leader_high_watermark < plog.log_end_offset:
                # Beyond the leader's log (possible after an unclean election): everything up to the leader's
                # high watermark is on the leader, so cut there and fetch again.
                log.info("%s: log end %d is beyond the leader's log; truncating to its high watermark %d",
                         plog.name, plog.log_end_offset, leader_high_watermark)  # fmt: skip
                plog.truncate_to(max(leader_high_watermark, plog.log_start_offset))
                return
        except KafkaError as exc:
            log.error("cannot truncate %s: %s", plog.name, exc)
        self._retry_later(state, ERROR_BACKOFF_S)

    def _refused(self, state: FollowState, code: int, api: str) -> None:
        if code == ErrorCode.UNKNOWN_LEADER_EPOCH:
            delay = LEADER_BEHIND_BACKOFF_S  # the leader has not seen its own election yet
        elif code in (
            ErrorCode.NOT_LEADER_OR_FOLLOWER,
            ErrorCode.FENCED_LEADER_EPOCH,
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ):
            delay = REFUSED_BACKOFF_S
        else:
            delay = ERROR_BACKOFF_S
        log.debug("%s of %s-%d refused by leader %d with %s", api, state.tp.topic, state.tp.partition,
                  state.leader_id, error_name(code))  # fmt: skip
        self._retry_later(state, delay)
