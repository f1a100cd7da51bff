"""Incremental fetch sessions (KIP-227): Kafka's FetchManager, FetchSessionCache and FetchSession.

A client (consumer or follower) that fetches many partitions asks, with session id 0 and epoch 0, for a session: the
full fetch lists every partition and its answer carries the new session's id. Its later fetches are incremental:
they name the session and its next epoch, list only the partitions added or whose fetch position changed, and list
in `forgotten_topics_data` those to drop; the broker answers only the partitions with something new (Kafka's rule,
`CachedPartition.must_respond`). Kafka reads every partition of the session to find them; here only the unsettled
ones are read (see `FetchSession.unsettled`: the session listens to its partitions' wakes in the purgatory), which
answers the same. Epoch -1 ends a session (a full fetch that creates none: sessionless). A session is not tied to a
connection: it lives in the cache until a full fetch names it, its last partition is forgotten, or the cache evicts
it.

The cache is Kafka 3.9's: `max.incremental.fetch.session.cache.slots` sessions in all, split into NUM_SHARDS shards
of slots / NUM_SHARDS each, new sessions going to the shards in turn (so, as in Kafka, fewer than NUM_SHARDS slots
means no sessions at all). A new session that finds its shard full may evict, in this order: the least recently
used session if unused for `min.incremental.fetch.session.eviction.ms`; else the least valuable evictable session
(by privileged (a follower's), then partition count, then id) if the new one is at least as valuable. A consumer's
session becomes evictable that way once it is older than the eviction time; a follower's (privileged) session can
evict a consumer's at any age. Everything here is plain synchronous code on the trio thread, timed by the injected
clock; kbroker/handlers/fetch.py drives it.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterable, Sequence, Sized
from dataclasses import dataclass, field
from typing import Protocol

import trio

from kbroker.clock import Clock
from kbroker.common import TopicPartition
from kbroker.replication.fetch_session_handler import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INT32_MAX,
    INVALID_SESSION_ID,
    next_epoch,
)
from kbroker.replication.purgatory import Purgatory
from kbroker.replication.replica_manager import FetchPartition
from protocol.errors import ErrorCode

NUM_SHARDS = 8
"""Kafka 3.9's shard count (KAFKA-9401): each shard holds slots / NUM_SHARDS sessions."""
__all__ = ["FINAL_EPOCH", "INITIAL_EPOCH", "INVALID_SESSION_ID", "next_epoch"]
ZERO_UUID = uuid.UUID(int=0)

PartitionKey = tuple[uuid.UUID | str, int]
"""(topic id, partition) in a session using topic ids (Fetch v13+), else (topic name, partition)."""


@dataclass(slots=True)
class CachedPartition:
    """One partition of a fetch: what the client asked (fetch offset, max bytes, its leader epoch and log start) and,
    in a session, what it was last told (high watermark, log start offset here)."""

    topic_id: uuid.UUID
    topic: str | None
    """None while a topic id names no topic this broker knows (answered UNKNOWN_TOPIC_ID)."""
    partition: int
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    fetcher_log_start_offset: int = -1
    last_fetched_epoch: int = -1
    high_watermark: int = -1
    local_log_start_offset: int = -1
    position: int = 0
    """Its place in its session's order (FetchSession.partitions), so that a few partitions are put in that order
    without walking the whole session."""
    _fetch: FetchPartition | None = None
    """The read the replica manager is asked for, kept while the request's fields stay (an incremental fetch
    rebuilds nothing for the partitions it does not list)."""
    key: PartitionKey = field(init=False)
    """(topic id, partition), or (topic, partition) without topic ids: what names it in its session (fixed: a topic
    resolved from its id later does not change it)."""

    def __post_init__(self) -> None:
        self.key = (
            (self.topic_id, self.partition)
            if self.topic_id != ZERO_UUID
            else (self.topic or "", self.partition)
        )

    def fetch_partition(self, topic: str) -> FetchPartition:
        fetch = self._fetch
        if fetch is None or fetch.tp.topic != topic:
            fetch = self._fetch = FetchPartition(
                TopicPartition(topic, self.partition),
                self.fetch_offset,
                self.max_bytes,
                self.current_leader_epoch,
                self.fetcher_log_start_offset,
            )
        return fetch

    def update_request(self, other: CachedPartition) -> None:
        self._fetch = None
        self.fetch_offset = other.fetch_offset
        self.max_bytes = other.max_bytes
        self.current_leader_epoch = other.current_leader_epoch
        self.fetcher_log_start_offset = other.fetcher_log_start_offset
        self.last_fetched_epoch = other.last_fetched_epoch

    def must_respond(self, answer: PartitionAnswer, update: bool = True) -> bool:
        """Kafka's rule for an incremental response: a partition is included if it has records, its high watermark
        or log start offset changed since the client was last told, it names a preferred read replica or a
        diverging epoch, or it has an error (which also forgets the high watermark, so the partition comes back
        once the error goes). Not the last stable offset: Kafka does not compare it either."""
        # Kafka also always includes a partition naming a preferred read replica or a diverging epoch: kbroker's
        # answers carry neither (KIP-392 is not implemented; a follower's divergence is found by
        # OffsetForLeaderEpoch).
        respond = len(answer.records) > 0
        if self.high_watermark != answer.high_watermark:
            respond = True
            if update:
                self.high_watermark = answer.high_watermark
        if self.local_log_start_offset != answer.log_start_offset:
            respond = True
            if update:
                self.local_log_start_offset = answer.log_start_offset
        if answer.error != ErrorCode.NONE:
            respond = True
            if update:
                self.high_watermark = -1
        return respond


def _position(cached: CachedPartition) -> int:
    return cached.position


class PartitionAnswer(Protocol):
    """What a partition's answer says, as far as the session rule looks at it (a PartitionRead)."""

    @property
    def error(self) -> ErrorCode: ...
    @property
    def high_watermark(self) -> int: ...
    @property
    def log_start_offset(self) -> int: ...
    @property
    def records(self) -> Sized: ...
    @property
    def settled(self) -> bool: ...


@dataclass(eq=False)
class FetchSession:
    id: int
    privileged: bool
    """A follower's session: it may evict a consumer's at any age."""
    partitions: dict[PartitionKey, CachedPartition]
    """In Kafka's order: insertion, with a partition that returned records moved to the end (so that, under
    max_bytes, the others are read first next time)."""
    uses_topic_ids: bool
    creation_ms: int
    last_used_ms: int
    epoch: int
    cached_size: int = -1
    """The size the cache counts this session at (set by `touch`); -1 when not in the cache."""
    evictable_by_all: bool = False
    evictable_by_privileged: bool = False
    listeners: Purgatory | None = None
    """Where the session listens to its partitions' wakes; None: it never lets a partition settle (every
    incremental fetch reads all of them)."""
    unsettled: set[PartitionKey] = field(default_factory=set)
    """The partitions an incremental fetch must read. The others are settled: their last read (made while the
    session listened to them) had nothing to answer (no records at the fetch offset, which was at the read limit,
    and the high watermark and log start offset the client was told) and no wake of them came since. Every change
    that could alter a partition's answer wakes it in the purgatory, which tells its listeners: the partition is
    unsettled again, so reading only the unsettled ones answers exactly what reading all of them would."""
    changes: int = 0
    """How many wakes of its partitions the session has seen (a fetch compares it before and after its long
    poll)."""
    _listened: dict[PartitionKey, TopicPartition] = field(default_factory=dict)
    _keys: dict[TopicPartition, set[PartitionKey]] = field(default_factory=dict)
    """(Two topic ids may name one topic: a session holding a deleted topic's id and its re-creation's.)"""
    _changed: trio.Event = field(default_factory=trio.Event)
    _next_position: int = 0

    def __post_init__(self) -> None:
        self.unsettled.update(self.partitions)
        for cached in self.partitions.values():
            self._place_last(cached)

    def _place_last(self, cached: CachedPartition) -> None:
        cached.position = self._next_position
        self._next_position += 1

    def move_to_end(self, cached: CachedPartition) -> None:
        del self.partitions[cached.key]
        self.partitions[cached.key] = cached
        self._place_last(cached)

    def update(self, fetch_data: Iterable[CachedPartition], forgotten: Iterable[PartitionKey]) -> None:
        for wanted in fetch_data:
            cached = self.partitions.get(wanted.key)
            if cached is None:
                self.partitions[wanted.key] = wanted
                self._place_last(wanted)
            else:
                cached.update_request(wanted)
            self.unsettled.add(wanted.key)
        for key in forgotten:
            self.partitions.pop(key, None)
            self.unsettled.discard(key)
            self._unlisten(key)

    def listen(self, cached: CachedPartition, tp: TopicPartition) -> None:
        """Listen to `tp`'s wakes (before it is read: a read may settle it only if every later change is heard)."""
        if self.listeners is None or cached.key in self._listened:
            return
        self._listened[cached.key] = tp
        keys = self._keys.setdefault(tp, set())
        if not keys:
            self.listeners.listen(tp, self)
        keys.add(cached.key)

    def _unlisten(self, key: PartitionKey) -> None:
        tp = self._listened.pop(key, None)
        if tp is not None and self.listeners is not None:
            keys = self._keys[tp]
            keys.discard(key)
            if not keys:
                del self._keys[tp]
                self.listeners.unlisten(tp, self)

    def close(self) -> None:
        """Out of the cache: stop listening (a fetch still parked on it just waits out its time)."""
        for key in list(self._listened):
            self._unlisten(key)

    def partition_changed(self, tp: TopicPartition) -> None:
        keys = self._keys.get(tp)
        if keys:
            self.unsettled.update(keys)
            self.changes += 1
            self._changed.set()
            self._changed = trio.Event()

    async def wait_changed(self) -> None:
        await self._changed.wait()

    def settle(self, cached: CachedPartition) -> None:
        if cached.key in self._listened:
            self.unsettled.discard(cached.key)

    def to_read(self) -> list[CachedPartition]:
        """The unsettled partitions, in the session's order."""
        partitions = self.partitions
        return sorted((partitions[key] for key in self.unsettled), key=_position)

    def evictable_key(self) -> tuple[bool, int, int]:
        return (self.privileged, self.cached_size, self.id)


@dataclass
class FetchSessionStats:
    """Counters for the metrics (kbroker/monitoring/collector.py), per request, never per partition."""

    evictions: int = 0
    incremental_partitions_read: int = 0
    """Partitions incremental fetches read (the settled ones are not read)."""
    requests: dict[str, int] = field(default_factory=dict)
    """Fetch requests by context: full, incremental, sessionless, error."""
    request_partitions: dict[str, int] = field(default_factory=dict)
    """Partitions listed in those requests (an incremental fetch lists only what changed)."""

    def count(self, kind: str, partitions: int) -> None:
        self.requests[kind] = self.requests.get(kind, 0) + 1
        self.request_partitions[kind] = self.request_partitions.get(kind, 0) + partitions


class FetchSessionCacheShard:
    def __init__(
        self,
        max_entries: int,
        eviction_ms: int,
        stats: FetchSessionStats,
        id_range: int,
        shard_num: int,
        listeners: Purgatory | None = None,
    ) -> None:
        self.listeners = listeners
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self.stats = stats
        self.id_range = id_range
        self.shard_num = shard_num
        self.sessions: dict[int, FetchSession] = {}
        self.num_partitions = 0

    def _new_session_id(self) -> int:
        while True:
            session_id = random.randrange(
                max(1, self.shard_num * self.id_range), (self.shard_num + 1) * self.id_range
            )
            if session_id not in self.sessions:
                return session_id

    def maybe_create_session(
        self,
        now_ms: int,
        privileged: bool,
        partitions: dict[PartitionKey, CachedPartition],
        uses_topic_ids: bool,
    ) -> int:
        """A new session's id, or INVALID_SESSION_ID if the shard is full and nothing may be evicted."""
        if len(self.sessions) >= self.max_entries and not self._try_evict(
            privileged, len(partitions), now_ms
        ):
            return INVALID_SESSION_ID
        session = FetchSession(
            self._new_session_id(),
            privileged,
            partitions,
            uses_topic_ids,
            now_ms,
            now_ms,
            next_epoch(INITIAL_EPOCH),
            listeners=self.listeners,
        )
        self.sessions[session.id] = session
        self.touch(session, now_ms)
        return session.id

    def _try_evict(self, privileged: bool, size: int, now_ms: int) -> bool:
        # A shard holds slots / NUM_SHARDS sessions (125 by default): a scan is cheap, and runs only when a full
        # shard gets a new session.
        if not self.sessions:
            return False
        stalest = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - stalest.last_used_ms > self.eviction_ms:
            self._evict(stalest)
            return True
        candidates = [
            s
            for s in self.sessions.values()
            if (s.evictable_by_privileged if privileged else s.evictable_by_all)
        ]
        if not candidates:
            return False
        least = min(candidates, key=FetchSession.evictable_key)
        # Kafka compares (privileged, size, 0) with the candidate's key: equal size never evicts (ids are > 0).
        if (privileged, size, 0) < least.evictable_key():
            return False
        self._evict(least)
        return True

    def _evict(self, session: FetchSession) -> None:
        self.remove(session.id)
        self.stats.evictions += 1

    def remove(self, session_id: int) -> FetchSession | None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self.num_partitions -= session.cached_size
            session.cached_size = -1
            session.close()
        return session

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """Mark the session used now; whether it is evictable is decided here, as Kafka does (by its age now)."""
        session.last_used_ms = now_ms
        if session.cached_size != -1:
            self.num_partitions -= session.cached_size
        session.cached_size = len(session.partitions)
        old = now_ms - session.creation_ms > self.eviction_ms
        session.evictable_by_privileged = not session.privileged or old
        session.evictable_by_all = old
        self.num_partitions += session.cached_size


class FetchSessionCache:
    def __init__(self, max_slots: int, eviction_ms: int, listeners: Purgatory | None = None) -> None:
        """`listeners`: the purgatory, whose wakes tell sessions which partitions an incremental fetch must read."""
        self.stats = FetchSessionStats()
        id_range = INT32_MAX // NUM_SHARDS
        self.shards = [
            FetchSessionCacheShard(max_slots // NUM_SHARDS, eviction_ms, self.stats, id_range, n, listeners)
            for n in range(NUM_SHARDS)
        ]
        self._counter = 0

    def shard_for(self, session_id: int) -> FetchSessionCacheShard | None:
        index = session_id // self.shards[0].id_range
        return self.shards[index] if 0 <= index < len(self.shards) else None

    def next_shard(self) -> FetchSessionCacheShard:
        """New sessions go to the shards in turn (Kafka's round robin)."""
        shard = self.shards[self._counter % len(self.shards)]
        self._counter = (self._counter + 1) % (2**31)
        return shard

    @property
    def size(self) -> int:
        return sum(len(shard.sessions) for shard in self.shards)

    @property
    def total_partitions(self) -> int:
        return sum(shard.num_partitions for shard in self.shards)


# ---- fetch contexts: what one Fetch request reads, and which partitions its answer carries -------------------------


class FetchContext:
    """Sessionless: the request's partitions, all answered; session id 0."""

    kind = "sessionless"

    def __init__(self, fetch_data: Sequence[CachedPartition]) -> None:
        self.fetch_data = fetch_data

    @property
    def error(self) -> ErrorCode:
        return ErrorCode.NONE

    def partitions(self) -> Sequence[CachedPartition]:
        return self.fetch_data

    def listen(self, cached: CachedPartition, tp: TopicPartition) -> None:
        """`cached` is about to be read as `tp` (an incremental fetch's session listens to it first)."""

    def respond(self, answers: Sequence[PartitionAnswer]) -> tuple[ErrorCode, int, list[bool]]:
        """(top-level error, session id, whether each partition of `partitions()` is in the response)."""
        return ErrorCode.NONE, INVALID_SESSION_ID, [True] * len(answers)


class SessionErrorContext(FetchContext):
    """The session is unknown, or the request's epoch or version does not fit it: nothing is read, the answer is the
    error alone, session id 0."""

    kind = "error"

    def __init__(self, error: ErrorCode) -> None:
        super().__init__(())
        self._error = error

    @property
    def error(self) -> ErrorCode:
        return self._error

    def respond(self, answers: Sequence[PartitionAnswer]) -> tuple[ErrorCode, int, list[bool]]:
        return self._error, INVALID_SESSION_ID, []


class FullFetchContext(FetchContext):
    """A full fetch asking for a session: every partition answered; the session (if the cache has room) is made of
    them and what they were told."""

    kind = "full"

    def __init__(
        self,
        fetch_data: Sequence[CachedPartition],
        cache: FetchSessionCache,
        clock: Clock,
        privileged: bool,
        uses_topic_ids: bool,
    ) -> None:
        super().__init__(fetch_data)
        self.cache = cache
        self.clock = clock
        self.privileged = privileged
        self.uses_topic_ids = uses_topic_ids

    def respond(self, answers: Sequence[PartitionAnswer]) -> tuple[ErrorCode, int, list[bool]]:
        partitions: dict[PartitionKey, CachedPartition] = {}
        for wanted, answer in zip(self.fetch_data, answers, strict=True):
            wanted.high_watermark = answer.high_watermark
            wanted.local_log_start_offset = answer.log_start_offset
            partitions[wanted.key] = wanted
        shard = self.cache.next_shard()
        session_id = shard.maybe_create_session(
            self.clock.monotonic_ms(), self.privileged, partitions, self.uses_topic_ids
        )
        return ErrorCode.NONE, session_id, [True] * len(answers)


class IncrementalFetchContext(FetchContext):
    """An incremental fetch: the unsettled partitions of the session are read (the others have nothing to answer,
    see FetchSession.unsettled); the answer carries those `must_respond` picks. `refresh` re-picks them after a
    wake of the session."""

    kind = "incremental"

    def __init__(self, session: FetchSession, request_epoch: int, stats: FetchSessionStats) -> None:
        super().__init__(session.to_read())
        self.session = session
        self.request_epoch = request_epoch
        self.stats = stats

    def refresh(self) -> Sequence[CachedPartition]:
        self.fetch_data = self.session.to_read()
        return self.fetch_data

    def listen(self, cached: CachedPartition, tp: TopicPartition) -> None:
        self.session.listen(cached, tp)

    def respond(self, answers: Sequence[PartitionAnswer]) -> tuple[ErrorCode, int, list[bool]]:
        session = self.session
        if session.epoch != next_epoch(self.request_epoch):
            # Another request of this session was answered while this one waited (a duplicate): as Kafka.
            return ErrorCode.INVALID_FETCH_SESSION_EPOCH, session.id, []
        included = []
        self.stats.incremental_partitions_read += len(answers)
        for cached, answer in zip(self.fetch_data, answers, strict=True):
            respond = cached.must_respond(answer)
            included.append(respond)
            if not respond and answer.settled:
                # Read just now (nothing ran since), or before a long poll in which no wake of the session came.
                session.settle(cached)
            if respond and len(answer.records) > 0 and session.partitions.get(cached.key) is cached:
                # To the end of the session's order: the partitions that got nothing are read first next time.
                session.move_to_end(cached)
        return ErrorCode.NONE, session.id, included


class FetchManager:
    """Turns a Fetch request's session fields into its FetchContext (Kafka's FetchManager.newContext)."""

    def __init__(self, cache: FetchSessionCache, clock: Clock) -> None:
        self.cache = cache
        self.clock = clock

    @property
    def stats(self) -> FetchSessionStats:
        return self.cache.stats

    def new_context(
        self,
        *,
        session_id: int,
        epoch: int,
        privileged: bool,
        uses_topic_ids: bool,
        fetch_data: list[CachedPartition],
        forgotten: list[PartitionKey],
    ) -> FetchContext:
        context = self._new_context(session_id, epoch, privileged, uses_topic_ids, fetch_data, forgotten)
        self.stats.count(context.kind, len(fetch_data))
        return context

    def _new_context(
        self,
        session_id: int,
        epoch: int,
        privileged: bool,
        uses_topic_ids: bool,
        fetch_data: list[CachedPartition],
        forgotten: list[PartitionKey],
    ) -> FetchContext:
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id != INVALID_SESSION_ID:
                # A full fetch naming a session closes it.
                shard = self.cache.shard_for(session_id)
                if shard is not None:
                    shard.remove(session_id)
            if epoch == FINAL_EPOCH:
                return FetchContext(fetch_data)
            return FullFetchContext(fetch_data, self.cache, self.clock, privileged, uses_topic_ids)
        shard = self.cache.shard_for(session_id)
        session = shard.sessions.get(session_id) if shard is not None else None
        if shard is None or session is None:
            return SessionErrorContext(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return SessionErrorContext(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_topic_ids:
            return SessionErrorContext(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
        session.update(fetch_data, forgotten)
        if not session.partitions:
            # Its last partition forgotten: the session ends, and this fetch is answered without one.
            shard.remove(session_id)
            return FetchContext(fetch_data)
        shard.touch(session, self.clock.monotonic_ms())
        session.epoch = next_epoch(session.epoch)
        return IncrementalFetchContext(session, epoch, self.stats)
